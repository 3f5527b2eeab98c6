#pragma once
// What a run's analysis file stores (analysis.h5, docs/analysis-format.md): the evaluation
// records, the file's contents by name, and the calls io implements on it. Types only, plus
// io's own functions: the storage layer (engine/src/io) includes this, never analysis.h, whose
// operations are implemented above it (issue 73).

#include <cstdint>
#include <string>
#include <vector>

namespace lengen::engine {

/// Per-position statistics over prompts (§6.5): mean, standard deviation (n - 1) and the
/// 5 % / 95 % percentile band of `trials` bootstrap means.
struct CurveStats {
    std::vector<double> mean, std, bootstrapLow, bootstrapHigh;
};

/// One stored curve: a model (the transformer or a baseline) under one method.
struct EvalCurve {
    std::string model;  ///< key: "RoPE", "OLS_driver=None", "NN_n=3_uniform", ...
    std::string label;  ///< legend: "RoPE", "Least Squares", "3-Nearest Neighbors"
    CurveStats stats;
};

/// One method's results as stored (and what produced them).
struct EvalResult {
    std::string method;               ///< standard | ood_length | half_subspace | ...
    std::int64_t checkpointStep = 0;  ///< completed training steps of the weights used
    int prompts = 0;
    std::uint64_t seed = 0;
    int nPoints = 0;      ///< prompt length in points
    int trainPoints = 0;  ///< curriculum points.end (the base of the lengths)
    /// What the weights last trained on: the curriculum after checkpointStep steps, less than
    /// trainPoints when max_steps ended before the curriculum did (issue 52). The training
    /// length every figure marks.
    int trainedPoints = 0;
    int dims = 0;                 ///< D
    double zeroEstimator = 0;     ///< error of predicting 0 (D, times s^2 for scale-y=s)
    bool classification = false;  ///< accuracy (true) or squared error
    std::string source;           ///< "lengen" or "metrics.json:<path>" when imported
    /// "" for the model as trained; else the intervention as written ("yarn:factor=8"), whose
    /// result holds the model's curve only (its baselines are the plain result's).
    std::string intervention;
    std::string interventionParams;  ///< every parameter as resolved ("factor=8, ...")
    std::vector<EvalCurve> curves;   ///< transformer first, then baselines
};

/// The position a figure or table calls the training length: the last one the weights trained on
/// (trainedPoints, else the curriculum's trainPoints), 0-based, within [0, lastPosition].
inline int trainingPosition(int trainedPoints, int trainPoints, int lastPosition)
{
    const int p = (trainedPoints > 0 ? trainedPoints : trainPoints) - 1;
    return p < 0 ? 0 : (p > lastPosition ? lastPosition : p);
}

/// What a run's analysis file holds, by name only (cheap: no curve is read). For run lists.
struct AnalysisContents {
    std::vector<std::string> evalMethods;         ///< /eval/<method>, canonical order
    std::vector<std::string> probes;              ///< of attention, duplicated, serial_position
    std::vector<std::string> importedLabels;      ///< /imported/<label>
    std::vector<std::string> interventions;       ///< /interventions/<spec>, as written
    std::vector<std::string> probeInterventions;  ///< /intervention_probes/<spec>
};
/// What the analysis file holds, by name, as stored (io); analysisContents (analysis.h) orders it.
AnalysisContents storedAnalysisContents(const std::string& run);

/// Imports a reference metrics.json (§6.6) into the run's analysis file under `label`
/// (e.g. "python"), so its curves can be shown next to LenGen's. Returns the methods imported.
std::vector<std::string> importMetricsJson(const std::string& jsonPath, const std::string& run,
                                           const std::string& label);

/// <run folder>/analysis.h5 for a run folder or run.h5 path.
std::string analysisFileFor(const std::string& run);

}  // namespace lengen::engine
