#include "figure_builder.h"

#include "qcp.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lengen::plots {

namespace {

const char* const kPalette[] = {"#0173B2", "#DE8F05", "#029E73", "#D55E00", "#CC78BC",
                                "#CA9161", "#FBAFE4", "#949494", "#ECE133", "#56B4E9"};
const QColor kBackground("#EAEAF2");

QColor colorOf(const std::string& hex, int index)
{
    return hex.empty() ? paletteColor(index) : QColor(QString::fromStdString(hex));
}

QString qs(const std::string& s) { return QString::fromStdString(s); }

// seaborn darkgrid: grey panel, white grid, no frame, dark tick labels.
void styleAxisRect(QCPAxisRect* rect)
{
    rect->setLayer(QStringLiteral("background"));  // a new rect sits on "main", over the spans
    rect->setBackground(kBackground);
    for (auto* axis : rect->axes()) {
        axis->setBasePen(Qt::NoPen);
        axis->setTickPen(Qt::NoPen);
        axis->setSubTickPen(Qt::NoPen);
        axis->grid()->setPen(QPen(Qt::white, 1.2));
        axis->grid()->setSubGridVisible(false);
        axis->grid()->setZeroLinePen(Qt::NoPen);
        axis->setTickLabelColor(QColor("#262626"));
        axis->setLabelColor(QColor("#262626"));
        axis->setTickLabelFont(QFont("DejaVu Sans", 9));
        axis->setLabelFont(QFont("DejaVu Sans", 10));
    }
    rect->axis(QCPAxis::atTop)->setVisible(false);
    rect->axis(QCPAxis::atRight)->setVisible(false);
}

struct Range {
    double lo = std::numeric_limits<double>::infinity();
    double hi = -std::numeric_limits<double>::infinity();
    void add(double v)
    {
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    QCPRange padded(std::optional<double> fixedLo, std::optional<double> fixedHi) const
    {
        double a = fixedLo.value_or(lo), b = fixedHi.value_or(hi);
        if (!std::isfinite(a) || !std::isfinite(b))
            return {0, 1};
        if (a == b)
            b = a + 1;
        const double pad = 0.03 * (b - a);
        return {fixedLo ? a : a - pad, fixedHi ? b : b + pad};
    }
};

// Curves, bands, spans, lines and markers of `spec` on one axis rect; x restricted to
// [xLo, xHi] when `clip` (the zoom panel).
void drawSeries(QCustomPlot& plot, QCPAxisRect* rect, const FigureSpec& spec, bool legend,
                std::optional<std::pair<double, double>> clip)
{
    auto* xa = rect->axis(QCPAxis::atBottom);
    auto* ya = rect->axis(QCPAxis::atLeft);
    auto inClip = [&](double x) { return !clip || (x >= clip->first && x <= clip->second); };
    for (const auto& s : spec.spans) {
        auto* r = new QCPItemRect(&plot);
        r->setClipAxisRect(rect);
        for (auto* p : {r->topLeft, r->bottomRight}) {
            p->setAxes(xa, ya);
            p->setAxisRect(rect);
        }
        r->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
        r->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
        r->topLeft->setCoords(s.x0, 0);
        r->bottomRight->setCoords(s.x1, 1);
        QColor c = colorOf(s.color, 0);
        c.setAlphaF(s.alpha);
        r->setBrush(c);
        r->setPen(Qt::NoPen);
        r->setLayer("grid");  // above the panel background, below the curves
    }
    int index = 0;
    for (const auto& s : spec.series) {
        const QColor color = colorOf(s.color, index++);
        QVector<double> x, y, lo, hi;
        for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            if (!inClip(s.x[i]))
                continue;
            x << s.x[i];
            y << s.y[i];
            if (s.bandLow.size() == s.x.size() && s.bandHigh.size() == s.x.size()) {
                lo << s.bandLow[i];
                hi << s.bandHigh[i];
            }
        }
        if (!lo.isEmpty()) {  // band: a fill between two invisible graphs, in the curve's colour
            auto* gLo = plot.addGraph(xa, ya);
            auto* gHi = plot.addGraph(xa, ya);
            gLo->setData(x, lo, true);
            gHi->setData(x, hi, true);
            gLo->setPen(Qt::NoPen);
            gHi->setPen(Qt::NoPen);
            QColor fill = color;
            fill.setAlphaF(0.3);
            gHi->setBrush(fill);
            gHi->setChannelFillGraph(gLo);
            gLo->removeFromLegend();
            gHi->removeFromLegend();
        }
        auto* g = plot.addGraph(xa, ya);
        g->setData(x, y, true);
        QPen pen(color, s.width);
        if (s.dashed)
            pen.setStyle(Qt::DashLine);
        g->setPen(pen);
        g->setName(qs(s.name));
        if (!legend || !s.inLegend || s.name.empty())
            g->removeFromLegend();
    }
    for (const auto& h : spec.hlines) {
        auto* line = new QCPItemStraightLine(&plot);
        line->setClipAxisRect(rect);
        for (auto* p : {line->point1, line->point2}) {
            p->setAxes(xa, ya);
            p->setAxisRect(rect);
        }
        line->point1->setCoords(0, h.y);
        line->point2->setCoords(1, h.y);
        line->setPen(QPen(colorOf(h.color, 7), 1.5, h.dashed ? Qt::DashLine : Qt::SolidLine));
        if (legend && !h.label.empty()) {  // a legend entry through an empty graph
            auto* g = plot.addGraph(xa, ya);
            g->setPen(line->pen());
            g->setName(qs(h.label));
        }
    }
    for (const auto& v : spec.vlines) {
        if (!inClip(v.x))
            continue;
        auto* line = new QCPItemStraightLine(&plot);
        line->setClipAxisRect(rect);
        for (auto* p : {line->point1, line->point2}) {
            p->setAxes(xa, ya);
            p->setAxisRect(rect);
        }
        line->point1->setCoords(v.x, 0);
        line->point2->setCoords(v.x, 1);
        line->setPen(QPen(colorOf(v.color, 3), 1.5));
        if (!v.label.empty()) {
            auto* text = new QCPItemText(&plot);
            text->setClipAxisRect(rect);
            text->position->setAxes(xa, ya);
            text->position->setAxisRect(rect);
            text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
            text->position->setCoords(v.x, 0.02);
            text->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
            text->setText(" " + qs(v.label));
            text->setColor(colorOf(v.color, 3));
            text->setFont(QFont("DejaVu Sans", 9));
        }
    }
    for (const auto& m : spec.markers) {
        if (!inClip(m.x))
            continue;
        auto* text = new QCPItemText(&plot);
        text->setClipAxisRect(rect);
        text->position->setAxes(xa, ya);
        text->position->setAxisRect(rect);
        text->position->setCoords(m.x, m.y);
        text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        text->setText(QStringLiteral("|\n") + qs(m.text));
        text->setColor(colorOf(m.color, 3));
        text->setFont(QFont("DejaVu Sans", 9, QFont::Bold));
    }
}

void fitAxes(QCPAxisRect* rect, const FigureSpec& spec, std::optional<std::pair<double, double>> clip)
{
    Range xr, yr;
    for (const auto& s : spec.series)
        for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            if (clip && (s.x[i] < clip->first || s.x[i] > clip->second))
                continue;
            xr.add(s.x[i]);
            yr.add(s.y[i]);
            if (i < s.bandHigh.size()) {
                yr.add(s.bandLow[i]);
                yr.add(s.bandHigh[i]);
            }
        }
    auto* xa = rect->axis(QCPAxis::atBottom);
    auto* ya = rect->axis(QCPAxis::atLeft);
    xa->setRange(clip ? QCPRange(clip->first, clip->second) : xr.padded(spec.x.min, spec.x.max));
    ya->setRange(yr.padded(spec.y.min, spec.y.max));
    for (auto [axis, def] : {std::pair{xa, &spec.x}, {ya, &spec.y}}) {
        if (def->log) {
            axis->setScaleType(QCPAxis::stLogarithmic);
            axis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
        }
    }
}

// Clears the plot and returns the grid the panels go into, under a title row spanning it.
QCPLayoutGrid* frame(QCustomPlot& plot, const std::string& title)
{
    plot.clearItems();
    plot.clearPlottables();
    // Keep the legend alive: clearing the layout would delete it with its axis rect.
    if (plot.legend && plot.legend->layout())
        plot.legend->layout()->take(plot.legend);
    if (!plot.legend)
        plot.legend = new QCPLegend;
    plot.plotLayout()->clear();
    plot.setBackground(Qt::white);
    int row = 0;
    if (!title.empty()) {
        auto* t = new QCPTextElement(&plot, qs(title), QFont("DejaVu Sans", 11, QFont::Bold));
        t->setTextColor(QColor("#262626"));
        plot.plotLayout()->addElement(row++, 0, t);
    }
    auto* body = new QCPLayoutGrid;
    plot.plotLayout()->addElement(row, 0, body);
    if (row > 0)
        plot.plotLayout()->setRowStretchFactor(0, 0.001);  // the title keeps its text height
    return body;
}

void placeLegend(QCustomPlot& plot, QCPLayoutGrid* body, QCPAxisRect* rect, LegendPlace place)
{
    if (place == LegendPlace::None || plot.legend->itemCount() == 0) {
        plot.legend->setVisible(false);
        return;
    }
    plot.legend->setVisible(true);
    plot.legend->setFont(QFont("DejaVu Sans", 9));
    plot.legend->setBrush(QColor(255, 255, 255, 220));
    plot.legend->setBorderPen(QPen(QColor("#CCCCCC")));
    if (place == LegendPlace::OutsideRight) {
        auto* sub = new QCPLayoutGrid;
        sub->setMargins(QMargins(4, 4, 4, 4));
        const int column = body->columnCount();
        body->addElement(0, column, sub);
        rect->insetLayout()->take(plot.legend);
        sub->addElement(0, 0, plot.legend);
        sub->insertRow(0);  // centred vertically between two stretching empty rows
        sub->setRowStretchFactor(0, 1);
        sub->addElement(2, 0, new QCPLayoutElement(&plot));
        sub->setRowStretchFactor(1, 0.001);  // the legend keeps its own height
        sub->setRowStretchFactor(2, 1);
        body->setColumnStretchFactor(column, 0.01);
        return;
    }
    const Qt::Alignment a = place == LegendPlace::UpperRight   ? Qt::AlignTop | Qt::AlignRight
                            : place == LegendPlace::LowerRight ? Qt::AlignBottom | Qt::AlignRight
                                                               : Qt::AlignTop | Qt::AlignLeft;
    rect->insetLayout()->setInsetAlignment(0, a);
}

}  // namespace

QColor paletteColor(int i)
{
    const int n = static_cast<int>(sizeof kPalette / sizeof kPalette[0]);
    return QColor(kPalette[((i % n) + n) % n]);
}

void buildFigure(QCustomPlot& plot, const FigureSpec& spec)
{
    auto* body = frame(plot, spec.title);
    auto* main = new QCPAxisRect(&plot);
    body->addElement(0, 0, main);
    styleAxisRect(main);
    main->axis(QCPAxis::atBottom)->setLabel(qs(spec.x.label));
    main->axis(QCPAxis::atLeft)->setLabel(qs(spec.y.label));
    // The legend lives in the main rect's inset layout (or beside it: OutsideRight).
    main->insetLayout()->addElement(plot.legend, Qt::AlignTop | Qt::AlignRight);
    plot.legend->clearItems();
    drawSeries(plot, main, spec, true, std::nullopt);
    fitAxes(main, spec, std::nullopt);
    if (spec.zoom) {
        auto* zoom = new QCPAxisRect(&plot);
        body->addElement(0, 1, zoom);
        styleAxisRect(zoom);
        zoom->axis(QCPAxis::atBottom)->setLabel(qs(spec.x.label));
        zoom->axis(QCPAxis::atBottom)->ticker()->setTickCount(3);  // a narrow panel
        auto* top = zoom->axis(QCPAxis::atTop);  // its title, as a label without ticks
        top->setVisible(true);
        top->setTickLabels(false);
        top->grid()->setVisible(false);
        top->setLabel(qs(spec.zoom->title));
        top->setLabelFont(QFont("DejaVu Sans", 9));
        const std::pair<double, double> clip{spec.zoom->x0, spec.zoom->x1};
        FigureSpec z = spec;
        z.vlines.clear();
        drawSeries(plot, zoom, z, false, clip);
        fitAxes(zoom, spec, clip);
        zoom->axis(QCPAxis::atLeft)->setRange(main->axis(QCPAxis::atLeft)->range());
        body->setColumnStretchFactor(0, 3);
        body->setColumnStretchFactor(1, 1);
        auto* margins = new QCPMarginGroup(&plot);
        main->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
        zoom->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    }
    placeLegend(plot, body, main, spec.legend);
    plot.replot(QCustomPlot::rpImmediateRefresh);
}

void buildHeatmap(QCustomPlot& plot, const HeatmapSpec& spec)
{
    auto* body = frame(plot, spec.title);
    plot.legend->setVisible(false);
    auto* rect = new QCPAxisRect(&plot);
    body->addElement(0, 0, rect);
    styleAxisRect(rect);
    rect->setBackground(Qt::white);
    for (auto* a : rect->axes())
        a->grid()->setVisible(false);
    auto* xa = rect->axis(QCPAxis::atBottom);
    auto* ya = rect->axis(QCPAxis::atLeft);
    xa->setLabel(qs(spec.xLabel));
    ya->setLabel(qs(spec.yLabel));
    ya->setRangeReversed(true);  // row 0 at the top, like a matrix
    auto* map = new QCPColorMap(xa, ya);
    map->data()->setSize(spec.cols, spec.rows);
    map->data()->setRange(QCPRange(spec.firstCol, spec.firstCol + spec.cols - 1),
                          QCPRange(spec.firstRow, spec.firstRow + spec.rows - 1));
    Range z;
    for (int r = 0; r < spec.rows; ++r)
        for (int c = 0; c < spec.cols; ++c) {
            const double v = spec.values[static_cast<size_t>(r) * spec.cols + c];
            map->data()->setCell(c, r, v);
            if (!spec.logScale || v > 0)
                z.add(v);
        }
    QCPColorGradient gradient;  // viridis: perceptually uniform, readable in grey
    gradient.clearColorStops();
    const char* stops[] = {"#440154", "#482878", "#3E4A89", "#31688E", "#26828E",
                           "#1F9E89", "#35B779", "#6DCD59", "#B4DE2C", "#FDE725"};
    for (int i = 0; i < 10; ++i)
        gradient.setColorStopAt(i / 9.0, QColor(stops[i]));
    gradient.setNanHandling(QCPColorGradient::nhTransparent);
    map->setGradient(gradient);
    map->setInterpolate(false);
    auto* scale = new QCPColorScale(&plot);
    body->addElement(0, 1, scale);
    scale->setType(QCPAxis::atRight);
    scale->axis()->setLabel(qs(spec.colorLabel));
    scale->axis()->setTickLabelFont(QFont("DejaVu Sans", 9));
    map->setColorScale(scale);
    scale->setGradient(gradient);  // a colour scale imposes its own gradient on its maps
    if (spec.logScale) {
        map->setDataScaleType(QCPAxis::stLogarithmic);
        scale->axis()->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    }
    const auto zr = z.padded(spec.zMin, spec.zMax);
    map->setDataRange(QCPRange(spec.zMin.value_or(z.lo), spec.zMax.value_or(z.hi > z.lo ? z.hi : zr.upper)));
    auto* margins = new QCPMarginGroup(&plot);
    rect->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    scale->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    if (spec.tickLabel) {
        auto ticker = QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText);
        // Even steps from an even start, so interleaved x/y token labels show one kind.
        auto step = [](int n) { return std::max(2, (n / 10 + 1) & ~1); };
        for (int i = spec.firstCol + (spec.firstCol & 1); i < spec.firstCol + spec.cols; i += step(spec.cols))
            ticker->addTick(i, qs(spec.tickLabel(i)));
        xa->setTicker(ticker);
        auto yt = QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText);
        for (int i = spec.firstRow + (spec.firstRow & 1); i < spec.firstRow + spec.rows; i += step(spec.rows))
            yt->addTick(i, qs(spec.tickLabel(i)));
        ya->setTicker(yt);
    }
    xa->setRange(spec.firstCol - 0.5, spec.firstCol + spec.cols - 0.5);
    ya->setRange(spec.firstRow - 0.5, spec.firstRow + spec.rows - 0.5);
    plot.replot(QCustomPlot::rpImmediateRefresh);
}

}  // namespace lengen::plots
