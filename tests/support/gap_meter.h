#pragma once
// The event loop's responsiveness, as the latency tests measure it: a 10 ms timer on the calling
// (GUI) thread from construction; the gaps between its ticks are the stalls a user would feel.
//
// What the tests bound is the GUI thread's *own* stall: a gap less the time the kernel kept the
// thread runnable but off a CPU (its run-queue wait, /proc/thread-self/schedstat's second
// field). On a busy machine (issue 54: other work at load 8-15) a gap grows by that wait without
// LenGen doing anything on the GUI thread; work on it, or a wait for a lock, a file or a process,
// is what remains. Where schedstat cannot be read, the own gap is the whole gap. The raw gaps
// stay available for the figures the tests print (bench/README.md: latency figures).

#include <QElapsedTimer>
#include <QTimer>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace lengen::test {

class GapMeter {
public:
    GapMeter() : m_schedstat(::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC))
    {
        QObject::connect(&m_timer, &QTimer::timeout, [this] {
            const double wait = runQueueWaitMs();
            if (m_clock.isValid()) {
                const double gap = double(m_clock.nsecsElapsed()) / 1e6;
                m_gaps.push_back(gap);
                m_own.push_back(
                    wait >= 0 && m_lastWait >= 0 ? std::max(0.0, gap - (wait - m_lastWait)) : gap);
            }
            m_lastWait = wait;
            m_clock.restart();
        });
        m_timer.start(10);
    }
    ~GapMeter()
    {
        if (m_schedstat >= 0)
            ::close(m_schedstat);
    }
    GapMeter(const GapMeter&) = delete;
    GapMeter& operator=(const GapMeter&) = delete;

    void stop() { m_timer.stop(); }
    /// The GUI thread's own stall at quantile q (0.95, 0.99, 1 = the worst), in milliseconds: a
    /// gap less the thread's run-queue wait in it; 0 before any tick.
    double quantile(double q) const { return at(m_own, q); }
    double p99() const { return quantile(0.99); }
    /// The whole gaps, waits for a CPU included (what a user on that machine felt).
    double rawQuantile(double q) const { return at(m_gaps, q); }
    size_t samples() const { return m_gaps.size(); }
    /// Whether the run-queue wait could be read (else quantile() is the raw gap).
    bool separatesLoad() const { return m_schedstat >= 0; }

private:
    static double at(std::vector<double> g, double q)
    {
        std::sort(g.begin(), g.end());
        return g.empty() ? 0 : g[std::min(g.size() - 1, size_t(q * double(g.size())))];
    }
    // The thread's total run-queue wait so far, ms; -1 when unreadable.
    double runQueueWaitMs() const
    {
        if (m_schedstat < 0)
            return -1;
        char buf[128] = {};
        const ssize_t n = ::pread(m_schedstat, buf, sizeof buf - 1, 0);
        if (n <= 0)
            return -1;
        char* end = nullptr;
        std::strtoull(buf, &end, 10);  // time on a CPU
        const unsigned long long waited = std::strtoull(end, nullptr, 10);
        return double(waited) / 1e6;
    }

    QTimer m_timer;
    QElapsedTimer m_clock;
    int m_schedstat = -1;  // this (GUI) thread's schedstat, kept open: one pread per tick
    double m_lastWait = -1;
    std::vector<double> m_gaps, m_own;
};

}  // namespace lengen::test
