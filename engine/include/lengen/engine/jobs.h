#pragma once
// Jobs as every process sees them (issues 39, 53). A job is one kind of work on one subject:
// each kind is one row of jobKindTable() (its name, whether it keeps cores busy, the units its
// progress counts), and a job another process runs is found from its files alone, as a
// JobRecord: trainings whose writer lock a live process holds (run_file.h), evaluations and
// probes that hold their run's analysis marker (AnalysisJobMarker), and the cells of sweep
// folders that are running, queued or requeued (sweep_jobs.h: the cell files merged with
// squeue). `lengen jobs` and the studio's Jobs panel read the same records; no registry exists
// beside the files.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lengen::engine {

/// The kinds of job. To add one: a row in jobKindTable() (src/jobs_table.cpp) and its runner.
enum class JobKindId { Training, Evaluation, Probe, Export, Import, Sweep, SweepCell };

struct JobKindRow {
    JobKindId kind;
    const char* name;   ///< as every front end says it: "training", "evaluation", "sweep cell", …
    bool cpuHeavy;      ///< counts against a concurrent-jobs limit (a sweep cell counts its threads)
    const char* units;  ///< what its progress and result count: "steps", "methods", "cells", …
};
const std::vector<JobKindRow>& jobKindTable();
const JobKindRow& jobKindRow(JobKindId kind);
/// The kind a name names (jobKindRow(k).name), or nullopt.
std::optional<JobKindId> jobKindNamed(const std::string& name);

/// One job found under some folders, run by another process (or by this one: `holder` says).
struct JobRecord {
    JobKindId kind = JobKindId::Training;
    /// running, or a sweep cell's running / pending / requeued; Slurm's own state (PENDING,
    /// RUNNING) is `schedulerState`
    std::string state;
    std::string subject;        ///< the run.h5, or the sweep folder of a cell
    std::string cell;           ///< a sweep cell's name ("" otherwise)
    std::string holder;         ///< "<host>:<pid>" of the process, or Slurm's "<job>_<task>"
    std::string schedulerState; ///< what squeue says of a Slurm cell ("" for local work)
    std::int64_t step = 0, totalSteps = 0;  ///< a training's steps (a cell's training too)
    double lastLoss = 0;        ///< NaN when nothing logged
    /// The key that names this job across polls: kind, subject, cell and holder.
    std::string key() const;
    /// Whether `holder` is this process (host and pid).
    bool heldHere() const;
};

/// Every job under `folders` (searched recursively; unreadable parts skipped). `note` collects
/// what could not be asked (a scheduler that did not answer).
std::vector<JobRecord> findJobs(const std::vector<std::string>& folders, std::string* note = nullptr);

/// "<host>:<pid>" of this process, as job records and lock files name holders.
std::string thisHolder();

/// Held by an evaluation or probes for their whole run: a lock file beside the run,
/// `.<kind>-<pid>-<n>.lock` in its folder, so that findJobs sees analyses another process
/// runs (the analysis file's own lock is held only while a result is written). Best effort: a
/// folder that takes no file just leaves the job unlisted.
class AnalysisJobMarker {
public:
    AnalysisJobMarker(const std::string& runFile, JobKindId kind);
    ~AnalysisJobMarker();
    AnalysisJobMarker(const AnalysisJobMarker&) = delete;
    AnalysisJobMarker& operator=(const AnalysisJobMarker&) = delete;

private:
    struct Lock;
    std::unique_ptr<Lock> m_lock;
};

}  // namespace lengen::engine
