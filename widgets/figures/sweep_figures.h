#pragma once
// The figures of a sweep, from its aggregate file (engine/sweep_aggregate.h): the paper-style
// grid (one panel per task, one curve per position encoding with its band over seeds) that
// `lengen export SWEEP --figure grid` writes and the studio's Sweeps view shows.

#include <string>
#include <vector>

#include "figure_spec.h"
#include "lengen/engine/sweep_aggregate.h"

namespace lengen::figures {

/// One panel per value of the `task` axis (one panel when the sweep has no task axis), one
/// curve per other group (PE, and config-key axes in its name): the trained model's mean over
/// seeds with its band, the training-length marker, the zero-estimator line or the accuracy
/// axis. Error(Usage) naming the method when no group has it.
plots::GridSpec sweepGridFigure(const engine::SweepAggregate& aggregate, const std::string& method);

/// The band the aggregate drew for `method`: one kind ("se", "bootstrap", …), or "auto" where its
/// curves differ (auto picks per curve); what a grid's provenance records.
std::string aggregateBand(const engine::SweepAggregate& aggregate, const std::string& method);

}  // namespace lengen::figures
