#pragma once
// Builds a FigureSpec or HeatmapSpec into a QCustomPlot: no window code, so the same call
// serves the studio's embedded plots and offscreen export. The look follows the reference's
// figures (seaborn "darkgrid" with the "colorblind" palette).

#include "figure_spec.h"

#include <QColor>

class QCustomPlot;

namespace lengen::plots {

/// Palette colour i (cycled): seaborn's colorblind palette.
QColor paletteColor(int i);

/// Clears `plot` and draws the figure (graphs, bands, spans, lines, markers, legend, title).
void buildFigure(QCustomPlot& plot, const FigureSpec& spec);

/// Clears `plot` and draws the heatmap with a colour scale.
void buildHeatmap(QCustomPlot& plot, const HeatmapSpec& spec);

} // namespace lengen::plots
