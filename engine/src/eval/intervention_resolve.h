#pragma once
// An intervention resolved for one run and one evaluation length: what the table
// (intervention_table.cpp) makes of a spec, with no Torch, so the catalog, `lengen list` and
// `sweep new` describe and check interventions in lengen-light. Applying one is
// eval/interventions.h.

#include <cstdint>
#include <string>

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

}  // namespace lengen::engine::eval
