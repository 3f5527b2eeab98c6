#pragma once
// Plain descriptions of publication figures, filled from run data (widgets/figures) and drawn
// by figure_builder into any QCustomPlot (an offscreen one for `lengen export`, the studio's
// widgets). std types only, so engine-side glue can fill them. docs/figures.md lists the
// conventions. All coordinates are data coordinates unless a field says otherwise.

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lengen::plots {

/// One curve, optionally with a shaded band (e.g. the bootstrap 5–95 % band).
struct Series {
    std::string name;  ///< legend entry (empty = none) and the CSV's `series`
    /// Points; min(x.size(), y.size()) are drawn, a NaN y leaves a gap.
    std::vector<double> x, y;
    /// Band edges, same length as x, or both empty for no band.
    std::vector<double> bandLow, bandHigh;
    std::string color;  ///< "#rrggbb"; empty = palette colour by index
    double width = 2;   ///< line width in points
    bool dashed = false;
    bool inLegend = true;
    bool staircase = false;  ///< each value held until the next x (a curriculum's stages)
    /// A dot at every point too: a point between two gaps (NaN neighbours) has no line to show it.
    bool points = false;
};

/// A shaded vertical region [x0, x1] over the whole y range (training length, a target block).
struct Span {
    double x0 = 0, x1 = 0;
    std::string color = "#808080";
    double alpha = 0.15;  ///< opacity of the fill, 0..1
    std::string label;    ///< legend entry (a filled box), empty = none
};

/// A horizontal line across the panel (e.g. the zero estimator's error at y = D).
struct HLine {
    double y = 0;
    std::string label;  ///< legend entry, empty = none
    std::string color = "#808080";
    bool dashed = true;
};

/// A vertical line with its label written at its top, right of the line (training length).
struct VLine {
    double x = 0;
    std::string label;
    std::string color = "#C0392B";
};

/// A text annotation above the point (x, y), with a small "|" tick ending on the point.
struct Marker {
    double x = 0, y = 0;
    std::string text;
    std::string color = "#C0392B";
};

struct Axis {
    std::string label;
    std::optional<double> min, max;  ///< unset = fit the data (3 % padding)
    bool log = false;                ///< log10 scale; non-positive values are not fitted
};

/// Where the legend goes: inside the main panel's corner, or beside the panels.
enum class LegendPlace { UpperRight, LowerRight, UpperLeft, OutsideRight, None };

/// A second axis rect to the right (width ratio 3 : 1) showing the same curves, spans and
/// hlines restricted to [x0, x1] with the main panel's y range ("lost in the middle" figure).
struct ZoomPanel {
    double x0 = 0, x1 = 1;
    std::string title = "Zoomed In";  ///< written above the panel
};

/// A line figure: curves with bands, shaded regions, reference lines, annotations.
struct FigureSpec {
    std::string title;  ///< may contain '\n'; empty = no title row
    Axis x, y;
    std::vector<Series> series;  ///< drawn in order; palette colours by index
    std::vector<Span> spans;
    std::vector<HLine> hlines;
    std::vector<VLine> vlines;  ///< main panel only
    std::vector<Marker> markers;
    LegendPlace legend = LegendPlace::UpperRight;
    double widthInches = 6, heightInches = 5;  ///< exported size; fonts are in points of it
    std::optional<ZoomPanel> zoom;
};

/// Several line figures as panels of one figure (the sweep's grid: one panel per task), with
/// one legend for all of them: a series name seen in several panels is listed once, and the
/// same name keeps the same colour in every panel (give it `color`, or palette by first use).
struct GridSpec {
    std::string title;
    std::vector<FigureSpec> panels;  ///< each panel's `title` is written above it
    int columns = 3;
    double widthInches = 12, heightInches = 7;
};

/// A matrix as a colour map, row 0 at the top (attention: query rows x key columns).
struct HeatmapSpec {
    std::string title;
    int rows = 0, cols = 0;
    std::vector<float> values;  ///< row-major [rows, cols]; NaN = masked (drawn blank)
    std::string xLabel = "key", yLabel = "query", colorLabel = "weight";
    bool logScale = false;             ///< log10 colour scale; cells <= 0 are not fitted
    std::optional<double> zMin, zMax;  ///< colour range; unset = finite data range
    int firstRow = 0, firstCol = 0;    ///< index of row 0 / column 0 (a tile of a larger map)
    /// A boundary drawn across the map at this index on both axes (e.g. the training length in
    /// tokens: queries and keys past it were never seen in training); unset = none.
    std::optional<int> boundary;
    std::string boundaryLabel;
    /// Tick labels for an index (e.g. token 2i -> "x_i", 2i+1 -> "y_i"); unset = numbers.
    /// Labels are placed at even indices only, about ten per axis.
    std::function<std::string(int)> tickLabel;
    std::function<std::string(int)> xTickLabel, yTickLabel;  ///< per axis; override tickLabel
    double widthInches = 6, heightInches = 5;
};

}  // namespace lengen::plots
