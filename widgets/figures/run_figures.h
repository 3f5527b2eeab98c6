#pragma once
// The figures of a run, built from what its run file and analysis file store: training
// curves, one evaluation figure per method, attention, duplicated-example and serial-position
// figures. Names follow the reference's file names where it had them (ood_length,
// avg_attention_score, noise_points=<c>, inst+noise+tar, baseline_all_dup,
// change_inst_position, lost_in_mid). Used by `lengen export` and by the studio's views.

#include <optional>
#include <string>
#include <vector>

#include "figure_spec.h"
#include "lengen/engine/analysis.h"

namespace lengen::figures {

struct FigureInfo {
    std::string name;         ///< e.g. "ood_length", "attention_map/long"
    std::string description;  ///< one line for --list and the GUI
    bool heatmap = false;
};

/// What can be drawn from the run now (Error(RunFile) for a missing or foreign run).
std::vector<FigureInfo> availableFigures(const std::string& run);

/// Which full map a heatmap figure shows.
struct MapSelection {
    int prompt = 0;
    int layer = -1;           ///< -1 = the last layer
    int head = 0;
    int r0 = 0, r1 = -1;      ///< query rows [r0, r1); -1 = to the end
    int c0 = 0, c1 = -1;      ///< key columns
};

/// A figure or a heatmap; exactly one is set.
struct Figure {
    std::optional<plots::FigureSpec> plot;
    std::optional<plots::HeatmapSpec> heatmap;
};

/// Builds the named figure. Error(Usage) naming the figure if it is not available.
Figure makeFigure(const std::string& run, const std::string& name, const MapSelection& map = {});

/// A stored curve as a series: positions 0..n-1, the mean, the bootstrap band when `band`.
plots::Series curveSeries(const std::string& name, const engine::CurveStats& stats,
                          const std::string& color = {}, bool band = true);

/// Axes of a per-position figure: squared error from -0.1 to 1.5 x the zero estimator (with
/// its dashed line) or accuracy from -0.05 to 1.05; x from -1 to xMax.
void errorAxes(plots::FigureSpec& f, bool classification, double zeroEstimator, double xMax);

/// The reference-like file name of a figure, without extension: probe figures of eval_atk
/// under duplicated/, "/" elsewhere replaced by "_" (e.g. "attention_map_long").
std::string figureFileName(const std::string& figure);

/// Writes every available figure of a run into `dir` in each format ("png", "svg", "pdf",
/// "csv"); returns the files written. Error(Io) naming the file that could not be written.
std::vector<std::string> exportAllFigures(const std::string& run, const std::string& dir,
                                          const std::vector<std::string>& formats, int dpi);

/// "x_3" for token 6, "y_3" for token 7: labels of interleaved prompt tokens.
std::string tokenLabel(int token);

}  // namespace lengen::figures
