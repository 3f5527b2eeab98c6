#pragma once
// Plain descriptions of publication figures, filled from run data (widgets/figures) and drawn
// by figure_builder into any QCustomPlot (an offscreen one for `lengen export`, the studio's
// widgets). std types only. docs/figures.md lists the conventions.

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lengen::plots {

/// One curve, optionally with a shaded band (e.g. the bootstrap 5–95 % band).
struct Series {
    std::string name;                   ///< legend entry
    std::vector<double> x, y;
    std::vector<double> bandLow, bandHigh;  ///< same length as x, or empty for no band
    std::string color;                  ///< "#rrggbb"; empty = palette colour by index
    double width = 2;                   ///< line width in points
    bool dashed = false;
    bool inLegend = true;
};

/// A shaded vertical region [x0, x1] over the whole y range (training length, a target block).
struct Span {
    double x0 = 0, x1 = 0;
    std::string color = "#808080";
    double alpha = 0.15;
    std::string label;                  ///< legend entry, empty = none
};

/// A horizontal line (e.g. the zero estimator's error at y = D).
struct HLine {
    double y = 0;
    std::string label;
    std::string color = "#808080";
    bool dashed = true;
};

/// A vertical line with a label at its top (e.g. the training length).
struct VLine {
    double x = 0;
    std::string label;
    std::string color = "#C0392B";
};

/// A text annotation at data coordinates, with a small tick mark.
struct Marker {
    double x = 0, y = 0;
    std::string text;
    std::string color = "#C0392B";
};

struct Axis {
    std::string label;
    std::optional<double> min, max;     ///< unset = fit the data
    bool log = false;
};

enum class LegendPlace { UpperRight, LowerRight, UpperLeft, OutsideRight, None };

/// A second axis rect to the right (width ratio 3 : 1) showing the same curves, spans and
/// lines restricted to [x0, x1] ("lost in the middle" figure).
struct ZoomPanel {
    double x0 = 0, x1 = 1;
    std::string title = "Zoomed In";
};

struct FigureSpec {
    std::string title;                  ///< may contain '\n'
    Axis x, y;
    std::vector<Series> series;
    std::vector<Span> spans;
    std::vector<HLine> hlines;
    std::vector<VLine> vlines;
    std::vector<Marker> markers;
    LegendPlace legend = LegendPlace::UpperRight;
    double widthInches = 6, heightInches = 5;
    std::optional<ZoomPanel> zoom;
};

/// A matrix as a colour map, row 0 at the top (attention: query rows x key columns).
struct HeatmapSpec {
    std::string title;
    int rows = 0, cols = 0;
    std::vector<float> values;          ///< row-major [rows, cols]; NaN = masked (drawn blank)
    std::string xLabel = "key", yLabel = "query", colorLabel = "weight";
    bool logScale = false;
    std::optional<double> zMin, zMax;   ///< colour range; unset = data range
    int firstRow = 0, firstCol = 0;     ///< index of row 0 / column 0 (a tile of a larger map)
    /// Tick labels for an index (e.g. token 2i -> "x_i", 2i+1 -> "y_i"); unset = numbers.
    std::function<std::string(int)> tickLabel;
    double widthInches = 6, heightInches = 5;
};

}  // namespace lengen::plots
