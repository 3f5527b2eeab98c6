#pragma once
// Interventions resolved for one run and one evaluation length, and the forward that applies
// them: forward-level ones reach the model as model::Intervention; truncate and segments are
// built here from prompts the model can read without extrapolating.

#include <torch/torch.h>

#include <string>

#include "eval/intervention_resolve.h"
#include "eval/model_runner.h"

namespace lengen::engine::eval {

/// The positions random_positions reads one prompt at (x [1, N, D], y [1, N]): a sorted random
/// subset of 0..range-1, int64 [2N] on the CPU, drawn from the prompt's own numbers and `seed`,
/// so a prompt gets the same positions in any batch, in evaluation and in the attention probe.
torch::Tensor promptPositions(const torch::Tensor& x, const torch::Tensor& y, std::int64_t range,
                              std::uint64_t seed);

/// Model predictions [B, N] (CPU float32) for xs [B, N, D], ys [B, N] under an intervention;
/// `budgetBytes` sizes the micro-batches of the extra prompts truncate and segments build.
torch::Tensor predictWith(LoadedRun& run, const torch::Tensor& xs, const torch::Tensor& ys,
                          const ForwardPlan& plan, const ResolvedIntervention& edit,
                          double budgetBytes);

}  // namespace lengen::engine::eval
