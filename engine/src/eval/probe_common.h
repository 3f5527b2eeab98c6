#pragma once
// Shared by the probe implementations (probes.cpp, attention_probe.cpp): the loaded run, the
// common attributes every probe group carries, and curve storage with spans.

#include <torch/torch.h>

#include <map>
#include <string>

#include "eval/interventions.h"
#include "eval/model_runner.h"
#include "io/analysis_store.h"
#include "lengen/engine/probes.h"

namespace lengen::engine::eval {

struct ProbeContext {
    LoadedRun run;
    const ProbeOptions* options = nullptr;
    RunControl* control = nullptr;
    AnalysisObserver* observer = nullptr;
    std::string analysisFile;
    double budgetBytes = 0;
    std::map<std::string, double> params;  ///< sizes stored with every group (test_length, ...)
    InterventionSpec intervention{"none", {}};  ///< resolved per prompt length
    std::string root = "probes";                ///< probeRoot(intervention)
};

/// Attributes of every probe group: provenance and the sizes a figure needs.
void writeProbeAttributes(hid_t group, const ProbeContext& ctx, const std::string& path);

/// Writes a curve and its spans ("<mark>_span" = [start, end)) and scalar values.
void writeProbeCurve(hid_t group, const ProbeCurve& curve, const std::string& path);

/// Model predictions for `xs` in micro-batches sized for the budget at this length.
torch::Tensor predictWithinBudget(ProbeContext& ctx, const torch::Tensor& xs,
                                  const torch::Tensor& ys);

/// Attention probe (§7): stores /probes/attention/<setting>. Returns false if cancelled.
bool runAttentionProbe(ProbeContext& ctx);

}  // namespace lengen::engine::eval
