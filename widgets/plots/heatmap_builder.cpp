// buildHeatmap (declared in figure_builder.h): a matrix as a QCPColorMap beside a colour scale.

#include "figure_builder.h"
#include "plot_style.h"
#include "qcp.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lengen::plots {

using style::qs;

namespace {

// viridis: perceptually uniform and still readable printed in grey (matplotlib's default).
QCPColorGradient viridis()
{
    const char* const stops[] = {"#440154", "#482878", "#3E4A89", "#31688E", "#26828E",
                                 "#1F9E89", "#35B779", "#6DCD59", "#B4DE2C", "#FDE725"};
    QCPColorGradient g;
    g.clearColorStops();
    for (int i = 0; i < 10; ++i)
        g.setColorStopAt(i / 9.0, QColor(stops[i]));
    g.setNanHandling(QCPColorGradient::nhTransparent);  // masked cells show the white panel
    return g;
}

double cellValue(const HeatmapSpec& spec, int r, int c)
{
    const size_t at =
        static_cast<size_t>(r) * static_cast<size_t>(spec.cols) + static_cast<size_t>(c);
    return at < spec.values.size() ? double(spec.values[at])
                                   : std::numeric_limits<double>::quiet_NaN();
}

// The colour range: the spec's bounds, else the finite (log: positive) data range.
QCPRange colorRange(const HeatmapSpec& spec)
{
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (int r = 0; r < spec.rows; ++r)
        for (int c = 0; c < spec.cols; ++c) {
            const double v = cellValue(spec, r, c);
            if (std::isfinite(v) && (!spec.logScale || v > 0)) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        }
    if (spec.zMin && (!spec.logScale || *spec.zMin > 0))
        lo = *spec.zMin;
    if (spec.zMax && (!spec.logScale || *spec.zMax > 0))
        hi = *spec.zMax;
    if (!std::isfinite(lo) || !std::isfinite(hi))
        return spec.logScale ? QCPRange(1e-4, 1) : QCPRange(0, 1);
    if (hi <= lo)
        hi = spec.logScale ? lo * 10 : lo + 1;
    return {lo, hi};
}

// Tick labels at an even step from an even index, so interleaved x_i / y_i token labels show
// one kind only and at most about ten of them fit along the axis.
QSharedPointer<QCPAxisTicker> indexTicker(const std::function<std::string(int)>& label, int first,
                                          int count)
{
    if (!label) {
        QSharedPointer<QCPAxisTicker> t(new QCPAxisTicker);
        t->setTickStepStrategy(QCPAxisTicker::tssReadability);
        return t;
    }
    QSharedPointer<QCPAxisTickerText> t(new QCPAxisTickerText);
    const int step = std::max(2, (count / 10 + 1) & ~1);
    for (int i = first + (first & 1); i < first + count; i += step)
        t->addTick(i, qs(label(i)));
    return t;
}

QCPColorScale* addColorScale(QCustomPlot& plot, QCPLayoutGrid* body, const HeatmapSpec& spec)
{
    auto* scale = new QCPColorScale(&plot);
    body->addElement(0, 1, scale);
    scale->setType(QCPAxis::atRight);
    scale->setBarWidth(14);
    auto* axis = scale->axis();
    axis->setLabel(qs(spec.colorLabel));
    axis->setLabelFont(style::font(style::kLabelPt));
    axis->setTickLabelFont(style::font(style::kTickPt));
    axis->setLabelColor(style::textColor());
    axis->setTickLabelColor(style::textColor());
    axis->setBasePen(Qt::NoPen);
    axis->setTickPen(QPen(style::textColor(), 1));
    axis->setSubTickPen(Qt::NoPen);
    if (spec.logScale) {
        axis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
        axis->setNumberFormat(QStringLiteral("eb"));
        axis->setNumberPrecision(0);
    }
    return scale;
}

}  // namespace

void buildHeatmap(QCustomPlot& plot, const HeatmapSpec& spec)
{
    auto* body = style::beginFigure(plot, spec.title);
    auto* rect = new QCPAxisRect(&plot);
    body->addElement(0, 0, rect);
    style::styleAxisRect(rect);
    rect->setBackground(Qt::white);
    for (auto* a : rect->axes())
        a->grid()->setVisible(false);
    auto* xa = rect->axis(QCPAxis::atBottom);
    auto* ya = rect->axis(QCPAxis::atLeft);
    xa->setLabel(qs(spec.xLabel));
    ya->setLabel(qs(spec.yLabel));
    ya->setRangeReversed(true);  // row 0 at the top, like a matrix
    const int rows = std::max(0, spec.rows), cols = std::max(0, spec.cols);
    xa->setRange(spec.firstCol - 0.5, spec.firstCol + std::max(cols, 1) - 0.5);
    ya->setRange(spec.firstRow - 0.5, spec.firstRow + std::max(rows, 1) - 0.5);
    xa->setTicker(
        indexTicker(spec.xTickLabel ? spec.xTickLabel : spec.tickLabel, spec.firstCol, cols));
    ya->setTicker(
        indexTicker(spec.yTickLabel ? spec.yTickLabel : spec.tickLabel, spec.firstRow, rows));

    auto* scale = addColorScale(plot, body, spec);
    const QCPColorGradient gradient = viridis();
    scale->setGradient(gradient);
    if (spec.logScale)
        scale->setDataScaleType(QCPAxis::stLogarithmic);
    scale->setDataRange(colorRange(spec));
    auto* margins = new QCPMarginGroup(&plot);
    rect->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    scale->setMarginGroup(QCP::msBottom | QCP::msTop, margins);

    if (rows > 0 && cols > 0) {
        auto* map = new QCPColorMap(xa, ya);
        map->data()->setSize(cols, rows);
        // Cell centres at integer indices, so ticks name the cell under them.
        map->data()->setRange(QCPRange(spec.firstCol, spec.firstCol + cols - 1),
                              QCPRange(spec.firstRow, spec.firstRow + rows - 1));
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c)
                map->data()->setCell(c, r, cellValue(spec, r, c));
        map->setInterpolate(false);
        map->setGradient(gradient);
        map->setColorScale(scale);  // takes the scale's gradient, range and scale type
        map->setTightBoundary(false);
    }
    if (spec.boundary) {  // between cell boundary-1 and boundary, on both axes
        const double at = *spec.boundary - 0.5;
        QPen pen(QColor(255, 255, 255, 220), 1.5, Qt::DashLine);
        for (bool vertical : {true, false}) {
            auto* line = new QCPItemStraightLine(&plot);
            line->setClipAxisRect(rect);
            line->point1->setAxes(xa, ya);
            line->point2->setAxes(xa, ya);
            line->point1->setCoords(vertical ? at : 0, vertical ? 0 : at);
            line->point2->setCoords(vertical ? at : 1, vertical ? 1 : at);
            line->setPen(pen);
        }
        if (!spec.boundaryLabel.empty()) {
            auto* label = new QCPItemText(&plot);
            label->setClipAxisRect(rect);
            label->position->setAxes(xa, ya);
            label->position->setCoords(at, spec.firstRow);
            label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
            label->setText(QStringLiteral(" ") + qs(spec.boundaryLabel));
            label->setColor(QColor(80, 80, 80));  // sits in the blank (causally masked) corner
        }
    }
    plot.replot(QCustomPlot::rpImmediateRefresh);
}

QImage heatmapImage(const std::vector<float>& values, int rows, int cols, double zMin, double zMax,
                    bool logScale)
{
    QImage image(std::max(cols, 1), std::max(rows, 1), QImage::Format_ARGB32);
    image.fill(Qt::transparent);
    QCPColorGradient gradient = viridis();  // color() is not const: it caches its lookup table
    const QCPRange range(zMin, zMax > zMin ? zMax : zMin + 1);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            const size_t at = size_t(r) * size_t(cols) + size_t(c);
            const double v = at < values.size() ? double(values[at]) : NAN;
            if (std::isfinite(v))
                image.setPixel(
                    c, r, gradient.color(logScale ? std::max(v, range.lower) : v, range, logScale));
        }
    return image;
}

}  // namespace lengen::plots
