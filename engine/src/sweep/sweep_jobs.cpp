// Jobs rebuilt from the sweep folder: merged states, cancel and wait (sweep_jobs.h).

#include "lengen/engine/sweep_jobs.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "lengen/engine/errors.h"
#include "lengen/engine/run_control.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep_run.h"
#include "sweep/job_record.h"
#include "sweep/subprocess.h"

namespace fs = std::filesystem;

namespace lengen::engine {

namespace {

bool slurmRuns(const std::string& s)
{
    return s == "RUNNING" || s == "COMPLETING" || s == "CONFIGURING" || s == "SUSPENDED" ||
           s == "STAGE_OUT";
}

// The cell indices named (all when `names` is empty). Error(Usage) for a name not in the sweep.
std::vector<int> selectCells(const SweepIndex& index, const std::vector<std::string>& names,
                             const std::string& root)
{
    std::vector<int> out;
    if (names.empty()) {
        for (const auto& c : index.cells)
            out.push_back(c.index);
        return out;
    }
    for (const auto& n : names) {
        const auto it =
            std::find_if(index.cells.begin(), index.cells.end(), [&](const SweepCell& c) {
                return c.name == n || std::to_string(c.index) == n;
            });
        if (it == index.cells.end())
            throw Error(ErrorKind::Usage,
                        "cell '" + n + "' is not in " + root +
                            " (give a cell name as `sweep status` prints it, or its index)");
        out.push_back(it->index);
    }
    return out;
}

// What a submission says of a cell its files call pending, stopped or cancelled: Slurm's
// queue (running, requeued, pending), or a live `sweep run` that has not started it yet.
// Returns whether a live executor or the scheduler keeps it pending.
bool mergeSubmission(CellStatus& st, const sweep::Submission& sub,
                     const std::map<int, std::string>& scheduler)
{
    if (st.state == SweepCellState::Done || st.state == SweepCellState::Failed ||
        st.state == SweepCellState::Running)
        return false;
    if (sub.executor == "slurm") {
        const auto it = scheduler.find(st.cell->index);
        if (it == scheduler.end())
            return false;  // not in the queue (any more): the files said it all
        if (slurmRuns(it->second))
            st.state = SweepCellState::Running;
        else if (st.state == SweepCellState::Cancelled)
            return false;  // scancel was asked; the queue (or a cached answer) has not caught up
        else if (it->second.rfind("REQUEUE", 0) == 0 ||
                 (it->second == "PENDING" && (st.state == SweepCellState::Stopped || st.step > 0)))
            st.state = SweepCellState::Requeued;
        else
            st.state = SweepCellState::Pending;
        return st.state == SweepCellState::Pending;
    }
    if (st.state == SweepCellState::Pending && sub.endedAt.empty() &&
        sweep::processAlive(sub.host, sub.pid)) {
        st.message = "queued in `sweep run` (pid " + std::to_string(sub.pid) + ")";
        return true;
    }
    return false;
}

// The cell's job as `lengen jobs` says it, from the cell's merged state.
void settleCellJob(const std::string& root, CellStatus& st, bool held)
{
    JobRecord& j = *st.job;
    j.kind = JobKindId::SweepCell;
    j.subject = root;
    j.cell = st.cell->name;
    j.step = st.step;
    j.totalSteps = st.totalSteps;
    j.lastLoss = st.lastLoss;
    j.waitingFor.clear();
    switch (st.state) {
    case SweepCellState::Running: j.state = JobState::Running; break;
    case SweepCellState::Requeued:
        j.state = JobState::Queued;
        j.waitingFor = "requeued by the scheduler";
        break;
    case SweepCellState::Pending:
        j.state = held ? JobState::Queued : JobState::Cancelled;  // its executor left it
        if (held)
            j.waitingFor = st.message;
        break;
    case SweepCellState::Done: j.state = JobState::Finished; break;
    case SweepCellState::Failed: j.state = JobState::Failed; break;
    case SweepCellState::Stopped:
    case SweepCellState::Cancelled: j.state = JobState::Cancelled; break;
    }
}

// Marks the chosen cells cancelled (by: who, for the cell's message), all but the done or
// failed ones (report.ended); returns the indices marked, in report.cancelled by name too.
std::vector<int> markChosenCells(const SweepPaths& paths, const std::vector<CellStatus>& statuses,
                                 const std::vector<int>& chosen, const std::string& by,
                                 CancelReport& report)
{
    std::vector<int> marked;
    for (int i : chosen) {
        const auto& st = statuses[size_t(i)];
        const std::string& name = st.cell->name;
        if (st.state == SweepCellState::Done || st.state == SweepCellState::Failed) {
            report.ended.push_back(name);
            continue;
        }
        sweep::markCancelled(paths, name, by);
        report.cancelled.push_back(name);
        marked.push_back(i);
    }
    return marked;
}

// Members (sweep run --members) share one process: how many running cells each pid holds.
std::map<std::int64_t, int> runningCellsPerPid(const SweepPaths& paths,
                                               const std::vector<CellStatus>& statuses)
{
    std::map<std::int64_t, int> cellsOfPid;
    for (const auto& st : statuses)
        if (st.state == SweepCellState::Running)
            if (const auto c = readCellState(paths, st.cell->name); c && c->pid > 0)
                ++cellsOfPid[c->pid];
    return cellsOfPid;
}

// Stops a running cell just marked cancelled, outside Slurm: its training alone when it shares
// its process, else its process (SIGTERM here, a stop request from another node); the cells
// signalled go into report.signalled.
void stopMarkedCell(const SweepPaths& paths, const CellStatus& st,
                    std::map<std::int64_t, int>& cellsOfPid, const std::string& by,
                    CancelReport& report)
{
    const std::string& name = st.cell->name;
    const auto cell = readCellState(paths, name);
    const bool member = cell && cell->pid > 0 && cellsOfPid[cell->pid] > 1;
    if (member && cell->stage == "train" && !st.runFile.empty()) {
        // A SIGTERM would stop every member of its process: ask this one's training alone.
        try {
            requestStop(st.runFile, by);
            report.signalled.push_back(name);
        } catch (const Error&) {
            // not training any more: the mark stops it before its next stage
        }
    } else if (member) {
        // Its process is on another member's stage: the mark holds before this one's.
    } else if (cell && cell->pid > 0 && cell->host == sweep::hostName()) {
        if (::kill(pid_t(cell->pid), SIGTERM) == 0)
            report.signalled.push_back(name);
    } else if (!st.runFile.empty()) {
        try {  // on another node: the training sees the request in the shared folder
            requestStop(st.runFile, by);
            report.signalled.push_back(name);
        } catch (const Error&) {
            // not training any more (evaluating): the mark stops it at its next start
        }
    }
}

// Asks Slurm to cancel the tasks ("<job>_<cell>"); Error(Scheduler) when scancel cannot.
void scancelTasks(const std::vector<std::string>& tasks)
{
    std::vector<std::string> argv = {"scancel"};
    argv.insert(argv.end(), tasks.begin(), tasks.end());
    const auto r = sweep::runCommand(argv, 30);
    if (!r.started || r.timedOut || r.exitCode != 0)
        throw Error(ErrorKind::Scheduler,
                    std::string("scancel ") +
                        (!r.started   ? "was not found: is Slurm's client installed?"
                         : r.timedOut ? "did not answer: is slurmctld running?"
                                      : "failed: " + sweep::firstLine(r.output)) +
                        " (the cells are marked cancelled: no executor starts them again)",
                    r.output);
}

}  // namespace

void mergeJobStates(const std::string& dir, std::vector<CellStatus>& statuses,
                    const std::map<int, std::string>& scheduler)
{
    const std::string root = sweep::absoluteRoot(dir);
    const auto submissions = sweep::readSubmissions(root);
    for (auto& st : statuses) {
        const int i = st.cell->index;
        const auto* sub = sweep::latestFor(submissions, i);
        // No submission (a `sweep run-cell`), or a `sweep run` that ended since: the process
        // at work on the cell holds it (issue 70: "held by an unknown process").
        const bool executorGone =
            sub && sub->executor != "slurm" &&
            (!sub->endedAt.empty() || !sweep::processAlive(sub->host, sub->pid));
        const bool workerHolds = st.job && (!sub || executorGone);
        if (sub) {
            if (!st.job)
                st.job.emplace();
            if (!workerHolds)
                st.job->holder =
                    sub->executor == "slurm" ? sub->jobId + "_" + std::to_string(i) : sub->jobId;
            st.job->scheduled = sub->executor == "slurm";
            if (const auto it = sub->executor == "slurm" ? scheduler.find(i) : scheduler.end();
                it != scheduler.end())
                st.job->schedulerState = it->second;
        }
        const bool held = sub && mergeSubmission(st, *sub, scheduler);
        if (!st.job && st.state == SweepCellState::Running)
            st.job.emplace();  // its writer is alive but names no cell process
        if (st.job)
            settleCellJob(root, st, held);
    }
}

std::vector<CellStatus> sweepJobStatus(const std::string& dir, const SweepIndex& index,
                                       std::string* note)
{
    const std::string root = sweep::absoluteRoot(dir);
    auto statuses = sweepStatus(root, index);
    // squeue only for a sweep with Slurm submissions (slurmCellStates asks nothing otherwise).
    mergeJobStates(root, statuses, slurmCellStates(root, note));
    return statuses;
}

CancelReport cancelSweepCells(const std::string& dir, const std::vector<std::string>& names)
{
    const std::string root = sweep::absoluteRoot(dir);
    const SweepPaths paths{root};
    const auto index = readSweepIndex(root);
    const auto chosen = selectCells(index, names, root);
    const auto statuses = sweepJobStatus(root, index);
    const auto submissions = sweep::readSubmissions(root);
    const std::string by =
        "sweep cancel (" + sweep::hostName() + ":" + std::to_string(::getpid()) + ")";
    CancelReport report;
    std::vector<std::string> scancel;
    // The marks first, then the states read again to find whom to signal: a cell whose process
    // starts meanwhile either sees its mark (runSweepCell looks once its pid is published) or
    // was published before this second read, and gets its SIGTERM (issue 54: a cancel in the
    // first seconds of `sweep run` was said and ignored).
    const std::vector<int> marked = markChosenCells(paths, statuses, chosen, by, report);
    const auto now = marked.empty() ? statuses : sweepJobStatus(root, index);
    auto cellsOfPid = runningCellsPerPid(paths, now);
    for (int i : marked) {
        const auto& st = now[size_t(i)];
        const auto* sub = sweep::latestFor(submissions, i);
        if (sub && sub->executor == "slurm" && st.job && !st.job->schedulerState.empty()) {
            scancel.push_back(sub->jobId + "_" + std::to_string(i));
            continue;  // Slurm signals the task's processes itself
        }
        if (st.state == SweepCellState::Running)
            stopMarkedCell(paths, st, cellsOfPid, by, report);
    }
    if (!scancel.empty()) {
        scancelTasks(scancel);
        report.scancelled = scancel;
    }
    return report;
}

bool waitForSweepCells(const std::string& dir, const std::vector<std::string>& names,
                       double seconds)
{
    const std::string root = sweep::absoluteRoot(dir);
    const auto index = readSweepIndex(root);
    const auto chosen = selectCells(index, names, root);
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (true) {
        const auto statuses = sweepJobStatus(root, index);
        const bool busy = std::any_of(chosen.begin(), chosen.end(), [&](int i) {
            const auto& st = statuses[size_t(i)];
            return st.state == SweepCellState::Running || st.state == SweepCellState::Requeued ||
                   st.queued();
        });
        if (!busy)
            return true;
        if (std::chrono::steady_clock::now() >= until)
            return false;
        // Each look may ask squeue: once a second is enough for a person waiting.
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
}

}  // namespace lengen::engine
