#pragma once
// Compare's training mode (issue 55): a column every run logs (loss, gradient norm, learning
// rate, steps/s, wall clock), by step, in place of an evaluation method — "training: grad
// norm" — grouped, averaged over seeds and banded exactly as the evaluation curves are
// (compareRuns reads it through these). What TensorBoard and W&B draw as a scalar across runs.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "figure_spec.h"
#include "lengen/engine/analysis.h"

namespace lengen::ui {

/// Compare's entries for the logged columns: "training: loss", "training: grad norm", ….
std::vector<std::string> loggedCompareMethods();
/// Whether `method` is one of them.
bool isLoggedMethod(const std::string& method);

/// One run's logged column as Compare reads a method: a result whose one curve is the column
/// by logged row (NaN where a row has no value), and the rows' steps. nullopt when the run's
/// log holds no value of the column. Throws engine::Error for a damaged file.
struct LoggedRun {
    engine::EvalResult result;
    std::vector<std::int64_t> steps;
};
std::optional<LoggedRun> readLoggedRun(const std::string& run, const std::string& method);

/// Keeps every run's values at the steps all of them logged (a group's mean is taken step by
/// step; runs of other lengths or logging intervals share fewer) and says so when that drops
/// rows; returns those steps. Each run's steps ascend, as a log's do.
std::vector<std::int64_t> alignLoggedRuns(std::vector<engine::EvalResult>& results,
                                          std::vector<std::vector<std::int64_t>> steps,
                                          std::vector<std::string>& notes);

/// The training axes: step along x (each series' x the logged steps), the column along y, log
/// y for the loss and the gradient norm.
void loggedAxes(plots::FigureSpec& f, const std::string& method,
                const std::vector<std::int64_t>& steps);

}  // namespace lengen::ui
