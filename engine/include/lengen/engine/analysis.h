#pragma once
// Evaluation of a trained run against classical baselines (reference §6) and the probes of
// §7–§8; what the analysis file beside the run stores (analysis.h5, docs/analysis-format.md)
// is analysis_records.h, below. Synchronous, Qt-free, plain values only: a GUI worker calls these
// on its own thread and forwards the observer's values.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lengen/engine/analysis_records.h"
#include "lengen/engine/run_control.h"
#include "lengen/engine/session.h"

namespace lengen::engine {

/// Progress of a long evaluation or probe; called on the engine's thread.
class AnalysisObserver {
public:
    virtual ~AnalysisObserver() = default;
    /// `stage` names what runs (e.g. "ood_length: RoPE"); done/total count its work units.
    virtual void onProgress(const std::string& /*stage*/, std::int64_t /*done*/,
                            std::int64_t /*total*/)
    {}
    /// A new stage begins: `index` of `count` (from 0), e.g. evaluation method 2 of 12 or the
    /// serial-position probe, 3rd of 3. Progress after it is that stage's.
    virtual void onStage(int /*index*/, int /*count*/, const std::string& /*name*/) {}
    /// The job's share done (0..1) with its parts weighed by what they cost, where the engine
    /// can tell (the probes: later parts run longer prompts); sent before the stage start or
    /// progress report it goes with. Without it, a job's stages and units count alike.
    virtual void onFraction(double /*ofJob*/) {}
    virtual void onWarning(const std::string&) {}
};

/// Shared by evaluation and probes.
struct AnalysisOptions {
    std::uint64_t seed = 1;  ///< draws prompts and bootstrap resamples
    int bootstrapTrials = 1000;
    /// MiB the model forward may use for attention scores and activations at once; the
    /// micro-batch (and, past one prompt, the query-row chunk) is chosen to fit it. <= 0:
    /// automatic (2048 on the CPU, half the GPU's free memory on CUDA).
    double memoryBudgetMiB = 0;
    std::string device;        ///< "" = cuda if available, else cpu
    int threads = 0;           ///< CPU threads (0 = all cores)
    bool force = false;        ///< recompute results that are already stored
    SessionSwitches switches;  ///< layer path and thread policy (session.h)

    static AnalysisOptions withBootstrap(int trials)
    {
        AnalysisOptions o;
        o.bootstrapTrials = trials;
        return o;
    }
};

struct EvalOptions {
    AnalysisOptions common;
    std::vector<std::string> methods;  ///< empty = every method of the task (evalMethodsFor)
    int prompts = 1280;                ///< prompts per method
    int batchSize = 64;                ///< functions drawn together (one task instance)
    int oodFactor = 8;                 ///< ood_length and covariate shifts: K x points.end
    bool baselines = true;             ///< also evaluate the task's baselines
    /// Interventions to evaluate besides the plain model (docs/interventions.md), each as
    /// written ("yarn", "lambda:global=2,local=train"); "none" is the plain evaluation.
    std::vector<std::string> interventions;
    /// Sweeps: an intervention that does not apply to this run is skipped with a warning
    /// (a grid over PEs asks for yarn on ALiBi too) instead of refused.
    bool skipInapplicable = false;
};

struct EvalSummary {
    std::string analysisFile;
    /// Methods evaluated now ("ood_length"; "ood_length+yarn" under an intervention).
    std::vector<std::string> computed;
    std::vector<std::string> skipped;   ///< already stored for this checkpoint and seed
    std::int64_t lassoUnconverged = 0;  ///< Lasso fits that hit max_iter (warned, kept)
    bool cancelled = false;             ///< stopped through RunControl; nothing half-stored
};

/// Every evaluation method for a task: standard and ood_length; Gaussian tasks add
/// half_subspace, skewed, scale-x=s and scale-y=s for s in {0.333, 0.5, 2, 3}.
std::vector<std::string> evalMethodsFor(const std::string& task);

/// Evaluates the run's latest checkpoint. Error(Config) for an unknown method, Error(RunFile)
/// for a run without a checkpoint. Results go to <run folder>/analysis.h5.
EvalSummary evaluateRun(const std::string& run, const EvalOptions& options, RunControl& control,
                        AnalysisObserver& observer);

/// Stored evaluation results of a run (empty if none): plain ones in the methods' order
/// (evalMethodsFor), then imported ones (with a `source`), then those under interventions (with
/// an `intervention`) in the documentation's order. Implemented in eval/ over io's records.
std::vector<EvalResult> readEvaluations(const std::string& run);

/// Empty when the run has no analysis file; Error(RunFile) when the file is damaged.
AnalysisContents analysisContents(const std::string& run);

/// Pairs an intervention evaluation with the run's stored plain evaluation of the same methods
/// (`options.methods`, every method when empty): its prompts, seed and OOD factor, so that the
/// interventions are compared with the untouched model on the same prompts and nothing plain
/// is redone. Returns what it took ("1280 prompts, seed 1, 8× the training length"), or ""
/// when no plain LenGen evaluation of these methods is stored (options unchanged). Only the
/// settings in `take` are taken (the CLI leaves the ones its command line chose: --prompts,
/// --seed, --ood-factor); the studio takes all three. Error(RunFile) for a damaged analysis
/// file.
struct PairedSettings {
    bool prompts = true, seed = true, oodFactor = true;
};
std::string pairWithStoredEvaluation(const std::string& run, EvalOptions& options,
                                     PairedSettings take = {});

}  // namespace lengen::engine
