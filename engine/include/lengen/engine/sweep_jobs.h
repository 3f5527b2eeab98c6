#pragma once
// A sweep cell's job: one concept for `lengen sweep status | cancel`, the executors and the
// studio's Sweeps tab. A job is rebuilt from the sweep folder alone (jobs.json, cell.json,
// run.h5, the cancel marks; docs/sweep-format.md), so any process can find the jobs another
// process submitted, read their state and cancel them. Qt-free, plain values.
//
// State, merged in this order (first that applies):
//   failed / done          the cell's files (cell.json, run.h5, analysis.h5)
//   running                its process is alive, or the scheduler runs it
//   requeued               the scheduler holds it again after a checkpoint
//   cancelled              `sweep cancel` marked it (cells/<cell>/cancel.json)
//   pending                queued by a live executor or the scheduler, or never taken
//   stopped                checkpointed and left (Ctrl-C); the next run resumes it

#include <map>
#include <string>
#include <vector>

#include "lengen/engine/sweep.h"

namespace lengen::engine {

/// Merges the jobs recorded in the folder and what the scheduler said of the cells
/// (`scheduler`: cell index -> Slurm's state, as slurmCellStates answers) into `statuses`, as
/// sweepStatus read them from the files. Asks no scheduler: the studio merges its last answer,
/// asked off the GUI thread, into fresh file states. The rule is the one above.
void mergeJobStates(const std::string& dir, std::vector<CellStatus>& statuses,
                    const std::map<int, std::string>& scheduler);

/// Every cell's status with its job merged in (executor, job id, the scheduler's state).
/// Asks squeue when a Slurm submission exists (20 s limit; `note` then says what Slurm said,
/// or why it gave no answer, in which case the files alone decide). Not for a GUI thread.
std::vector<CellStatus> sweepJobStatus(const std::string& dir, const SweepIndex& index,
                                       std::string* note = nullptr);

struct CancelReport {
    std::vector<std::string> cancelled;   ///< cells marked (pending, queued, stopped or running)
    std::vector<std::string> signalled;   ///< running here: SIGTERM sent (each checkpoints)
    std::vector<std::string> scancelled;  ///< Slurm tasks cancelled ("<job>_<cell>")
    std::vector<std::string> ended;       ///< done or failed already: left alone
};
/// Cancels the named cells (empty: every cell not yet done or failed), from any process: marks
/// each (executors skip marked cells), sends one SIGTERM to a cell process alive on this host
/// (it finishes its step and writes its checkpoint), asks a training on another host through
/// its run's stop request (run_control.h), and scancels the Slurm tasks holding them.
/// Error(Usage) for a name not in the sweep; Error(Scheduler) when scancel fails.
CancelReport cancelSweepCells(const std::string& dir, const std::vector<std::string>& cells);

/// Waits up to `seconds` until none of the named cells (empty: all) is running, requeued or
/// queued by a live executor or the scheduler; looks once a second. False on time-out.
bool waitForSweepCells(const std::string& dir, const std::vector<std::string>& cells,
                       double seconds);

}  // namespace lengen::engine
