#pragma once
// The figures of a run, built from what its run file and analysis file store: training
// curves, one evaluation figure per method, attention, duplicated-example and serial-position
// figures. Names follow the reference's file names where it had them (ood_length,
// avg_attention_score, noise_points=<c>, inst+noise+tar, baseline_all_dup,
// change_inst_position, lost_in_mid). Used by `lengen export` and by the studio's views.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "figure_spec.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/run_file.h"

namespace lengen::figures {

/// Which view a figure belongs to: the studio files figures by this, never by their text.
enum class FigureKind {
    Training,    ///< the loss curve
    Evaluation,  ///< error per position of one method (LenGen's or imported)
    Probe,       ///< attention curves, duplicated-example attacks, serial position
    Heatmap,     ///< a full attention map
};

struct FigureInfo {
    std::string name;         ///< e.g. "ood_length", "attention_map/long"
    std::string description;  ///< one line for --list and the GUI
    FigureKind kind = FigureKind::Probe;
    bool heatmap() const { return kind == FigureKind::Heatmap; }
};

/// What can be drawn from the run now (Error(RunFile) for a missing or foreign run).
std::vector<FigureInfo> availableFigures(const std::string& run);

/// Which full map a heatmap figure shows.
struct MapSelection {
    int prompt = 0;
    int layer = -1;            ///< -1 = the last layer
    int head = 0;              ///< -1 = the mean over heads
    int r0 = 0, r1 = -1;       ///< query rows [r0, r1); -1 = to the end
    int c0 = 0, c1 = -1;       ///< key columns
    std::string intervention;  ///< the map probed under this intervention; "" = as trained
};

/// A stored evaluation a figure draws, as its provenance records it: what made the result,
/// and the legend names of the curves taken from it (none of its numbers).
struct DrawnEvaluation {
    std::string method, source;  ///< "lengen" or "metrics.json:<path>"
    std::string intervention, interventionParams;
    int prompts = 0, points = 0, trainPoints = 0, trainedPoints = 0;
    std::uint64_t seed = 0;
    std::int64_t checkpointStep = 0;
    std::vector<std::string> curves;
};
DrawnEvaluation drawnEvaluation(const engine::EvalResult& r);

/// What a figure drew, recorded by its builder as it reads the files: the run, and each stored
/// evaluation whose curves are in it (an intervention equal to the model there is not drawn,
/// so not listed). Its provenance serialises this; nothing is read back by the figure's name.
struct FigureSources {
    engine::RunFileInfo run;
    std::vector<DrawnEvaluation> evaluations;
};

/// A figure or a heatmap (exactly one is set), and what it drew.
struct Figure {
    std::optional<plots::FigureSpec> plot;
    std::optional<plots::HeatmapSpec> heatmap;
    FigureSources sources;
};

/// Builds the named figure. Error(Usage) naming the figure if it is not available.
Figure makeFigure(const std::string& run, const std::string& name, const MapSelection& map = {});

/// One query's attention over the keys it sees (0..query) in a stored map `setting` (layer,
/// head -1 = mean, prompt from `m`), x-token and y-token keys as two series, with the
/// training-length marker. Under `m.intervention` the series are named with it and dashed,
/// and the keys it masks (weight exactly 0) are gaps. Error(Usage) naming what is out of range.
plots::FigureSpec attentionRowFigure(const std::string& run, const std::string& setting,
                                     const MapSelection& m, int query);

/// Every layer x head map of one prompt, pooled (max over each block) to size x size cells:
/// maps[l * (heads + 1) + h] for head h, maps[l * (heads + 1) + heads] for the mean over heads;
/// row-major, NaN above the diagonal (masked). Layers and heads count from 0.
struct MapThumbnails {
    int layers = 0, heads = 0, tokens = 0, size = 0;
    std::vector<std::vector<float>> maps;
};
MapThumbnails mapThumbnails(const std::string& run, const std::string& setting, int prompt,
                            int size);

/// A stored curve as a series: positions 0..n-1, the mean, the bootstrap band when `band`.
/// Where every curve figure (a run's evaluation, Compare, a sweep's grid) marks the training
/// length: k = N - 1, the last in-context position a training prompt of N points predicts
/// (the README's and the tables' "k = 8" for 9 points). The reference draws its "Bound" one
/// further, at N.
inline double trainLengthK(int trainPoints) { return trainPoints - 1.0; }

plots::Series curveSeries(const std::string& name, const engine::CurveStats& stats,
                          const std::string& color = {}, bool band = true);

/// Axes of a per-position figure: squared error from -0.1 to 1.5 x the zero estimator (with
/// its dashed line) or accuracy from -0.05 to 1.05; x from -1 to xMax.
void errorAxes(plots::FigureSpec& f, bool classification, double zeroEstimator, double xMax);

/// The reference-like file name of a figure, without extension: probe figures of eval_atk
/// under duplicated/, "/" elsewhere replaced by "_" (e.g. "attention_map_long").
std::string figureFileName(const std::string& figure);

/// Writes every available figure of a run into `dir` in each format ("png", "svg", "pdf",
/// "csv", "tex") and beside each its <figure>.provenance.json; returns the files written.
/// Error(Io) naming the file that could not be written.
std::vector<std::string> exportAllFigures(const std::string& run, const std::string& dir,
                                          const std::vector<std::string>& formats, int dpi);

/// A run in a legend of several runs: "<PE> seed <s> (<run id>)", so runs that differ only
/// in their seed stay apart (compare curves, training overlays, their CSV columns).
std::string runLegend(const engine::RunFileInfo& info);

/// "x_3" for token 6, "y_3" for token 7: labels of interleaved prompt tokens.
std::string tokenLabel(int token);

}  // namespace lengen::figures
