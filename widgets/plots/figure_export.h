#pragma once
// Writes a figure or heatmap to PNG, SVG, PDF or CSV (exactly the plotted data), offscreen.
// Files appear atomically: written as <path>.partial and renamed.

#include <QString>

#include <optional>
#include <string>

#include "figure_spec.h"

class QCustomPlot;

namespace lengen::plots {

enum class Format { Png, Svg, Pdf, Csv };

/// "png", "svg", "pdf", "csv" (any case); nullopt otherwise.
std::optional<Format> formatFromName(const std::string& name);
/// The format a file name's extension implies.
std::optional<Format> formatFromPath(const QString& path);

struct ExportResult {
    bool ok = false;
    QString error;  ///< names the path when !ok
};

/// PNG is widthInches x heightInches at `dpi`; SVG and PDF have the same size in points.
ExportResult exportFigure(const FigureSpec& spec, const QString& path, Format format, int dpi = 150);
ExportResult exportHeatmap(const HeatmapSpec& spec, const QString& path, Format format, int dpi = 150);

/// Saves what `plot` shows (already built) in a graphics format; used by the studio's
/// "Export" actions so that an interactive zoom is kept. CSV is not available this way.
ExportResult savePlot(QCustomPlot& plot, const QString& path, Format format, double widthInches,
                      double heightInches, int dpi, const QString& title);

/// The CSV text of a figure: header `series,x,y,band_low,band_high`, one row per point.
QString figureCsv(const FigureSpec& spec);
/// The CSV text of a heatmap: header `row,col,value`, one row per cell (NaN cells skipped).
QString heatmapCsv(const HeatmapSpec& spec);

}  // namespace lengen::plots
