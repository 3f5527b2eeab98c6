// `lengen sweep run`: the local executor. Runs the sweep's unfinished cells N at a time, each as
// a child `lengen sweep run-cell DIR I` whose output goes to logs/<cell>.log. Children get their
// own process group, so a terminal's Ctrl-C reaches only this process, which passes exactly one
// SIGTERM to each child (a second would make a child leave without its checkpoint) and waits
// for all of them: every child writes its checkpoint, and the sweep exits 130.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include "lengen/engine/errors.h"
#include "lengen/engine/sweep.h"
#include "progress.h"
#include "sweep_commands.h"

extern char** environ;

namespace lengen::cli {

namespace {

volatile std::sig_atomic_t g_stops = 0;

void onStop(int) { ++g_stops; }

std::string selfDir()
{
    char path[4096];
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        throw engine::Error(engine::ErrorKind::Io, "cannot locate the lengen executable (/proc/self/exe)");
    path[n] = '\0';
    std::string s(path);
    return s.substr(0, s.rfind('/'));
}

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

struct Child {
    pid_t pid = 0;
    const engine::SweepCell* cell = nullptr;
    std::chrono::steady_clock::time_point started;
};

pid_t spawnCell(const std::string& exe, const engine::SweepPaths& paths, const engine::SweepCell& cell,
                int threads, const std::string& device)
{
    std::vector<std::string> args = {"lengen", "sweep", "run-cell", paths.root, std::to_string(cell.index),
                                     "--threads", std::to_string(threads)};
    if (!device.empty())
        args.insert(args.end(), {"--device", device});
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&files, 1, paths.logFile(cell.name).c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, exe.c_str(), &files, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attr);
    if (rc != 0)
        throw engine::Error(engine::ErrorKind::Io, "cannot start " + exe + " for cell " + cell.name + ": " +
                                                       std::strerror(rc));
    return pid;
}

}  // namespace

std::string lengenExecutable()
{
    const std::string launcher = selfDir() + "/lengen";
    return access(launcher.c_str(), X_OK) == 0 ? launcher : selfDir() + "/lengen-core";
}

int runSweepRun(const SweepRunArgs& args)
{
    const engine::SweepPaths paths{engine::locateSweep(args.dir)};
    const auto index = engine::prepareSweep(paths.root);  // validates every cell first
    const auto statuses = engine::sweepStatus(paths.root, index);
    std::vector<const engine::SweepCell*> todo;
    int done = 0, failedBefore = 0, elsewhere = 0;
    for (const auto& s : statuses) {
        if (s.state == "done")
            ++done;
        else if (s.state == "running")
            ++elsewhere;  // another executor or a Slurm task holds it
        else if (s.state == "failed" && !args.retryFailed)
            ++failedBefore;
        else
            todo.push_back(s.cell);
    }
    const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
    const int jobs = std::max(1, std::min<int>(args.jobs > 0 ? args.jobs : cores, int(std::max<size_t>(todo.size(), 1))));
    const int threads = args.threadsPerJob > 0 ? args.threadsPerJob : std::max(1, cores / jobs);
    std::fprintf(stderr, "sweep %s: %zu cells: %d done, %d running elsewhere, %d failed before%s, %zu to run, "
                         "%d at a time with %d thread%s each; logs in %s/logs\n",
                 index.name.c_str(), index.cells.size(), done, elsewhere, failedBefore,
                 failedBefore && !args.retryFailed ? " (--retry-failed runs them again)" : "", todo.size(), jobs,
                 threads, threads == 1 ? "" : "s", paths.root.c_str());
    const std::string exe = lengenExecutable();
    struct sigaction sa = {};
    sa.sa_handler = onStop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);

    std::map<pid_t, Child> running;
    size_t next = 0;
    int forwarded = 0, failed = 0, stopped = 0, finished = 0;
    double cellSeconds = 0;
    auto lastReport = std::chrono::steady_clock::now();
    while (true) {
        while (!g_stops && int(running.size()) < jobs && next < todo.size()) {
            const auto* cell = todo[next++];
            const pid_t pid = spawnCell(exe, paths, *cell, threads, args.device);
            running[pid] = {pid, cell, std::chrono::steady_clock::now()};
            if (!args.quiet)
                std::fprintf(stderr, "[%zu/%zu] %s started\n", next, todo.size(), cell->name.c_str());
        }
        if (running.empty())
            break;
        if (g_stops > forwarded) {  // one SIGTERM per Ctrl-C: the first stops cleanly
            for (const auto& [pid, c] : running)
                ::kill(pid, SIGTERM);
            if (!forwarded)
                std::fprintf(stderr, "stopping: each running cell writes its checkpoint (Ctrl-C again: "
                                     "leave at once)\n");
            forwarded = g_stops;
        }
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, WNOHANG);
        if (pid <= 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            const auto now = std::chrono::steady_clock::now();
            if (!args.quiet && now - lastReport > std::chrono::seconds(30)) {
                lastReport = now;
                const auto all = engine::sweepStatus(paths.root, index);
                std::string line;
                for (const auto& [p, c] : running) {
                    const auto& s = all[size_t(c.cell->index)];
                    line += "  " + c.cell->name + " " + s.stage + " " + std::to_string(s.step) + "/" +
                            std::to_string(s.totalSteps);
                }
                const size_t left = todo.size() - next + running.size();
                const double eta = finished ? cellSeconds / finished * double(left) / jobs : NAN;
                std::fprintf(stderr, "running:%s; %zu left, ETA %s\n", line.c_str(), left,
                             formatDuration(eta).c_str());
            }
            continue;
        }
        const auto it = running.find(pid);
        if (it == running.end())
            continue;
        const Child child = it->second;
        running.erase(it);
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - child.started).count();
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        const std::string& name = child.cell->name;
        if (code == 0) {
            ++finished;
            cellSeconds += secs;
            if (!args.quiet)
                std::fprintf(stderr, "%s done (%s)\n", name.c_str(), formatDuration(secs).c_str());
        } else if (code == 130) {
            ++stopped;
            std::fprintf(stderr, "%s stopped; `lengen sweep run` resumes it\n", name.c_str());
        } else {
            ++failed;
            const std::string why = lastError(paths.logFile(name));
            std::fprintf(stderr, "%s failed (exit %d): %s\n", name.c_str(), code,
                         why.empty() ? ("see " + paths.logFile(name)).c_str() : why.c_str());
        }
    }
    std::fprintf(stderr, "sweep %s: %d cell%s finished now, %d stopped, %d failed%s\n", index.name.c_str(),
                 finished, finished == 1 ? "" : "s", stopped, failed + failedBefore,
                 failed + failedBefore ? " (`lengen sweep status` says why)" : "");
    if (g_stops)
        return engine::exitCodeFor(engine::ErrorKind::Interrupted);
    if (failed + failedBefore > 0)
        return engine::exitCodeFor(engine::ErrorKind::Runtime);
    return elsewhere > 0 ? kSweepUnfinished : 0;
}

}  // namespace lengen::cli
