#pragma once
// What a run's analysis file stores for its probes (under /probes, docs/analysis-format.md),
// and io's readers of it. Types only, plus io's own functions: the storage layer includes
// this, never probes.h, whose operations are implemented above it (issue 73).

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lengen/engine/analysis_records.h"

namespace lengen::engine {

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
