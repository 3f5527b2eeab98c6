#pragma once
// Interventions resolved for one run and one evaluation length, and the forward that applies
// them: forward-level ones reach the model as model::Intervention; truncate and segments are
// built here from prompts the model can read without extrapolating.

#include <torch/torch.h>

#include <string>

#include "eval/model_runner.h"
#include "lengen/engine/interventions.h"
#include "model/intervention.h"

namespace lengen::engine::eval {

struct ResolvedIntervention {
    enum class Level { Plain, Model, Truncate, Segments, Positions };
    Level level = Level::Plain;
    model::Intervention model;  ///< Level::Model
    std::int64_t points = 0;    ///< truncate, segments: points per prompt (query included)
    bool weightBySize = false;  ///< segments: chunk predictions weighted by chunk size
    std::int64_t range = 0;     ///< random_positions: positions drawn from 0..range-1
    std::uint64_t seed = 0;     ///< random_positions: mixed into each prompt's draw
    std::string description;    ///< every parameter as resolved (stored with the results)
    /// Longest forward in tokens for a prompt of `points` points (GPT-2's position limit).
    std::int64_t forwardTokens(std::int64_t promptPoints) const;
};

/// Error(Config) naming the run's backbone/PE when the intervention does not apply, or a
/// parameter out of range.
ResolvedIntervention resolveIntervention(const InterventionSpec& spec, const RunConfig& config,
                                         std::int64_t evalPoints);

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
