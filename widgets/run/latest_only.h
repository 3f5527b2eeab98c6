#pragma once
// "Rebuild, keeping only the latest" (issue 70): the one place that decides when a rebuild
// starts while another runs. The studio rebuilds many things from state that keeps changing
// (the hyperparameter table as runs land, the parallel plot's image as a brush is dragged, a
// sweep's aggregate as cells end, the job queue as jobs end); each of them asked "is one
// running? then remember to go again" with its own pair of flags.
//
//   Coalesced     one pass at a time; requests made during a pass become one more pass after
//                 it (however many there were). The pass may end at once (a synchronous pass
//                 calls done() before returning) or later (a job, a worker).
//   LatestOnly<T> a Coalesced pass that runs a function on Qt's thread pool and hands its
//                 result back on the owner's thread, saying whether a newer request is
//                 waiting (`latest` false: the result is already stale). Only the newest
//                 waiting work runs; older waiting work is dropped unrun.
//
// Both live on one thread (the GUI thread), and so do their callbacks.

#include <QFutureWatcher>
#include <QObject>
#include <QtConcurrent/QtConcurrentRun>

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

namespace lengen::ui {

class Coalesced {
public:
    /// `start` runs a pass; the pass calls done() when it ends (possibly before start returns).
    explicit Coalesced(std::function<void()> start) : m_start(std::move(start)) {}

    /// Starts a pass now, or after the running one if one runs.
    void request();
    /// The running pass ended: starts one more if any request came meanwhile.
    void done();
    bool busy() const { return m_busy; }
    /// Whether a request waits for the running pass to end.
    bool again() const { return m_again; }
    /// Forgets a waiting request (what it was for went away).
    void dropWaiting() { m_again = false; }
    std::uint64_t passes() const { return m_passes; }

private:
    std::function<void()> m_start;
    bool m_busy = false, m_again = false, m_inStart = false;
    std::uint64_t m_passes = 0;
};

template <typename T>
class LatestOnly {
public:
    using Work = std::function<T()>;
    /// `deliver(result, latest)` runs on `context`'s thread after each pass.
    LatestOnly(QObject* context, std::function<void(T, bool latest)> deliver)
        : m_deliver(std::move(deliver)), m_pass([this] { startWaiting(); })
    {
        QObject::connect(&m_watcher, &QFutureWatcherBase::finished, context, [this] {
            const bool latest = !m_waiting.has_value();
            std::optional<T> result;
            try {
                result = m_watcher.result();
            } catch (...) {  // work that threw delivers nothing; the next waiting one runs
            }
            if (result)
                m_deliver(std::move(*result), latest);
            m_pass.done();
        });
    }
    ~LatestOnly() { m_watcher.waitForFinished(); }
    LatestOnly(const LatestOnly&) = delete;
    LatestOnly& operator=(const LatestOnly&) = delete;

    /// Runs `work` on the thread pool now, or once the running work ends; it replaces any work
    /// waiting already. `work` must not touch the owner's state: give it values.
    void submit(Work work)
    {
        m_waiting = std::move(work);
        m_pass.request();
    }
    bool busy() const { return m_pass.busy(); }
    /// Drops waiting work (the running one still delivers).
    void dropWaiting()
    {
        m_waiting.reset();
        m_pass.dropWaiting();
    }
    std::uint64_t passes() const { return m_pass.passes(); }

private:
    void startWaiting()
    {
        if (!m_waiting) {  // dropped meanwhile
            m_pass.done();
            return;
        }
        auto work = std::move(*m_waiting);
        m_waiting.reset();
        m_watcher.setFuture(QtConcurrent::run(std::move(work)));
    }

    std::function<void(T, bool)> m_deliver;
    std::optional<Work> m_waiting;
    QFutureWatcher<T> m_watcher;
    Coalesced m_pass;
};

}  // namespace lengen::ui
