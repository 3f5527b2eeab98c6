#pragma once
// What runs under some folders, found from the files alone (`lengen jobs`): trainings whose
// writer lock a live process holds (run_file.h), and the cells of sweep folders that are
// running, queued or requeued (sweep_jobs.h: the cell files merged with squeue). The studio and
// the CLI hold no registry of their own to consult: a job is visible to every process through
// its files.

#include <cstdint>
#include <string>
#include <vector>

namespace lengen::engine {

struct FoundJob {
    std::string kind;          ///< "training" or "sweep cell"
    std::string state;         ///< running, or a sweep cell's: running, pending (queued), requeued
    std::string subject;       ///< the run.h5, or "<sweep folder> <cell>"
    std::string holder;        ///< "<host>:<pid>" of the writer or cell process, or Slurm's "<job>_<task>"
    std::int64_t step = 0, totalSteps = 0;
    double lastLoss = 0;       ///< NaN when nothing logged
};

/// Every job under `folders` (searched recursively; unreadable parts skipped). `note` collects
/// what could not be asked (a scheduler that did not answer).
std::vector<FoundJob> findJobs(const std::vector<std::string>& folders, std::string* note = nullptr);

}  // namespace lengen::engine
