#pragma once
// Probes of a trained run (reference §7–§8): where the last query attends, duplicated-example
// attacks and serial-position ("lost in the middle") curves. Results go to the run's
// analysis.h5 (docs/analysis-format.md) under /probes. Plain values only.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lengen/engine/analysis.h"

namespace lengen::engine {

/// The reference's probes resample 100 times (evaluation: AnalysisOptions' 1000).
inline constexpr int kProbeBootstrapTrials = 100;

struct ProbeOptions {
    AnalysisOptions common = AnalysisOptions::withBootstrap(kProbeBootstrapTrials);
    bool attention = false;
    bool duplicated = false;
    bool serialPosition = false;

    /// Every probe, every other value at its default (the CLI's --all, the studio, sweeps).
    static ProbeOptions all()
    {
        ProbeOptions o;
        o.selectAll();
        return o;
    }
    void selectAll() { attention = duplicated = serialPosition = true; }

    // Duplicated-example attack and serial position (§8). 0 = the reference's default.
    int prompts = 100;             ///< functions (one task instance), one prompt each
    int testLength = 400;          ///< points of the long layouts
    std::vector<int> noiseCounts;  ///< count sweep; empty = 5, 6, ..., 20
    int instructionPoints = 0;     ///< 0 = 2 D
    int answerPoints = 0;          ///< 0 = D
    int targetPoints = 0;          ///< 0 = ceil(D / 2)

    // Attention (§7).
    int attentionPrompts = 64;
    int longPoints = 200;           ///< the reference's 200-point test
    std::vector<int> extraLengths;  ///< more prompt lengths, in points
    int mapPrompts = 2;             ///< prompts whose full maps are stored (heatmaps)
    int mapMaxTokens = 1600;        ///< full maps only up to this many tokens
    /// One intervention as written (docs/interventions.md), "" = the model as trained. Its
    /// results go beside the plain ones (probeRoot, attentionMapsName).
    std::string intervention;
};

struct ProbeSummary {
    std::string analysisFile;
    std::vector<std::string> computed;  ///< "attention", "duplicated", "serial_position"
    std::vector<std::string> skipped;   ///< with the reason, e.g. "attention (Mamba has none)"
    bool cancelled = false;
};

/// Runs the requested probes on the run's latest checkpoint. Error(Config) for impossible
/// sizes (e.g. an instruction longer than the training prompt).
ProbeSummary probeRun(const std::string& run, const ProbeOptions& options, RunControl& control,
                      AnalysisObserver& observer);

/// One curve of a probe with the spans a figure highlights ("instruction", "noise", "target",
/// "answer": [start, end) in points) and scalar facts ("target_mean", ...).
struct ProbeCurve {
    std::string name;  ///< "c=5", "begin", "all_duplicated", "random", ...
    CurveStats stats;
    std::map<std::string, std::pair<double, double>> spans;
    std::map<std::string, double> values;
};

/// A group of curves drawn together: "duplicated/count_sweep", "duplicated/inst_noise_target",
/// "duplicated/instruction_position", "serial_position".
struct ProbeGroup {
    std::string path;
    std::map<std::string, double> params;  ///< dims, train_points, test_length, prompts, ...
    bool classification = false;
    std::string model;  ///< "RoPE", ...
    std::vector<ProbeCurve> curves;
};

/// Where a run's probes under an intervention are kept: "probes" for "" (none), else
/// "intervention_probes/<spec as written>".
std::string probeRoot(const std::string& intervention);
/// The full maps' file beside analysis.h5: attention_maps.h5, or attention_maps.<spec>.h5 with
/// characters other than letters, digits, '=', '.', '-' and '_' written as '_'.
std::string attentionMapsName(const std::string& intervention);

std::vector<ProbeGroup> readProbeGroups(const std::string& run,
                                        const std::string& intervention = "");

/// Attention of one setting (prompt length): the last x-token query's row per layer and head
/// averaged over prompts, and per layer the head-averaged attention on the y tokens.
struct AttentionSetting {
    std::string name;  ///< "train", "long", "duplicated", "points=<n>"
    int points = 0, tokens = 0, layers = 0, heads = 0;
    int query = 0;                                   ///< token index of the query (tokens - 2)
    std::vector<float> lastQueryMean;                ///< [layers, heads, tokens]
    std::vector<float> lastQueryLow, lastQueryHigh;  ///< bootstrap band, same shape
    std::vector<float> yAttention;                   ///< [layers, points]: to y_0 .. y_{N-1}
    int mapPrompts = 0;                              ///< full maps stored for this many prompts
};

std::vector<AttentionSetting> readAttentionSettings(const std::string& run,
                                                    const std::string& intervention = "");

/// Rows [r0, r1) x columns [c0, c1) of one stored full map (setting, prompt, layer, head),
/// row-major float32; reads only the chunks covering the tile.
std::vector<float> readAttentionTile(const std::string& run, const std::string& setting, int prompt,
                                     int layer, int head, int r0, int r1, int c0, int c1,
                                     const std::string& intervention = "");

}  // namespace lengen::engine
