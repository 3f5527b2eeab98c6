#pragma once
// Parallel coordinates (issue 55's hyperparameter view, W&B's and TensorBoard HParams' plot):
// one vertical axis per column, one polyline per row through its values, coloured by one
// numeric column, and brushes — a range on an axis — that keep the rows inside every brush.
// Plain values in (the figures library fills them from the runs table); one paint routine for
// the studio's widget and every export, so what is exported is what is shown. No runs here.

#include <QRectF>
#include <QString>
#include <QStringList>

#include <optional>
#include <string>
#include <vector>

#include "figure_export.h"

class QPainter;

namespace lengen::plots {

struct ParallelAxis {
    std::string name;
    /// Text values (an encoding, a task) placed at 0, 1, ... in `categories`' order; else the
    /// axis runs from `min` (bottom) to `max` (top).
    bool categorical = false;
    std::vector<std::string> categories;
    double min = 0, max = 1;
    bool log = false;       ///< log10 scale (a learning rate); set only when every value is > 0
    bool integers = false;  ///< whole numbers only (seeds, layers): ticks at whole numbers
    /// Each category's colour ("#rrggbb") where it colours the rows: the one its value has in
    /// every view (plots::categoryColor, filled on the GUI thread); empty: the palette in order.
    std::vector<std::string> categoryColors{};
};

/// A brush: the rows whose value on `axis` lies in [low, high] (data values; a categorical
/// axis holds category indices). A row without a value on a brushed axis is outside it.
struct ParallelBrush {
    int axis = 0;
    double low = 0, high = 0;
};

struct ParallelSpec {
    std::string title;
    std::vector<ParallelAxis> axes;
    std::vector<std::string> rowNames;  ///< one per row (a run's id): the CSV's first column
    std::string rowHeader = "row";      ///< that column's name
    std::vector<double> values;         ///< row-major [rows, axes]; NaN = no value (a gap)
    int colorAxis = -1;  ///< the axis whose value colours a row (a category: the palette); -1 none
    std::vector<ParallelBrush> brushes;
    double widthInches = 9, heightInches = 4.5;

    int rows() const { return axes.empty() ? 0 : int(values.size() / axes.size()); }
    double value(int row, int axis) const { return values[size_t(row) * axes.size() + axis]; }
};

/// Fills each axis's range (min, max; categories are given) from the finite values, with a
/// little room when all are equal, and log where asked and every value is positive.
void fitAxes(ParallelSpec& spec);

/// Where `v` sits on `axis`, 0 at the bottom and 1 at the top (NaN for NaN).
double axisFraction(const ParallelAxis& axis, double v);
/// The data value at fraction `f` of `axis` (the inverse of axisFraction).
double axisValue(const ParallelAxis& axis, double f);

/// A config key as figures name it: its last part ("learning_rate"), with its parent where the
/// last part says nothing alone ("points.end", "dims.interval").
std::string shortKeyName(const std::string& key);

/// The name written over axis `axis`: its key's last part ("learning_rate") where no other axis
/// ends the same way, else the whole name.
std::string axisLabel(const ParallelSpec& spec, int axis);

/// A brush as it selects: on a categorical axis it holds whole categories, the ones its range
/// reaches (0.6..1.4 holds category 1; a click's 1.02..1.02 too), drawn a category wide.
ParallelBrush snappedBrush(const ParallelSpec& spec, ParallelBrush brush);

/// For each row, whether it lies inside every brush (all rows with no brush).
std::vector<char> rowsInside(const ParallelSpec& spec);

/// The plot area's geometry in a rectangle: where each axis is drawn, and its top and bottom.
struct ParallelLayout {
    QRectF plot;            ///< between the axes' first and last x, top and bottom
    std::vector<double> x;  ///< each axis's x
    double fractionAt(double y) const { return (plot.bottom() - y) / plot.height(); }
    double yAt(double f) const { return plot.bottom() - f * plot.height(); }
};
ParallelLayout parallelLayout(const ParallelSpec& spec, const QRectF& area);
/// The categorical axis whose category label (drawn left of the axis) is at `pos`, -1 for none:
/// a drag started on "RoPE" brushes that axis (issue 80, defect 24).
int categoryLabelAxis(const ParallelLayout& layout, const ParallelSpec& spec, QPointF pos);

/// Draws the figure into `area`: title, axes with their names and ticks, the rows outside the
/// brushes in light grey under those inside in their colour, the brushes, the colour scale.
/// `inside` is rowsInside(spec) (given, so a caller that keeps it does not redo it).
/// Thousands of rows are drawn without antialiasing and in one call per colour.
/// Without `brushes`, the brushes' boxes are left to paintParallelBrushes (the studio draws them
/// over its image at once, while the image of the rows follows from its worker).
void paintParallel(QPainter& painter, const QRectF& area, const ParallelSpec& spec,
                   const std::vector<char>& inside, bool brushes = true);
void paintParallelBrushes(QPainter& painter, const QRectF& area, const ParallelSpec& spec);

/// "#rrggbb" of a colour-scale fraction in [0, 1] (viridis, as matplotlib's).
QString scaleColor(double fraction);

/// An axis tick's text (the screen, the exports): whole numbers as written ("1500", not
/// "1.5e+03"), three significant digits without an exponent between 0.001 and 10⁷ ("0.25",
/// "12346" for 12345.6), an exponent beyond ("1e-05": a learning rate).
QString parallelTickText(double v);
/// The ticks of one axis in one notation (issue 80, defect 15: a seed axis read "1e+09" beside
/// "1000000"): as parallelTickText when every value takes it without an exponent, else every
/// value with one ("1e+06", "5e+08").
QStringList parallelTickTexts(const std::vector<double>& values);

/// PNG (widthInches x heightInches at dpi), SVG or PDF (vector pages) as paintParallel draws
/// it; CSV: the rows, a column per axis and `inside` (1 inside every brush, else 0); TeX: a
/// pgfplots figure (its data file beside it). Atomic, an error naming the path.
ExportResult exportParallel(const ParallelSpec& spec, const QString& path, Format format,
                            int dpi = 150, bool texStandalone = false);
/// The CSV text exportParallel writes.
QString parallelCsv(const ParallelSpec& spec);

}  // namespace lengen::plots
