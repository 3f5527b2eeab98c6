#pragma once
// Terminal progress for `lengen train`: a one-line bar with loss, steps/s and ETA when stderr
// is a terminal, a plain line every few seconds otherwise (logs, CI), nothing with --quiet.

#include <chrono>
#include <string>

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

std::string formatDuration(double seconds);

}  // namespace lengen::cli
