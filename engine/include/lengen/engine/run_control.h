#pragma once
// Thread-safe pause/cancel shared between the thread that runs the engine and the thread that
// steers it (GUI thread, SIGINT handler). The engine calls shouldContinue() between steps.

#include <atomic>
#include <condition_variable>
#include <mutex>

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
    /// paused loop). Polls every 100 ms so a cancel set from a signal handler is seen too.
    bool shouldContinue();

private:
    std::atomic<bool> m_cancel{false};
    std::atomic<bool> m_paused{false};
    std::mutex m_mutex;
    std::condition_variable m_wake;
};

}  // namespace lengen::engine
