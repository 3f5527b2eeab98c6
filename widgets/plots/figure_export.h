#pragma once
// Writes a figure or heatmap to PNG, SVG, PDF, CSV (exactly the plotted data) or TeX (pgfplots
// code with its data files beside it, figure_tex.h), offscreen. Files appear atomically:
// written as <path>.partial and renamed.

#include "figure_spec.h"

#include <QString>
#include <optional>
#include <string>

class QCustomPlot;

namespace lengen::plots {

enum class Format { Png, Svg, Pdf, Csv, Tex };

/// "png", "svg", "pdf", "csv", "tex" (any case); nullopt otherwise.
std::optional<Format> formatFromName(const std::string& name);
/// The format a file name's extension implies.
std::optional<Format> formatFromPath(const QString& path);

struct ExportResult {
    bool ok = false;
    QString error;  ///< names the path when !ok
};

/// PNG is widthInches x heightInches at `dpi` pixels; SVG and PDF are vector pages of
/// widthInches x heightInches. I/O failures come back as an error naming `path` (no file left).
/// TeX: `texStandalone` makes the .tex a whole document (`pdflatex` compiles it alone).
ExportResult exportFigure(const FigureSpec& spec, const QString& path, Format format, int dpi = 150,
                          bool texStandalone = false);
ExportResult exportHeatmap(const HeatmapSpec& spec, const QString& path, Format format,
                           int dpi = 150, bool texStandalone = false);
ExportResult exportGrid(const GridSpec& spec, const QString& path, Format format, int dpi = 150,
                        bool texStandalone = false);

/// Saves what `plot` shows (already built) in a graphics format; used by the studio's
/// "Export" actions so that an interactive zoom is kept. CSV is not available this way.
ExportResult savePlot(QCustomPlot& plot, const QString& path, Format format, double widthInches,
                      double heightInches, int dpi, const QString& title);

/// The CSV text of a figure: header `series,x,y,band_low,band_high`, one row per point of
/// each series in order (band cells empty without a band). Numbers are the shortest text
/// that reads back to the same double; names with a comma or quote are quoted RFC 4180-style.
QString figureCsv(const FigureSpec& spec);
/// The CSV text of a grid: figureCsv of each panel with a first column `panel` (its title).
QString gridCsv(const GridSpec& spec);
/// The CSV text of a heatmap: header `row,col,value`, one row per cell in row-major order,
/// indices offset by firstRow/firstCol, values as float32 round-trip text (NaN cells skipped).
QString heatmapCsv(const HeatmapSpec& spec);

}  // namespace lengen::plots
