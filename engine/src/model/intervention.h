#pragma once
// An evaluation-time change to the forward pass (docs/interventions.md), resolved for one run
// and one evaluation length: every number here is final (factors, windows in tokens). The
// model reads it through AttentionTap::edit; training never sets one. Prompt-level methods
// (truncate, segments) never reach the model: eval/intervention_runner builds their prompts.

#include <cstdint>
#include <vector>

namespace lengen::engine::model {

struct Intervention {
    enum class Kind {
        None,
        Pi,
        Ntk,
        DynamicNtk,
        Yarn,
        Lambda,
        Window,
        LogitScale,
        MambaDt,
        LongHeads
    };
    Kind kind = Kind::None;
    std::int64_t trainTokens = 0;        ///< L_train: tokens of a training prompt (2 x points)
    double factor = 1;                   ///< pi, ntk, yarn: scale s; mamba_dt: multiplier of Delta
    double alpha = 1;                    ///< dynamic_ntk: s_T = alpha T / L - (alpha - 1)
    double betaFast = 32, betaSlow = 1;  ///< yarn's ramp (rotations over L_train)
    double yarnMscale = -1;              ///< yarn: attention temperature; < 0 = 0.1 ln s + 1
    std::int64_t global = 0;             ///< lambda: first tokens every query sees
    std::int64_t local = 0;              ///< lambda, window: most recent tokens every query sees
    std::int64_t cap = 0;                ///< lambda: largest relative distance of the global branch
    std::int64_t chunk = 0;              ///< longheads: tokens per chunk
    std::int64_t budget = 0;             ///< longheads: tokens a query attends to in all

    bool rotary() const
    {
        return kind == Kind::Pi || kind == Kind::Ntk || kind == Kind::DynamicNtk ||
               kind == Kind::Yarn;
    }
    /// True when, for a forward of `tokens` tokens, the intervention changes nothing: the
    /// model then runs its plain path (bitwise the untouched evaluation).
    bool identityAt(std::int64_t tokens) const;
};

/// Applies a rotary intervention to a PE's table for a forward whose largest position is
/// `maxPos`: frequencies theta_i (d/2 of them), position divisor and cos/sin multiplier.
void editRotaryTable(const Intervention& edit, int headDim, std::int64_t maxPos,
                     std::vector<double>& invFreq, double& posScale, double& mscale);

}  // namespace lengen::engine::model
