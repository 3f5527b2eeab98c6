#pragma once
// What made a figure, written beside it as <figure>.provenance.json (issue 42, docs/figures.md):
// the run it draws (path, run id, seed, a hash of the resolved config), for each stored
// evaluation it draws the settings of that result (method, prompts, evaluation seed, intervention
// and its resolved parameters, checkpoint step), the view (figure name, map selection, hidden
// curves), and the LenGen and LibTorch versions and the date. `lengen export --from FILE`
// rebuilds the figure from it: the same data files, byte for byte, as long as the run is where
// it was and unchanged; a moved run is named, a changed one (its config hash differs) refused.

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <map>
#include <string>

#include "hparams_figure.h"
#include "lengen/engine/sweep_aggregate.h"
#include "run_figures.h"

namespace lengen::figures {

/// "fnv1a64:0123456789abcdef" of a run's resolved config text: stable across machines and
/// builds (not a security hash; it tells a changed run from the same one).
std::string configHash(const std::string& configYaml);

/// How a figure is shown, beside what it draws: the one value the Evaluation and Probes tabs,
/// Compare, `lengen export` and a provenance's "view" share (its keys are written and read in
/// figure_provenance.cpp only).
struct ViewOptions {
    MapSelection map;            ///< an attention map's selection
    QStringList hidden;          ///< curves hidden by a legend click: left out of an export
    bool logY = false;           ///< log y axis
    bool legendOutside = false;  ///< the legend beside the data instead of over it
    /// Each curve's colour as drawn ("#rrggbb" by legend name): a run's or a group's colour
    /// comes from the order the studio first drew it (plots::runColor), which a rebuild in a
    /// fresh process cannot know, so it takes the recorded one (issue 70, defect 9).
    std::map<std::string, std::string> colors;
};
/// The colours `spec` gives its named curves, as ViewOptions::colors records them.
std::map<std::string, std::string> seriesColors(const plots::FigureSpec& spec);

/// `view` applied to a line figure: its hidden curves removed, log y (without a fixed range,
/// which may hold 0), the legend beside the data, the recorded colours.
void applyView(plots::FigureSpec& spec, const ViewOptions& view);

/// The provenance of run figure `name`: the sources its builder recorded (Figure::sources: the
/// run and the stored evaluations drawn), shown as `view`.
QJsonObject figureProvenance(const FigureSources& sources, const std::string& name,
                             const ViewOptions& view);

/// The provenance of a figure drawn from several runs (Compare): every run, the evaluation of
/// `method` each contributes, and how the curves were grouped (`grouping`: kind, keys, band).
QJsonObject multiRunProvenance(const std::vector<FigureSources>& drawn, const std::string& method,
                               const QJsonObject& grouping, const ViewOptions& view);

/// The provenance of a sweep's grid of `method`: every cell's run the aggregate drew (cells
/// without results are not in it), the grouping and the band as aggregated.
QJsonObject sweepGridProvenance(const std::string& sweepDir, const std::string& method,
                                const engine::SweepAggregate& aggregate, const std::string& band);

/// The fields every provenance starts with: format, version, LenGen and LibTorch versions, date.
void stampProvenance(QJsonObject& provenance);

/// <dir>/<base>.provenance.json for a figure file (any of its formats), written atomically,
/// with the file's format (its extension) and, for TeX, whether it was `standalone` in `view`:
/// what `export --from` writes again by default. Error(Io) naming the path.
std::string writeProvenance(const std::string& figurePath, const QJsonObject& provenance,
                            bool standalone = false);

/// What --from rebuilds: the run, the figure and its view, checked against the run as it is.
struct FigureSource {
    std::string run, name;             ///< a sweep grid: the sweep folder and "grid"
    std::string method;                ///< a sweep grid's evaluation method
    std::vector<std::string> groupBy;  ///< a sweep grid's grouping, its band and resamples
    std::string band;
    int bootstrapTrials = 1000;
    std::vector<std::string> cells;  ///< a sweep grid's cells, as drawn
    /// A Compare figure (name "compare"): its runs (run files), grouping (compareGroupName),
    /// the keys it grouped by, whether it drew the baselines; `band` as for a grid.
    std::vector<std::string> runs;
    std::string group;
    std::vector<std::string> keys;
    bool baselines = false;
    /// A Compare figure of a logged column: each run's EMA weight and the x axis ("step",
    /// "relative", "wall": compare_logged.h's loggedXName).
    double smoothing = 0;
    std::string x = "step";
    /// The Hyperparameters view (name "hparams"): its runs (`runs`), axes, colour and brushes.
    HParamsChoice hparams;
    std::string format;  ///< the recorded file's format ("png", "tex", …; "" when not recorded)
    bool standalone = false;  ///< a TeX file written --standalone
    ViewOptions view;         ///< as the figure was shown
};
/// Error(Usage) for a file that is not a figure provenance; Error(RunFile) naming the run when
/// it is missing (moved), its config hash or checkpoint step differs, or the stored evaluations
/// the figure draws are not the ones recorded (changed since the figure was made).
FigureSource readProvenance(const std::string& path);

}  // namespace lengen::figures
