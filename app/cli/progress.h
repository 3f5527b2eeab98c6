#pragma once
// Terminal progress for `lengen train`: a one-line bar with loss, steps/s and ETA when stderr
// is a terminal, a plain line every few seconds otherwise (logs, CI), nothing with --quiet.

#include <chrono>
#include <string>

#include "lengen/engine/analysis.h"
#include "lengen/engine/observer.h"

namespace lengen::cli {

class ProgressReporter final : public engine::TrainObserver {
public:
    enum class Style { Bar, Lines, Quiet };
    explicit ProgressReporter(Style style);
    static Style detect(bool quiet);

    void onStarted(const engine::RunStarted& s) override;
    void onStep(const engine::StepProgress& p) override;
    void onLog(const engine::LogRecord& r) override;
    void onWarning(const std::string& message) override;
    /// Ends the bar line (call once the run returns or fails).
    void finish();

private:
    Style m_style;
    std::chrono::steady_clock::time_point m_lastPrint{};
    double m_lastExcess = 0;
    bool m_barOpen = false;
};

/// Progress of `eval`, `probe` and a sweep cell's analysis stages: one status line on a
/// terminal (rewritten in place), a line every few seconds otherwise.
class AnalysisProgress final : public engine::AnalysisObserver {
public:
    explicit AnalysisProgress(bool quiet);
    void onProgress(const std::string& stage, std::int64_t done, std::int64_t total) override;
    void onWarning(const std::string& message) override;
    void onFraction(double ofJob) override { m_job = ofJob; }
    void finish();

private:
    bool m_quiet, m_tty, m_open = false;
    double m_job = -1;  ///< the job's share done by cost, where the engine says it
    std::string m_stage;
    std::chrono::steady_clock::time_point m_last{};
};

std::string formatDuration(double seconds);

}  // namespace lengen::cli
