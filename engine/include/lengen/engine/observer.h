#pragma once
// Values the trainer reports while it runs. All plain copyable types, so a GUI can forward them
// across threads as-is (tensors never leave the engine).

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace lengen::engine {

/// Emitted once before the first step.
struct RunStarted {
    std::string runFile;  ///< path of run.h5
    std::string runId;
    std::uint64_t seed = 0;
    std::string device;          ///< "cpu" or "cuda:0"
    std::int64_t firstStep = 0;  ///< > 0 when resuming
    std::int64_t totalSteps = 0;
    std::int64_t parameterCount = 0;
};

/// Emitted after every step (cheap; throttle on the receiving side).
struct StepProgress {
    std::int64_t step = 0;  ///< 0-based index of the step just finished
    std::int64_t totalSteps = 0;
    double loss = 0;            ///< training loss of that step
    double stepsPerSecond = 0;  ///< moving average
    double etaSeconds = 0;
};

/// One row of the training log, every `logging_steps` (reference §5.6 step 7).
struct LogRecord {
    std::int64_t step = 0;
    double loss = 0;
    double excessLoss = 0;          ///< loss / mean_i max(d_t - i, 0)
    std::vector<double> pointwise;  ///< [n_points] metric per in-context position
    int nPoints = 0;
    int nDims = 0;
    double learningRate = 0;  ///< LR used by the update of this step
    double gradNorm =
        std::numeric_limits<double>::quiet_NaN();  ///< L2 norm before clipping; NaN: not measured
    double wallSeconds = 0;  ///< since the run started (resumes continue the clock)
    double stepsPerSecond = 0;
};

enum class RunOutcome { Finished, Cancelled };

struct RunSummary {
    std::string runFile;
    RunOutcome outcome = RunOutcome::Finished;
    std::int64_t stepsDone = 0;  ///< completed optimisation steps (= checkpoint step)
    double finalLoss = 0;        ///< loss of the last logged step (what `lengen info` shows)
    double wallSeconds = 0;
};

/// Callbacks from the engine. Called on the engine's thread; keep them short.
class TrainObserver {
public:
    virtual ~TrainObserver() = default;
    virtual void onStarted(const RunStarted&) {}
    virtual void onStep(const StepProgress&) {}
    virtual void onLog(const LogRecord&) {}
    virtual void onCheckpoint(std::int64_t /*stepsDone*/) {}
    virtual void onWarning(const std::string&) {}
};

}  // namespace lengen::engine
