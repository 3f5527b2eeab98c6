#pragma once
// Probes of a trained run (reference §7–§8): where the last query attends, duplicated-example
// attacks and serial-position ("lost in the middle") curves. Results go to the run's
// analysis.h5 (docs/analysis-format.md) under /probes; what is stored and its readers are
// probe_records.h. Plain values only.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lengen/engine/analysis.h"
#include "lengen/engine/probe_records.h"

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

}  // namespace lengen::engine
