#pragma once
// The hyperparameter view's figure (issue 55): the runs table (engine::runTable: varied keys,
// then results) as parallel coordinates, one axis per chosen column, coloured by one, with the
// user's brushes; and its provenance (every run drawn, the axes, the colour, the brushes and the
// runs inside them). The studio's Hyperparameters tab draws it; its exports write it.

#include <QJsonObject>

#include <string>
#include <vector>

#include "lengen/engine/run_table.h"
#include "parallel_coords.h"

namespace lengen::figures {

// The choice is the engine's value (run_table.h): a saved view keeps it as it is.
using HParamsBrush = engine::HParamsBrush;
using HParamsChoice = engine::HParamsChoice;

/// What is drawn when the user chose nothing: the key columns (at most 8), the final loss, then
/// the first stored evaluation at the training length and at the longest; coloured by the last
/// of those results a run has.
HParamsChoice defaultHParamsChoice(const engine::RunTable& table);

/// The columns that can be axes: every column but the label (status included: categorical).
std::vector<std::string> axisColumns(const engine::RunTable& table);

/// The figure: text columns are categorical axes (their values sorted, a missing value a gap);
/// numbers run bottom to top, on a log scale where all are positive and span two decades or
/// more (a learning rate). Brushes on columns not drawn are dropped.
plots::ParallelSpec hparamsSpec(const engine::RunTable& table, const HParamsChoice& choice,
                                const std::string& title = {});

/// Puts `brushes` on the spec's axes of the same names (the others are dropped).
void applyBrushes(plots::ParallelSpec& spec, const std::vector<HParamsBrush>& brushes);

/// The title an export carries: "40 runs", or "12 of 40 runs inside the brushes".
std::string hparamsTitle(const plots::ParallelSpec& spec);
/// The same from counts (the studio keeps which rows are inside; no second pass over them).
std::string hparamsTitle(int runs, int inside, bool brushed);

/// The figure from run files, as `lengen export --from` redraws it: each run read again
/// (engine::readRunEntry), the table with `choice`'s key columns, the spec as chosen, titled.
plots::ParallelSpec hparamsFromRuns(const std::vector<std::string>& runs,
                                    const HParamsChoice& choice);

/// The spec's brushes as column-named brushes (what the view keeps across redraws).
std::vector<HParamsBrush> namedBrushes(const plots::ParallelSpec& spec);

/// The provenance written beside an export (docs/figures.md): `runs` are the run files of the
/// table's rows in order; view.figure is "hparams".
QJsonObject hparamsProvenance(const std::vector<std::string>& runs, const engine::RunTable& table,
                              const plots::ParallelSpec& spec);

}  // namespace lengen::figures
