#pragma once
// The event loop's responsiveness, as the latency tests measure it: a 10 ms timer on the calling
// (GUI) thread from construction; the gaps between its ticks are the stalls a user would feel.

#include <QElapsedTimer>
#include <QTimer>

#include <algorithm>
#include <vector>

namespace lengen::test {

class GapMeter {
public:
    GapMeter()
    {
        QObject::connect(&m_timer, &QTimer::timeout, [this] {
            if (m_clock.isValid())
                m_gaps.push_back(double(m_clock.nsecsElapsed()) / 1e6);
            m_clock.restart();
        });
        m_timer.start(10);
    }
    void stop() { m_timer.stop(); }
    /// The gap at quantile q (0.95, 0.99, 1 = the worst), in milliseconds; 0 before any tick.
    double quantile(double q) const
    {
        auto g = m_gaps;
        std::sort(g.begin(), g.end());
        return g.empty() ? 0 : g[std::min(g.size() - 1, size_t(q * double(g.size())))];
    }
    double p99() const { return quantile(0.99); }
    size_t samples() const { return m_gaps.size(); }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    std::vector<double> m_gaps;
};

}  // namespace lengen::test
