#pragma once
// Builds a FigureSpec or HeatmapSpec into a QCustomPlot: no window code, so the same call
// serves the studio's embedded plots and offscreen export. The look follows the reference's
// figures (seaborn "darkgrid" with the "colorblind" palette).

#include "figure_spec.h"

#include <QColor>
#include <QImage>

class QCustomPlot;

namespace lengen::plots {

/// Palette colour i (cycled): seaborn's colorblind palette.
QColor paletteColor(int i);

/// The run palette's colour i ("#rrggbb", cycled over its twenty): what runColor hands out in
/// order, and an encoding's own colour by its row (figures::encodingColor).
std::string runPaletteColor(int i);

/// A run's colour ("#rrggbb") for the life of the process, so a run looks the same in every
/// view that draws several runs (comparison, training overlay, the run table's swatch) and in
/// their exports: a key (the run id) gets the first palette colour no other key holds, in the
/// order keys are first drawn; past twenty runs colours repeat. GUI thread only.
std::string runColor(const std::string& key);
/// The colour `key` already holds, or "" if no view has drawn it yet. A key shown as another
/// (a run drawn as its group's curve) answers that one's colour.
std::string assignedRunColor(const std::string& key);
/// The colour a run is shown in now, in every view that draws runs: the one it holds as
/// drawn (its Compare group's), else its own (assigned now). The Runs list's swatch, the Train
/// tab's overlay and Compare agree on it (issue 70, defect 17).
std::string shownRunColor(const std::string& key);
/// The run `key` is drawn as `drawnAs` (Compare's group curve) until said otherwise ("" or the
/// key itself: as itself again), so its swatch in the run table shows the colour it has there.
void showRunColorAs(const std::string& key, const std::string& drawnAs);
/// The colour of a group or category value ("RoPE", "RoPE, learning_rate=0.001"): the one
/// Compare's group of that name is drawn in, and the Hyperparameters tab's lines of that value
/// when it colours by that column (issue 80, defect 23: the two palettes differed).
std::string categoryColor(const std::string& value);
/// From now on category `value` is the run palette's colour `i` (an encoding's own colour,
/// figures::categoryColor), so the swatches of runs drawn as its group show that colour too.
void fixCategoryColor(const std::string& value, int i);
/// The runs `view` draws now ("compare", "train"): a run's swatch in the Runs list shows only
/// while some view draws it (issue 80, defect 23: swatches stayed on runs that had left
/// Compare). The runs Compare no longer draws are no longer drawn as its group.
void setRunsDrawn(const std::string& view, const std::vector<std::string>& keys);
/// The colour `key` is drawn in now by some view (its group's in Compare), "" while none does.
std::string drawnRunColor(const std::string& key);

/// A baseline's colour beside runs (Compare's baselines of the first run): dark neutral tones
/// no run takes, so a baseline never reads as a run (issue 80, defect 12: Least Squares in a
/// run's green); cycled.
std::string baselineColor(int i);

/// Clears `plot` and draws the figure (graphs, bands, spans, lines, markers, legend, title).
void buildFigure(QCustomPlot& plot, const FigureSpec& spec);

/// Clears `plot` and draws the heatmap with a colour scale.
/// Panels in rows of `columns`, the shared legend beside them.
void buildGrid(QCustomPlot& plot, const GridSpec& spec);

void buildHeatmap(QCustomPlot& plot, const HeatmapSpec& spec);

/// A row-major rows x cols matrix coloured as buildHeatmap colours it (viridis over
/// [zMin, zMax], log10 when `logScale`), one pixel per cell, NaN transparent: thumbnails.
QImage heatmapImage(const std::vector<float>& values, int rows, int cols, double zMin, double zMax,
                    bool logScale);

}  // namespace lengen::plots
