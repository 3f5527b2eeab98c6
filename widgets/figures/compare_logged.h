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
/// Whether smoothing applies to it: a measurement (loss, excess loss, gradient norm, steps/s),
/// not a schedule or a clock (learning rate, wall clock).
bool isSmoothable(const std::string& method);

/// What a logged column is drawn against (issue 72), as TensorBoard and W&B offer it: the step;
/// relative time, the run's own training clock (seconds of training since it started, a resume
/// continuing it: the log's wall_seconds); or wall time, the run's creation plus that clock,
/// counted from the earliest compared run's creation (the log has no calendar time per row, so
/// a pause before a resume is not on this axis either).
enum class LoggedX { Step, Relative, Wall };
/// "step", "relative", "wall": how a provenance file and a saved view record it; and back.
const char* loggedXName(LoggedX x);
std::optional<LoggedX> loggedXFromName(const std::string& name);

/// One run's logged column as Compare reads a method: a result whose one curve is the column
/// by logged row (NaN where a row has no value), the rows' steps and the rows' training clock
/// (seconds, NaN where a row has none). nullopt when the run's log holds no value of the
/// column. Throws engine::Error for a damaged file.
struct LoggedRun {
    engine::EvalResult result;
    std::vector<std::int64_t> steps;
    std::vector<double> seconds;
};
std::optional<LoggedRun> readLoggedRun(const std::string& run, const std::string& method);

/// Puts every run's values at the steps any of them logged, NaN where a run logged nothing
/// (each run drawn to its own last step; a group's mean taken step by step over the runs that
/// logged it); returns those steps. Each run's steps ascend, as a log's do.
std::vector<std::int64_t> alignLoggedRuns(std::vector<engine::EvalResult>& results,
                                          std::vector<std::vector<std::int64_t>> steps);

/// `values` (one per entry of `steps`) at the steps of `common`, NaN where the run logged none;
/// both ascend, as a log's steps do.
std::vector<double> valuesAtSteps(const std::vector<double>& values,
                                  const std::vector<std::int64_t>& steps,
                                  const std::vector<std::int64_t>& common);

/// The exponential moving average the Train tab's slider draws: weight `alpha` on the past (0:
/// the values as they are); a NaN row keeps the average so far.
std::vector<double> emaOf(const std::vector<double>& raw, double alpha);

/// The x axis of a logged figure: its label and each series' x (in the series' order).
struct LoggedXAxis {
    std::string label;
    std::vector<std::vector<double>> perSeries;
};
/// Seconds as the axis shows them: in s below 2 minutes, in min below 2 hours, else in h, by the
/// largest finite value; the unit is returned ("s", "min", "h") and `columns` converted.
std::string scaleSeconds(std::vector<std::vector<double>>& columns);

/// The training axes: `x` along x (points whose x is not finite are left out: a run that logged
/// no clock has no place on a time axis), the column along y, log y for the loss and the
/// gradient norm; ", EMA a" after the title when smoothed.
void loggedAxes(plots::FigureSpec& f, const std::string& method, const LoggedXAxis& x,
                double smoothing);

}  // namespace lengen::ui
