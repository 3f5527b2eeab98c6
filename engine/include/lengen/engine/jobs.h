#pragma once
// Jobs as every process sees them (issues 39, 53). A job is one kind of work on one subject:
// each kind is one row of jobKindTable() (its name, whether it keeps cores busy, the units its
// progress and result count), and every job, whoever runs it, is one JobRecord:
//   * the studio's own jobs (widgets' RunController hands them out by id, holder this process);
//   * jobs another process runs, found from their files alone by findJobs: trainings whose
//     writer lock a live process holds (run_file.h), evaluations and probes that hold their
//     run's analysis marker (AnalysisJobMarker), and the cells of sweep folders that are
//     running, queued or requeued (sweep_jobs.h: the cell files merged with squeue).
// `lengen jobs` and the studio's Jobs panel read the same records; no registry exists beside
// the files.
//
// To add a kind: a JobKindId, its row in jobKindTable() (src/jobs_table.cpp), and its runner
// (a CLI command; in the studio an enqueue()d function returning a JobResult counted in the
// row's units). Every front end says a kind's name, progress and result, and offers its
// actions, from the row alone.

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lengen::engine {

enum class JobKindId { Training, Evaluation, Probe, Export, Import, Sweep, SweepCell };

/// What the studio can ask of another process's job of a kind: nothing, to stop (the request
/// `lengen stop` leaves, run_control.h) or to cancel (the mark `lengen sweep cancel` leaves).
enum class JobRequest { None, Stop, Cancel };

struct JobKindRow {
    JobKindId kind;
    const char* name;  ///< as every front end says it: "training", "evaluation", "sweep cell", …
    bool cpuHeavy;     ///< counts against a concurrent-jobs limit (a sweep cell counts its threads)
    const char* unit;  ///< what its progress and result count, one: "step", "method", "cell", …
    const char* units;  ///< … and many: "steps", "methods", "cells", …
    const char* verb;   ///< said after the count of a result ("computed", "written"; "" for steps)
    /// Another process's job, named from its subject (%1: the run's folder, the sweep's
    /// folder, the cell): "%1", "evaluation of %1", …
    const char* shownAs;
    bool pausable;       ///< the studio's own job can pause between steps (a training)
    bool oneAtATime;     ///< two of the kind never run at once in one studio (trainings)
    JobRequest foreign;  ///< what reaches another process's job of the kind
    /// Its progress counts units done of a total (a sweep's cells ended); otherwise stages,
    /// each one unit (an evaluation's methods, a probe run's probes).
    bool countsUnits;
};
const std::vector<JobKindRow>& jobKindTable();
const JobKindRow& jobKindRow(JobKindId kind);
/// The kind a name names (jobKindRow(k).name), or nullopt.
std::optional<JobKindId> jobKindNamed(const std::string& name);

enum class JobState { Queued, Running, Paused, Stopping, Finished, Cancelled, Failed };
/// "queued", "running", "paused", "stopping", "finished", "stopped", "failed"; a sweep cell's
/// queued state is "pending" (the word `sweep status` uses).
const char* jobStateName(JobState state, JobKindId kind = JobKindId::Training);
inline bool jobActive(JobState s)
{
    return s == JobState::Running || s == JobState::Paused || s == JobState::Stopping;
}
inline bool jobEnded(JobState s)
{
    return s == JobState::Finished || s == JobState::Cancelled || s == JobState::Failed;
}

/// What a job produced, counted in its kind's units (jobKindRow(kind).units): a training's
/// steps, an evaluation's methods stored, an export's files written, an import's runs, a
/// sweep's cells ended.
struct JobResult {
    std::int64_t done = 0;            ///< how many of the kind's units it did
    double finalLoss = std::nan("");  ///< a training's last logged loss (NaN: none logged)
    int cancelled = 0, failed = 0;    ///< a sweep's cells stopped or skipped, and failed
    /// What it did in its own words, where no count says it ("created 4 cells", "nothing to
    /// aggregate yet", "took no cell: 2 held by host:pid"); shown instead of the count.
    std::string said;
};
/// The result as the front ends say it: `said`, else the count in the kind's units and verb
/// ("1,200 steps, final loss 0.031", "3 methods computed", "2 cells ended, 1 failed"); a
/// stopped job "stopped after 900 steps, last logged loss L".
std::string jobResultText(JobKindId kind, const JobResult& result,
                          JobState how = JobState::Finished);
/// A running job's progress in the kind's units: "3 of 8 cells ended" for a kind that counts
/// units; else the stage's name with "(method 2 of 3)" when there are several, then where in the
/// stage it is, so a long stage shows it is alive (issue 80, defect 22): its part where it has
/// parts and the units done ("duplicated (probe 2 of 3): instruction position, 14 of 25").
std::string jobProgressText(JobKindId kind, const std::string& stageName, int stage, int stages,
                            std::int64_t done, std::int64_t total, const std::string& part = {});

/// One job: the studio's own (id > 0) or one found under some folders, run by another process.
struct JobRecord {
    std::uint64_t id = 0;  ///< the studio's job id; 0 for a job found on disk
    JobKindId kind = JobKindId::Training;
    JobState state = JobState::Queued;
    std::string label;            ///< what the studio calls it ("evaluate run-3"); "" when found
    std::string subject;          ///< the run.h5, or the sweep folder (a cell's or a sweep job's)
    std::string cell;             ///< a sweep cell's name ("" otherwise)
    std::string holder;           ///< "<host>:<pid>" of the process, or Slurm's "<job>_<task>"
    bool scheduled = false;       ///< a scheduler (Slurm) runs it: holder is "<job>_<task>"
    std::string schedulerState;   ///< what squeue says of a Slurm cell ("" for local work)
    std::string waitingFor;       ///< queued: why it has not started ("a free core", "requeued")
    bool waitingForCore = false;  ///< queued only because no core is free (the limit)
    double fraction = -1;         ///< 0..1; < 0 while unknown
    std::string
        progress;  ///< "1,200/15,000 steps", "ood_length (method 2 of 3)", "3 of 8 cells ended"
    double etaSeconds = -1;
    std::int64_t step = 0, totalSteps = 0;        ///< a training's steps (a cell's training too)
    double lastLoss = std::nan("");               ///< NaN when nothing logged
    std::int64_t startedAtMs = 0, endedAtMs = 0;  ///< epoch ms; 0 = not yet
    JobResult result;     ///< once it ended (a stopped job: what it did before)
    std::string message;  ///< how it ended (jobResultText), or why it failed
    bool active() const { return jobActive(state); }
    bool ended() const { return jobEnded(state); }
    /// The key that names this job across polls: kind, subject, cell and holder.
    std::string key() const;
    /// Whether `holder` is this process (host and pid).
    bool heldHere() const;
};

/// Every job under `folders` (searched recursively; unreadable parts skipped). `note` collects
/// what could not be asked (a scheduler that did not answer).
std::vector<JobRecord> findJobs(const std::vector<std::string>& folders,
                                std::string* note = nullptr);

/// "<host>:<pid>" of this process, as job records and lock files name holders.
std::string thisHolder();

/// Held by an evaluation or probes for their whole run: a lock file beside the run,
/// `.lengen-job-<kind>-<pid>-<n>.lock` in its folder, so that findJobs sees analyses another
/// process runs (the analysis file's own lock is held only while a result is written). Best
/// effort: a folder that takes no file just leaves the job unlisted.
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
