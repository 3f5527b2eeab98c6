#pragma once
// Thread-safe pause/cancel shared between the thread that runs the engine and the thread that
// steers it (GUI thread, SIGINT handler). The engine calls shouldContinue() between steps.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

#include "lengen/engine/run_file.h"

namespace lengen::engine {

class RunControl final {
public:
    RunControl() = default;
    RunControl(const RunControl&) = delete;
    RunControl& operator=(const RunControl&) = delete;

    /// Async-signal-safe: one atomic store plus a notify (safe from a SIGINT handler only via
    /// requestCancelFromSignal, which does the store alone).
    void requestCancel();
    void requestCancelFromSignal() { m_cancel.store(true); }
    void setPaused(bool paused);

    bool isCancelRequested() const { return m_cancel.load(); }
    bool isPaused() const { return m_paused.load(); }

    /// Blocks while paused; returns false once cancel has been requested (cancel wakes a
    /// paused loop). Polls every 100 ms so a cancel set from a signal handler is seen too, and
    /// asks the stop probe (if any) at each call and each poll: true cancels.
    bool shouldContinue();

    /// A request from outside the process (StopRequestWatch below); set and cleared by the
    /// thread that calls shouldContinue, which is the only one that calls it.
    void setStopProbe(std::function<bool()> probe);

private:
    bool probeSaysStop();

    std::atomic<bool> m_cancel{false};
    std::atomic<bool> m_paused{false};
    std::function<bool()> m_probe;
    std::mutex m_mutex;
    std::condition_variable m_wake;
};

// ---- stopping a training from another process (`lengen stop RUN`) ----------------------
//
// The request is a file beside the run, "<run.h5>.stop", written atomically by whoever asks;
// the training that holds the run's writer lock looks for it about twice a second (also while
// paused), stops after its current step with a checkpoint, as SIGTERM does, and removes it. A
// training that starts removes a request left over from before it. A file, not a signal: it
// reaches a training in the studio's worker thread, or in a Slurm task on another node that
// shares the folder, as well as one in a terminal.

// The request's file name, stopRequestPath, is the run's storage's (run_file.h).

/// Asks the process that writes `runFile` to stop. Error(RunFile) naming the run when no live
/// process holds its writer lock (nothing trains it); Error(Io) when the file can't be written.
void requestStop(const std::string& runFile, const std::string& requester);

/// Waits up to `seconds` for the run's writer lock to be released (polling every 100 ms);
/// false if a process still holds it.
bool waitForWriterToLeave(const std::string& runFile, double seconds);

/// Watches the request file of one run while it trains: feeds `control`'s stop probe (a
/// request written since the run's writer took its lock counts; the writer removed older ones),
/// and removes the request and the probe when it goes.
class StopRequestWatch {
public:
    StopRequestWatch(RunControl& control, std::string runFile);
    ~StopRequestWatch();
    StopRequestWatch(const StopRequestWatch&) = delete;
    StopRequestWatch& operator=(const StopRequestWatch&) = delete;

private:
    RunControl& m_control;
    std::string m_file;
};

}  // namespace lengen::engine
