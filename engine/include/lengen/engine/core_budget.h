#pragma once
// The cores one front end's jobs share (issue 53): the studio's "Concurrent jobs". Every
// CPU-heavy job takes its share before it starts and gives it back when it ends — an in-process
// training, evaluation, probe or export one core, a sweep cell its threads — so that a
// training, an evaluation and a local sweep's cells started together never run more CPU-heavy
// work at once than the limit. Thread-safe: the studio's controller takes on the GUI thread,
// a sweep's executor on its worker thread.

#include <functional>
#include <mutex>

namespace lengen::engine {

class CoreBudget {
public:
    explicit CoreBudget(int limit);
    int limit() const;
    void setLimit(int limit);  ///< at least 1; what is taken stays taken
    int inUse() const;
    /// Takes `n` cores (at least 1, at most the limit: a job wider than the limit runs alone)
    /// when that many are free; returns how many it took, 0 when it must wait.
    int tryTake(int n);
    /// Takes as many of `n` cores as are free (at least 1): a sweep cell then runs with that
    /// many threads rather than wait for all it would like. 0 when none is free. Cores that
    /// queued jobs wait for (setWaiting) are not free for it: a freed core goes to the job that
    /// waited, not back to the sweep that gave it (which would starve the queue).
    int tryTakeUpTo(int n);
    /// How many cores the front end's queued jobs wait for (the studio's controller sets it
    /// after each scheduling pass).
    void setWaiting(int cores);
    /// A local sweep's cells that wait for a core now: each executor adds what it starts
    /// waiting for and takes it back (the studio's Jobs panel counts them with its queue).
    void addCellsWaiting(int delta);
    int cellsWaiting() const;
    /// Gives back what tryTake returned; calls the freed callback (on the calling thread).
    void give(int n);
    /// Called after cores were given back or the limit changed (any thread; keep it short).
    void setOnFreed(std::function<void()> onFreed);

private:
    mutable std::mutex m_mutex;
    int m_limit, m_used = 0, m_waiting = 0, m_cellsWaiting = 0;
    std::function<void()> m_onFreed;
};

}  // namespace lengen::engine
