#pragma once
// What a sweep folder remembers of its jobs (docs/sweep-format.md), written by the executors and
// read by sweep_jobs.cpp, so that any process can rebuild the jobs and act on them:
//   jobs.json                  one entry per submission: executor ("local" | "slurm"), its job
//                              id, the cells it took, when, the submitting host and pid, and
//                              when a local executor returned
//   cells/<cell>/cancel.json   `sweep cancel` asked this cell to end; an executor skips it, and
//                              the next one that takes the cell removes the mark
// Both are written whole to a temporary name and renamed; jobs.json's read-modify-write holds
// an flock on jobs.json.lock, so two submissions at once both stay listed.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "lengen/engine/jobs.h"
#include "lengen/engine/sweep.h"

namespace lengen::engine::sweep {

struct Submission {
    std::string executor;     ///< "local" or "slurm"
    std::string jobId;        ///< Slurm's array job id; a local executor's "<host>:<pid>"
    std::vector<int> cells;   ///< the cell indices it took
    std::string submittedAt;  ///< ISO 8601, UTC
    std::string host;         ///< where it was submitted from
    std::int64_t pid = 0;     ///< the submitting process (a local executor runs its cells)
    std::string endedAt;      ///< a local executor that returned ("" while it runs, or crashed)
};

/// The sweep folder of `dir` (itself or its parent holding sweep.yaml) as an absolute, normal
/// path without a trailing slash: the one spelling the records and a scheduler's jobs (which run
/// in another working directory, maybe on another machine) use.
std::string absoluteRoot(const std::string& dir);

/// This machine's host name ("" when unknown).
std::string hostName();
/// Whether process `pid` lives on this host (a pid of another host: unknown, so true).
bool processAlive(const std::string& host, std::int64_t pid);

/// Every submission, oldest first: jobs.json, and slurm/submitted.json of sweeps submitted
/// before jobs.json existed. A damaged file gives none of its entries and a `note`.
std::vector<Submission> readSubmissions(const std::string& root, std::string* note = nullptr);
/// Appends one (filling submittedAt, host and pid when empty). Error(Io) naming the file.
void recordSubmission(const std::string& root, Submission s);
/// A local executor returned: its entries (by job id) get `ended_at`, so the cells it took and
/// never started no longer read "queued" while its process (the studio) lives on. Never throws.
void markSubmissionEnded(const std::string& root, const std::string& jobId) noexcept;
/// The latest submission that took `cell`, or nullptr.
const Submission* latestFor(const std::vector<Submission>& all, int cell);

std::string cancelMarkPath(const SweepPaths& paths, const std::string& cell);
bool cancelMarked(const SweepPaths& paths, const std::string& cell);
void markCancelled(const SweepPaths& paths, const std::string& cell, const std::string& by);
/// Removes a mark written before `takenAt` (when an executor began choosing cells): a new run
/// takes a cancelled cell again, but a `sweep cancel` that lands while it starts still holds.
void clearCancelMark(const SweepPaths& paths, const std::string& cell,
                     std::chrono::system_clock::time_point takenAt);

}  // namespace lengen::engine::sweep
