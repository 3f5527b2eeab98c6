// The local executor: runs a sweep's unfinished cells N at a time, each as a child
// `lengen sweep run-cell DIR I` whose output goes to logs/<cell>.log (with --members K, up to K
// cells of one config, fresh or stopped at one step, in one child, `run-cell DIR I J …`,
// logging to the first's log).
// Children get their own process group, so a terminal's Ctrl-C reaches only the executor's process,
// which passes exactly one SIGTERM to each child per stop request (a second makes a child leave
// without its checkpoint) and waits for all of them: every child writes its checkpoint.

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include "lengen/engine/core_budget.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/sweep_run.h"
#include "lengen/engine/trainer.h"
#include "sweep/job_record.h"
#include "sweep/member_groups.h"
#include "sweep/mps.h"
#include "sweep/subprocess.h"

namespace lengen::engine {

namespace {

// The last line of a cell's log that says what went wrong (the child printed it on stderr).
std::string lastError(const std::string& log)
{
    std::ifstream in(log);
    std::string line, found;
    while (std::getline(in, line))
        if (line.rfind("lengen: error:", 0) == 0 || line.rfind("lengen: internal error:", 0) == 0)
            found = line.substr(line.find(':') + 2);
    return found;
}

std::string duration(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0)
        return "?";
    const long s = std::lround(seconds);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    return buf;
}

using Group = std::vector<const SweepCell*>;  // the cells one child runs (members, or one)

struct Child {
    pid_t pid = 0;
    Group cells;
    std::chrono::steady_clock::time_point started;
    std::string device;
    int cores = 0;  // taken from LocalSweepOptions::cores, given back when it ends
};

// The devices cells share and how many are running on each; a new cell takes the least busy
// (the first of equals), so K x G cells start K on each of G GPUs.
class DeviceSlots {
public:
    explicit DeviceSlots(std::vector<std::string> devices) : m_devices(std::move(devices))
    {
        for (const auto& d : m_devices)
            m_running[d] = 0;
    }
    std::string take()
    {
        const std::string* best = &m_devices.front();
        for (const auto& d : m_devices)
            if (m_running[d] < m_running[*best])
                best = &d;
        ++m_running[*best];
        return *best;
    }
    void give(const std::string& device) { --m_running[device]; }
    size_t size() const { return m_devices.size(); }
    // " on cuda:0, cuda:1" (nothing for one unnamed device: each cell's default).
    std::string describe() const
    {
        if (m_devices.size() == 1 && m_devices.front().empty())
            return "";
        std::string text;
        for (const auto& d : m_devices)
            text += (text.empty() ? " on " : ", ") + d;
        return text;
    }

private:
    std::vector<std::string> m_devices;
    std::map<std::string, int> m_running;
};

// Cells in groups of up to `k`: a fresh cell of a config members train joins the first open
// group of its config, seed apart, and a stopped one the group of its config stopped at its
// step (member_groups.h); every other cell is a group of its own.
std::vector<Group> groupMembers(const SweepPaths& paths, const std::vector<const SweepCell*>& cells,
                                int k)
{
    std::vector<Group> groups;
    std::vector<std::optional<sweep::MemberStart>> starts;  // per group: how its cells start
    for (const auto* cell : cells) {
        auto start = k > 1 ? sweep::memberStart(paths, cell->name) : std::nullopt;
        bool joined = false;
        for (size_t g = 0; start && g < groups.size() && !joined; ++g)
            if (starts[g] && int(groups[g].size()) < k && sweep::oneGroup(*starts[g], *start)) {
                groups[g].push_back(cell);
                joined = true;
            }
        if (!joined) {
            groups.push_back({cell});
            starts.push_back(std::move(start));
        }
    }
    return groups;
}

// How one member of a child's cells ended, from its cell.json: its exit code (0 done, 130
// stopped, a failure's own) and, for a failure, its message.
std::pair<int, std::string> memberEnd(const SweepPaths& paths, const SweepCell& cell, pid_t child,
                                      int childCode)
{
    auto st = readCellState(paths, cell.name);
    if (st && st->pid != child)  // an earlier run's state: the child never reached this cell
        st.reset();
    if (st && st->stage == "done")
        return {0, ""};
    if (st && st->stage == "stopped")
        return {exitCodeFor(ErrorKind::Interrupted), ""};
    if (st && st->stage == "failed")
        return {st->exitCode ? st->exitCode : 1, st->message};
    // It never reached an end of its own: the process died under it.
    return {childCode ? childCode : 1, "the members' process ended (exit " +
                                           std::to_string(childCode) + ") before this cell did"};
}

pid_t spawnCell(const std::string& exe, const SweepPaths& paths, const Group& cells, int threads,
                const std::string& device, const std::vector<std::string>& extraEnv)
{
    const SweepCell& cell = *cells.front();
    sweep::LoggedChild child;
    child.exe = exe;
    child.argv = {"lengen", "sweep", "run-cell", paths.root};
    for (const auto* c : cells)
        child.argv.push_back(std::to_string(c->index));
    child.argv.insert(child.argv.end(), {"--threads", std::to_string(threads)});
    for (size_t i = 1; i < cells.size(); ++i)  // one log for the members: say where it is
        std::ofstream(paths.logFile(cells[i]->name))
            << "trained as a member with " << cell.name << ": see " << paths.logFile(cell.name)
            << "\n";
    if (!device.empty())
        child.argv.insert(child.argv.end(), {"--device", device});
    child.extraEnv = extraEnv;  // MPS's pipe, when asked
    child.logFile = paths.logFile(cell.name);
    pid_t pid = 0;
    if (const int rc = sweep::spawnLogged(child, pid); rc != 0)
        throw Error(ErrorKind::Io,
                    "cannot start " + exe + " for cell " + cell.name + ": " + std::strerror(rc));
    return pid;
}

class LocalExecutor final : public SweepExecutor {
public:
    LocalExecutor(const std::string& dir, LocalSweepOptions options)
        : SweepExecutor(dir), m_options(std::move(options))
    {
        if (m_options.executable.empty())
            m_options.executable = lengenExecutable();
        if (m_options.executable.empty())
            throw Error(ErrorKind::Io, "cannot find the lengen executable to run the cells with");
        if (m_options.devices.empty())  // the studio and tests give `device` alone
            m_options.devices = resolveSweepDevices(m_options.device);
        if (m_options.cellsPerDevice > 0 && m_options.jobs > 0)
            throw Error(ErrorKind::Usage,
                        "--jobs and --cells-per-device both say how many cells run at once: "
                        "give one of them");
        if (m_options.mps) {
            for (const auto& d : m_options.devices)
                if (d.rfind("cuda", 0) != 0)
                    throw Error(
                        ErrorKind::Config,
                        "--mps shares GPUs between cells, and " +
                            (d.empty() ? std::string("no GPU is usable here") : d + " is not one") +
                            ": run the sweep without --mps");
            if (m_options.mpsControl.empty())
                m_options.mpsControl = sweep::findMpsControl();
            if (m_options.mpsControl.empty())
                throw Error(ErrorKind::Config,
                            "--mps: nvidia-cuda-mps-control is not on PATH (it comes with the "
                            "NVIDIA driver); run the sweep without --mps");
        }
    }

    SweepRunSummary submit(RunControl& control, SweepObserver& obs) override;

private:
    // One submit: its cells, how many at once with how many threads on which devices, and the
    // state of the loop that starts and collects them.
    struct Pass {
        Pass(const std::string& dir, std::vector<const SweepCell*> cells,
             const LocalSweepOptions& o);
        ~Pass() { noteWaiting(0); }
        Pass(const Pass&) = delete;
        Pass& operator=(const Pass&) = delete;
        /// Tells the budget how many cells now wait for a core (what the studio shows).
        void noteWaiting(int cells)
        {
            if (budget)
                budget->addCellsWaiting(cells - waitingNoted);
            waitingNoted = cells;
        }
        SweepPaths paths;
        std::vector<Group> todo;  // a group per child
        int cells = 0;            // cells in `todo`
        DeviceSlots devices;
        CoreBudget* budget = nullptr;
        int jobs = 1, threads = 1;
        std::optional<sweep::MpsDaemon> mps;
        std::map<pid_t, Child> running;
        size_t next = 0;
        int forwarded = 0, ended = 0;
        double cellSeconds = 0;
        std::chrono::steady_clock::time_point lastReport = std::chrono::steady_clock::now();
        bool saidWaiting = false;
        int waitingNoted = 0;
    };
    /// Chooses the cells, clears their old cancel marks and records the submission (its id in
    /// `recordId`).
    std::vector<const SweepCell*> takeCells(SweepRunSummary& summary, std::string& recordId);
    void sayPlan(const Pass& pass, const SweepRunSummary& summary, SweepObserver& obs) const;
    void startCells(Pass& pass, const RunControl& control, SweepRunSummary& summary,
                    SweepObserver& obs);
    void forwardStops(Pass& pass, const RunControl& control, SweepRunSummary& summary,
                      SweepObserver& obs) const;
    bool reapOne(Pass& pass, SweepRunSummary& summary, SweepObserver& obs);

    // Stop requests so far: the control's cancel, or each extra one counted by the
    // CLI's signal handler (a second Ctrl-C: leave at once).
    int stopRequests(const RunControl& control) const
    {
        const int counted = m_options.stopCount ? int(*m_options.stopCount) : 0;
        return std::max(counted, control.isCancelRequested() ? 1 : 0);
    }

    // Counts how a cell's process ended (done, cancelled, stopped, failed) and says so; true
    // when it finished (its time feeds the ETA).
    static bool cellEnded(const SweepPaths& paths, const std::string& name, int code, double secs,
                          SweepRunSummary& summary, SweepObserver& obs,
                          const std::string& failure = {})
    {
        const int interrupted = exitCodeFor(ErrorKind::Interrupted);
        if (code == 0) {
            ++summary.finished;
            obs.onMessage(name + " done (" + duration(secs) + ")");
            return true;
        }
        if (code == interrupted && sweep::cancelMarked(paths, name)) {
            ++summary.cancelledHere;
            obs.onMessage(name +
                          " cancelled (checkpoint written); running the sweep again resumes it");
        } else if (code == interrupted) {
            ++summary.stopped;
            obs.onMessage(name + " stopped; running the sweep again resumes it");
        } else {
            ++summary.failed;
            const std::string why = failure.empty() ? lastError(paths.logFile(name)) : failure;
            obs.onMessage(name + " failed (exit " + std::to_string(code) +
                          "): " + (why.empty() ? "see " + paths.logFile(name) : why));
        }
        return false;
    }

    // One line: each running cell's stage and step, from the cells' files.
    void reportRunning(const std::map<pid_t, Child>& running, SweepObserver& obs) const
    {
        const auto all = states();
        std::string line;
        for (const auto& [p, c] : running)
            for (const auto* cell : c.cells) {
                const auto& s = all[size_t(cell->index)];
                line += "  " + cell->name + " " + s.stage + " " + std::to_string(s.step) + "/" +
                        std::to_string(s.totalSteps);
            }
        obs.onRunning(line);
    }

    LocalSweepOptions m_options;
};

// However submit leaves (done, stopped, thrown), its record says it ended: in the studio the
// process lives on, and the cells it never started must not read "queued" (by pid) forever.
struct EndRecord {
    std::string root, id;
    ~EndRecord()
    {
        if (!id.empty())
            sweep::markSubmissionEnded(root, id);
    }
};

std::vector<const SweepCell*> LocalExecutor::takeCells(SweepRunSummary& summary,
                                                       std::string& recordId)
{
    const SweepPaths paths{m_dir};
    const auto takenAt = m_options.clearMarksBefore.value_or(std::chrono::system_clock::now());
    const auto todo = chooseCells(states(), m_options.retryFailed, summary);
    // Taken again: a cell `sweep cancel` marked before this run began runs now. The record lets
    // any process find the cells this executor holds (sweep_jobs.h) until it ends.
    std::vector<int> taken;
    for (const auto* cell : todo) {
        sweep::clearCancelMark(paths, cell->name, takenAt);
        taken.push_back(cell->index);
    }
    if (todo.empty())
        return todo;
    sweep::Submission record;
    record.executor = "local";
    record.jobId = sweep::hostName() + ":" + std::to_string(::getpid());
    record.cells = taken;
    sweep::recordSubmission(m_dir, record);
    recordId = record.jobId;
    return todo;
}

LocalExecutor::Pass::Pass(const std::string& dir, std::vector<const SweepCell*> taken,
                          const LocalSweepOptions& o)
    : paths{dir}, todo(groupMembers(paths, taken, o.members)), cells(int(taken.size())),
      devices(o.devices), budget(o.cores.get())
{
    const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
    const int atOnce = o.cellsPerDevice > 0 ? o.cellsPerDevice * int(devices.size())
                       : o.jobs > 0         ? o.jobs
                                            : cores;
    jobs = std::max(1, std::min<int>(atOnce, int(std::max<size_t>(todo.size(), 1))));
    threads = o.threadsPerJob > 0 ? o.threadsPerJob : std::max(1, cores / jobs);
}

void LocalExecutor::sayPlan(const Pass& pass, const SweepRunSummary& summary,
                            SweepObserver& obs) const
{
    const int perDevice = m_options.cellsPerDevice;
    obs.onMessage(
        "sweep " + m_index.name + ": " + std::to_string(summary.cells) +
        " cells: " + std::to_string(summary.done) + " done, " + std::to_string(summary.elsewhere) +
        " running elsewhere" + (summary.heldBy.empty() ? "" : " (" + heldByText(summary) + ")") +
        ", " + std::to_string(summary.failedBefore) + " failed before" +
        (summary.failedBefore && !m_options.retryFailed ? " (retry failed cells to run them again)"
                                                        : "") +
        ", " + std::to_string(pass.cells) + " to run" +
        (pass.todo.size() < size_t(pass.cells)
             ? " (" + std::to_string(pass.todo.size()) + " processes: cells of one config, " +
                   "fresh or stopped at one step, train as members of one batched model)"
             : "") +
        ", " + std::to_string(pass.jobs) + " at a time" +
        (perDevice > 0 ? " (" + std::to_string(perDevice) + " per device)" : "") +
        pass.devices.describe() + " with " + std::to_string(pass.threads) + " thread" +
        (pass.threads == 1 ? "" : "s") + " each; logs in " + m_dir + "/logs");
}

// Starts cells while slots, cores and cells are left and no stop was asked; a cell `sweep
// cancel` marked meanwhile is counted and skipped.
void LocalExecutor::startCells(Pass& pass, const RunControl& control, SweepRunSummary& summary,
                               SweepObserver& obs)
{
    const auto position = [&] {
        return "[" + std::to_string(pass.next) + "/" + std::to_string(pass.todo.size()) + "] ";
    };
    if (stopRequests(control))
        pass.noteWaiting(0);  // what waits will not start
    while (!stopRequests(control) && int(pass.running.size()) < pass.jobs &&
           pass.next < pass.todo.size()) {
        // The cores the front end's jobs share: a cell takes up to its threads' worth and runs
        // with what it got, or waits while none is free.
        int took = 0;
        if (pass.budget && !(took = pass.budget->tryTakeUpTo(pass.threads))) {
            if (!pass.saidWaiting)
                obs.onMessage("waiting for a free core (" + std::to_string(pass.budget->inUse()) +
                              " of " + std::to_string(pass.budget->limit()) +
                              " in use by other jobs)");
            pass.saidWaiting = true;
            pass.noteWaiting(
                std::min(pass.jobs - int(pass.running.size()), int(pass.todo.size() - pass.next)));
            return;
        }
        pass.saidWaiting = false;
        pass.noteWaiting(0);
        Group group;
        std::string names;
        for (const auto* cell : pass.todo[pass.next++]) {
            if (sweep::cancelMarked(pass.paths, cell->name)) {  // `sweep cancel` from any shell
                ++summary.cancelledHere;
                ++pass.ended;
                obs.onMessage(position() + cell->name + " cancelled; not started");
                obs.onCells(pass.ended, summary.taken, -1);
                continue;
            }
            group.push_back(cell);
            names += (names.empty() ? "" : ", ") + cell->name;
        }
        if (group.empty()) {
            if (pass.budget)
                pass.budget->give(took);
            continue;
        }
        const std::string device = pass.devices.take();
        pid_t pid = 0;
        try {
            pid = spawnCell(m_options.executable, pass.paths, group,
                            pass.budget ? took : pass.threads, device,
                            pass.mps ? pass.mps->environment() : std::vector<std::string>{});
        } catch (...) {
            if (pass.budget)
                pass.budget->give(took);  // not in `running`: nobody else gives them back
            throw;
        }
        pass.running[pid] = {pid, group, std::chrono::steady_clock::now(), device, took};
        obs.onMessage(position() + names + " started" +
                      (group.size() > 1 ? " as members of one batched model" : "") +
                      (device.empty() ? "" : " on " + device));
    }
}

// One SIGTERM to every running cell per stop request: the first stops every cell cleanly.
void LocalExecutor::forwardStops(Pass& pass, const RunControl& control, SweepRunSummary& summary,
                                 SweepObserver& obs) const
{
    const int wanted = stopRequests(control);
    if (wanted <= pass.forwarded)
        return;
    for (const auto& [pid, c] : pass.running)
        ::kill(pid, SIGTERM);
    if (!pass.forwarded)
        obs.onMessage("stopping: each running cell writes its checkpoint");
    pass.forwarded = wanted;
    summary.cancelled = true;
}

// Collects one cell that ended, if any: its device and cores go back, it is counted and said.
bool LocalExecutor::reapOne(Pass& pass, SweepRunSummary& summary, SweepObserver& obs)
{
    // Only our own cells: in the studio other children of this process (QProcess, the
    // scheduler's clients) must keep their exit statuses.
    int status = 0;
    pid_t pid = 0;
    for (const auto& [p, c] : pass.running)
        if (::waitpid(p, &status, WNOHANG) == p) {
            pid = p;
            break;
        }
    const auto it = pid > 0 ? pass.running.find(pid) : pass.running.end();
    if (it == pass.running.end())
        return false;
    const Child child = it->second;
    pass.running.erase(it);
    pass.devices.give(child.device);
    if (pass.budget)
        pass.budget->give(child.cores);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - child.started).count();
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    for (const auto* cell : child.cells) {
        ++pass.ended;
        // Members share one exit code: each cell's own outcome is in its cell.json.
        const auto [cellCode, why] = child.cells.size() > 1
                                         ? memberEnd(pass.paths, *cell, child.pid, code)
                                         : std::pair(code, "");
        if (cellEnded(pass.paths, cell->name, cellCode, secs, summary, obs, why))
            pass.cellSeconds += secs;  // members: each its process's whole time
    }
    // Processes left (a group of members is one): the mean seconds a finished cell's process
    // took, times those left, over the processes at once.
    const size_t left = pass.todo.size() - pass.next + pass.running.size();
    obs.onCells(pass.ended, summary.taken,
                summary.finished ? pass.cellSeconds / summary.finished * double(left) / pass.jobs
                                 : -1);
    return true;
}

SweepRunSummary LocalExecutor::submit(RunControl& control, SweepObserver& obs)
{
    SweepRunSummary summary;
    EndRecord endRecord{m_dir, {}};
    Pass pass(m_dir, takeCells(summary, endRecord.id), m_options);
    sayPlan(pass, summary, obs);
    obs.onCells(0, summary.taken, -1);
    // Started before the first cell and quit after the last has ended (children are waited for
    // below, also when something throws).
    if (m_options.mps && !pass.todo.empty()) {
        pass.mps.emplace(m_options.mpsControl);
        obs.onMessage("MPS: the cells share each GPU through a private MPS daemon (" +
                      pass.mps->pipeDirectory() + ")");
    }
    try {
        while (true) {
            startCells(pass, control, summary, obs);
            if (pass.running.empty() && (pass.next >= pass.todo.size() || stopRequests(control)))
                break;
            if (!pass.running.empty()) {
                forwardStops(pass, control, summary, obs);
                if (reapOne(pass, summary, obs))
                    continue;
            }
            // Nothing ended (or every core is another job's): look again shortly.
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            if (const auto now = std::chrono::steady_clock::now();
                now - pass.lastReport > std::chrono::seconds(30)) {
                pass.lastReport = now;
                reportRunning(pass.running, obs);
            }
        }
    } catch (...) {
        // Whatever went wrong here (a cell that cannot start, a file that cannot be read), the
        // cells already running stop with their checkpoints and are waited for, not orphaned.
        for (const auto& [pid, c] : pass.running)
            ::kill(pid, SIGTERM);
        for (const auto& [pid, c] : pass.running) {
            int status = 0;
            ::waitpid(pid, &status, 0);
            if (pass.budget)
                pass.budget->give(c.cores);
        }
        throw;
    }
    return summary;
}

}  // namespace

std::unique_ptr<SweepExecutor> makeLocalExecutor(const std::string& dir, LocalSweepOptions options)
{
    return std::make_unique<LocalExecutor>(dir, std::move(options));
}

}  // namespace lengen::engine
