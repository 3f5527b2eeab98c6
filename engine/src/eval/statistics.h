#pragma once
// Per-position aggregation over prompts (reference §6.5).

#include <torch/torch.h>

#include "lengen/engine/analysis.h"

namespace lengen::engine::eval {

/// metric [S, N] (S prompts) -> mean, std (n - 1), and the bootstrap band: `trials` resamples
/// of S rows with replacement, per-position means sorted, elements floor(0.05 trials) and
/// floor(0.95 trials) (0-based). Resamples come from `gen`.
CurveStats aggregate(const torch::Tensor& metric, int trials, at::Generator& gen);

}  // namespace lengen::engine::eval
