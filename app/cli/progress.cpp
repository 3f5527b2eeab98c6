#include "progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace lengen::cli {

std::string formatDuration(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0)
        return "--:--";
    const long s = std::lround(seconds);
    char buf[32];
    if (s >= 3600)
        std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
    else
        std::snprintf(buf, sizeof buf, "%02ld:%02ld", s / 60, s % 60);
    return buf;
}

ProgressReporter::ProgressReporter(Style style) : m_style(style) {}

ProgressReporter::Style ProgressReporter::detect(bool quiet)
{
    if (quiet)
        return Style::Quiet;
    return isatty(STDERR_FILENO) ? Style::Bar : Style::Lines;
}

void ProgressReporter::onStarted(const engine::RunStarted& s)
{
    if (m_style == Style::Quiet)
        return;
    std::fprintf(stderr, "%s run %s: %.2f M parameters on %s, seed %llu, steps %lld..%lld\n",
                 s.firstStep > 0 ? "resuming" : "training", s.runId.c_str(),
                 static_cast<double>(s.parameterCount) / 1e6, s.device.c_str(),
                 static_cast<unsigned long long>(s.seed), static_cast<long long>(s.firstStep),
                 static_cast<long long>(s.totalSteps));
    std::fprintf(stderr, "run file: %s\n", s.runFile.c_str());
}

void ProgressReporter::onStep(const engine::StepProgress& p)
{
    if (m_style == Style::Quiet)
        return;
    const auto now = std::chrono::steady_clock::now();
    const double since = std::chrono::duration<double>(now - m_lastPrint).count();
    const bool last = p.step + 1 == p.totalSteps;
    const double minGap = m_style == Style::Bar ? 0.1 : 5.0;
    if (since < minGap && !last)
        return;
    m_lastPrint = now;
    const double frac = static_cast<double>(p.step + 1) / static_cast<double>(p.totalSteps);
    if (m_style == Style::Bar) {
        constexpr int kWidth = 28;
        const int filled = static_cast<int>(frac * kWidth);
        std::string bar(static_cast<size_t>(filled), '#');
        bar.resize(kWidth, '.');
        std::fprintf(stderr, "\r[%s] %lld/%lld %5.1f%%  loss %.4f  %.1f it/s  ETA %s   ",
                     bar.c_str(), static_cast<long long>(p.step + 1),
                     static_cast<long long>(p.totalSteps), 100 * frac, p.loss, p.stepsPerSecond,
                     formatDuration(p.etaSeconds).c_str());
        m_barOpen = true;
    } else {
        std::fprintf(stderr, "step %lld/%lld (%.1f%%)  loss %.4f  excess %.3f  %.1f it/s  ETA %s\n",
                     static_cast<long long>(p.step + 1), static_cast<long long>(p.totalSteps),
                     100 * frac, p.loss, m_lastExcess, p.stepsPerSecond,
                     formatDuration(p.etaSeconds).c_str());
    }
    std::fflush(stderr);
}

void ProgressReporter::onLog(const engine::LogRecord& r) { m_lastExcess = r.excessLoss; }

void ProgressReporter::onWarning(const std::string& message)
{
    finish();
    std::fprintf(stderr, "warning: %s\n", message.c_str());
}

void ProgressReporter::finish()
{
    if (m_barOpen) {
        std::fputc('\n', stderr);
        m_barOpen = false;
    }
}

AnalysisProgress::AnalysisProgress(bool quiet) : m_quiet(quiet), m_tty(::isatty(2) != 0) {}

void AnalysisProgress::onProgress(const std::string& stage, std::int64_t done, std::int64_t total)
{
    if (m_quiet)
        return;
    const auto now = std::chrono::steady_clock::now();
    if (!m_tty && stage == m_stage && now - m_last < std::chrono::seconds(5))
        return;
    m_last = now;
    m_stage = stage;
    const int pct = total > 0 ? static_cast<int>(100 * done / total) : 100;
    // The whole job's share by cost where the engine weighs it (the probes' long prompts).
    const std::string job =
        m_job >= 0 ? ", job " + std::to_string(static_cast<int>(100 * m_job)) + "%" : "";
    std::fprintf(stderr, m_tty ? "\r\033[K%-40s %3d%% (%lld/%lld%s)" : "%s %d%% (%lld/%lld%s)\n",
                 stage.c_str(), pct, static_cast<long long>(done), static_cast<long long>(total),
                 job.c_str());
    std::fflush(stderr);
    m_open = m_tty;
}

void AnalysisProgress::onWarning(const std::string& message)
{
    finish();
    std::fprintf(stderr, "warning: %s\n", message.c_str());
}

void AnalysisProgress::finish()
{
    if (m_open)
        std::fprintf(stderr, "\n");
    m_open = false;
}

}  // namespace lengen::cli
