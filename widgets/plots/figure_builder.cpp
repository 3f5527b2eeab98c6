#include "figure_builder.h"
#include "layout_check.h"

#include "plot_style.h"
#include "qcp.h"

#include <QFontMetricsF>

#include <algorithm>
#include <cmath>
#include <limits>

#include <map>
#include <set>

namespace lengen::plots {

using style::colorOf;
using style::qs;

namespace {

const QString kBandLayer = QStringLiteral("bands");

// A log axis over less than ~1.6 decades: QCustomPlot's log ticker then has one or two
// decades to label (10, 100), and fell back to linear steps (10, 20, 30), so data between 2
// and 10 had no tick (issue 70, defect 8). Here: 1, 2 and 5 of each decade in range, or every
// digit where those are fewer than three; over wider ranges the decades, as before.
class ShortLogTicker final : public QCPAxisTickerLog {
public:
    static bool isShort(const QCPRange& r)
    {
        return r.lower > 0 && std::log10(r.upper / r.lower) < 1.6;
    }

protected:
    QVector<double> createTickVector(double tickStep, const QCPRange& range) override
    {
        if (!isShort(range))
            return QCPAxisTickerLog::createTickVector(tickStep, range);
        // 1, 2 and 5 of each decade first; where those are fewer than three, the other digits
        // join them, each at least a fifth of the span from every label ("0.9" crowded "1",
        // found under Xvfb).
        const auto inRange = [&range](const std::vector<int>& mantissas) {
            QVector<double> out;
            for (int k = int(std::floor(std::log10(range.lower)));
                 k <= int(std::ceil(std::log10(range.upper))); ++k)
                for (int m : mantissas)
                    if (const double v = m * std::pow(10.0, k); range.contains(v))
                        out << v;
            return out;
        };
        QVector<double> ticks = inRange({1, 2, 5});
        if (ticks.size() >= 3)
            return ticks;
        const double gap = 0.2 * std::log10(range.upper / range.lower);
        for (double t : inRange({3, 4, 6, 7, 8, 9}))
            if (std::all_of(ticks.begin(), ticks.end(),
                            [&](double kept) { return std::fabs(std::log10(t / kept)) >= gap; }))
                ticks << t;
        std::sort(ticks.begin(), ticks.end());
        if (ticks.size() >= 3)
            return ticks;
        // Inside one step of the digits (1.9..2.9 labelled "2" alone, issue 80, defect 15):
        // evenly spaced round numbers, three to five of them.
        const double raw = (range.upper - range.lower) / 4;
        const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
        double step = 10 * magnitude;
        for (const double m : {1.0, 2.0, 2.5, 5.0})
            if (m * magnitude >= raw) {
                step = m * magnitude;
                break;
            }
        ticks.clear();
        for (double v = std::ceil(range.lower / step) * step; v <= range.upper * (1 + 1e-12);
             v += step)
            ticks << v;
        return ticks;
    }
};

// Every band goes on one layer under all curves: otherwise a later series' band would veil
// the earlier series' lines.
void ensureBandLayer(QCustomPlot& plot)
{
    if (!plot.layer(kBandLayer))
        plot.addLayer(kBandLayer, plot.layer(QStringLiteral("grid")), QCustomPlot::limAbove);
}

/// One axis rect being drawn into; `clip` restricts x to a window (the zoom panel).
struct Panel {
    QCustomPlot& plot;
    QCPAxisRect* rect;
    std::optional<std::pair<double, double>> clip;

    QCPAxis* x() const { return rect->axis(QCPAxis::atBottom); }
    QCPAxis* y() const { return rect->axis(QCPAxis::atLeft); }
    bool shows(double v) const { return !clip || (v >= clip->first && v <= clip->second); }
    /// Point i of a curve sorted by x: inside the window, or its neighbour just outside, so
    /// the line runs on to the panel's edge (where the axis rect clips it).
    bool keeps(const std::vector<double>& x, size_t i) const
    {
        if (!clip || shows(x[i]))
            return true;
        return (i + 1 < x.size() && x[i] < clip->first && x[i + 1] >= clip->first) ||
               (i > 0 && x[i] > clip->second && x[i - 1] <= clip->second);
    }
    void attach(QCPItemPosition* p) const
    {
        p->setAxes(x(), y());
        p->setAxisRect(rect);
    }
    template <typename Item>
    Item* item() const
    {
        auto* it = new Item(&plot);
        it->setClipAxisRect(rect);
        return it;
    }
};

bool hasBand(const Series& s)
{
    return !s.bandLow.empty() && s.bandLow.size() == s.x.size() && s.bandHigh.size() == s.x.size();
}

void addSpan(const Panel& p, const Span& s)
{
    auto* r = p.item<QCPItemRect>();
    for (auto* pos : {r->topLeft, r->bottomRight}) {
        p.attach(pos);
        pos->setTypeY(QCPItemPosition::ptAxisRectRatio);  // the full height whatever the y range
    }
    r->topLeft->setCoords(s.x0, 0);
    r->bottomRight->setCoords(s.x1, 1);
    QColor c = colorOf(s.color, 7);
    c.setAlphaF(std::clamp(s.alpha, 0.0, 1.0));
    r->setBrush(c);
    r->setPen(Qt::NoPen);
    r->setLayer(QStringLiteral("grid"));  // above the panel background, below the curves
}

// The curve (and its band: a fill between two pen-less graphs, alpha 0.3 in the curve's
// colour). Returns the curve so the caller decides on its legend entry.
QCPGraph* addSeries(const Panel& p, const Series& s, const QColor& color)
{
    const bool band = hasBand(s);
    QVector<double> x, y, lo, hi;
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
        if (!p.keeps(s.x, i))
            continue;
        x << s.x[i];
        y << s.y[i];
        if (band) {
            lo << s.bandLow[i];
            hi << s.bandHigh[i];
        }
    }
    if (band && !x.isEmpty()) {
        auto* gLo = p.plot.addGraph(p.x(), p.y());
        auto* gHi = p.plot.addGraph(p.x(), p.y());
        for (auto* g : {gLo, gHi}) {
            g->setLayer(kBandLayer);
            g->setPen(Qt::NoPen);
            g->removeFromLegend();
            g->setName(qs(s.name));  // the band belongs to its curve (hidden with it)
        }
        gLo->setData(x, lo);
        gHi->setData(x, hi);
        QColor fill = color;
        fill.setAlphaF(0.3);
        gHi->setBrush(fill);
        gHi->setChannelFillGraph(gLo);
    }
    auto* g = p.plot.addGraph(p.x(), p.y());
    g->setData(x, y);
    QPen pen(color, s.width);
    pen.setStyle(s.dashed ? Qt::DashLine : Qt::SolidLine);
    pen.setCapStyle(Qt::FlatCap);
    g->setPen(pen);
    g->setName(qs(s.name));
    if (s.staircase)
        g->setLineStyle(QCPGraph::lsStepLeft);
    if (s.points)
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
    return g;
}

QPen hlinePen(const HLine& h)
{
    return QPen(colorOf(h.color, 7), 1.5, h.dashed ? Qt::DashLine : Qt::SolidLine, Qt::FlatCap);
}

// Reference lines are segments from edge to edge of the panel (an axis-rect ratio of 0 to 1
// along it), not infinite QCPItemStraightLines: their ends are exact, which the SVG export
// needs (QSvgGenerator writes no clip paths), and they still span the panel when panned.
void addHLine(const Panel& p, const HLine& h)
{
    auto* line = p.item<QCPItemLine>();
    for (auto* pos : {line->start, line->end}) {
        p.attach(pos);
        pos->setTypeX(QCPItemPosition::ptAxisRectRatio);
    }
    line->start->setCoords(0, h.y);
    line->end->setCoords(1, h.y);
    line->setPen(hlinePen(h));
}

// `row`: the how-manyeth labelled line of the panel; each label sits a line lower than the
// one before, so two training lengths side by side do not write over each other (defect 7).
void addVLine(const Panel& p, const VLine& v, int row)
{
    const QColor color = colorOf(v.color, 3);
    auto* line = p.item<QCPItemLine>();
    for (auto* pos : {line->start, line->end}) {
        p.attach(pos);
        pos->setTypeY(QCPItemPosition::ptAxisRectRatio);
    }
    line->start->setCoords(v.x, 0);
    line->end->setCoords(v.x, 1);
    line->setPen(QPen(color, 1.5, Qt::SolidLine, Qt::FlatCap));
    if (v.label.empty())
        return;
    auto* text = p.item<QCPItemText>();
    p.attach(text->position);
    text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    // Just under the top edge, right of the line; each further label one text line lower, in
    // pixels (a ratio of the panel's height was 8 px on a short panel: still overlapping).
    const QFont font = style::font(style::kAnnotationPt);
    const int lineHeight = int(std::ceil(QFontMetricsF(font).height())) + 1;
    text->position->setCoords(v.x, 0.02);
    text->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    text->setPadding(QMargins(4, row * lineHeight, 0, 0));
    text->setText(qs(v.label));
    text->setColor(color);
    text->setFont(font);
    markLineLabel(text, row);  // moved off the curves as the plot is laid out
}

void addMarker(const Panel& p, const Marker& m)
{
    auto* text = p.item<QCPItemText>();
    p.attach(text->position);
    text->position->setCoords(m.x, m.y);
    // The label sits above the point with its "|" tick ending on it.
    text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
    text->setText(qs(m.text) + QStringLiteral("\n|"));
    text->setColor(colorOf(m.color, 3));
    text->setFont(style::font(style::kAnnotationPt, true));
}

// A legend entry with no data: a line sample (hlines) or a filled box (spans).
void addLegendLine(const Panel& p, const QString& name, const QPen& pen)
{
    auto* g = p.plot.addGraph(p.x(), p.y());
    g->setPen(pen);
    g->setName(name);
}

void addLegendBox(const Panel& p, const Span& s)
{
    auto* bars = new QCPBars(p.x(), p.y());
    QColor c = colorOf(s.color, 7);
    c.setAlphaF(std::clamp(s.alpha * 2, 0.25, 1.0));  // a small swatch needs more colour to read
    bars->setBrush(c);
    bars->setPen(Qt::NoPen);
    bars->setName(qs(s.label));
}

void drawPanel(const Panel& p, const FigureSpec& spec, bool legend)
{
    for (const auto& s : spec.spans)
        addSpan(p, s);
    int index = 0;
    for (const auto& s : spec.series) {
        auto* g = addSeries(p, s, colorOf(s.color, index++));
        if (!legend || !s.inLegend || s.name.empty())
            g->removeFromLegend();
    }
    for (const auto& h : spec.hlines)
        addHLine(p, h);
    int labelled = 0;
    for (const auto& v : spec.vlines)
        if (p.shows(v.x))
            addVLine(p, v, v.label.empty() ? 0 : labelled++);
    for (const auto& m : spec.markers)
        if (p.shows(m.x))
            addMarker(p, m);
    if (!legend)
        return;
    // Lines and regions after the curves, in the order the reference's legends list them.
    for (const auto& h : spec.hlines)
        if (!h.label.empty())
            addLegendLine(p, qs(h.label), hlinePen(h));
    for (const auto& s : spec.spans)
        if (!s.label.empty())
            addLegendBox(p, s);
}

/// The finite (for log axes: positive) extent of some values.
struct Extent {
    bool positiveOnly = false;
    double lo = std::numeric_limits<double>::infinity();
    double hi = -std::numeric_limits<double>::infinity();
    void add(double v)
    {
        if (std::isfinite(v) && (!positiveOnly || v > 0)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
};

// The data extent with 3 % padding on the sides the spec leaves open (matplotlib's margins
// are 5 %; 3 % keeps long curves closer to the frame).
QCPRange fitRange(const Extent& e, const Axis& def)
{
    auto fixedLo = def.min, fixedHi = def.max;
    if (def.log) {  // a non-positive bound has no place on a log axis
        if (fixedLo && *fixedLo <= 0)
            fixedLo.reset();
        if (fixedHi && *fixedHi <= 0)
            fixedHi.reset();
    }
    double a = fixedLo.value_or(e.lo), b = fixedHi.value_or(e.hi);
    if (!std::isfinite(a) || !std::isfinite(b))
        return def.log ? QCPRange(1, 10) : QCPRange(0, 1);
    if (b <= a)
        b = def.log ? a * 10 : a + 1;
    if (def.log) {
        const double f = std::pow(b / a, 0.03);
        return {fixedLo ? a : a / f, fixedHi ? b : b * f};
    }
    const double pad = 0.03 * (b - a);
    return {fixedLo ? a : a - pad, fixedHi ? b : b + pad};
}

void fitAxes(const Panel& p, const FigureSpec& spec)
{
    Extent xe{spec.x.log}, ye{spec.y.log};
    for (const auto& s : spec.series) {
        const bool band = hasBand(s);
        for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            if (!p.shows(s.x[i]))
                continue;
            xe.add(s.x[i]);
            ye.add(s.y[i]);
            if (band) {
                ye.add(s.bandLow[i]);
                ye.add(s.bandHigh[i]);
            }
        }
    }
    // A labelled reference line is part of what the figure says (the clip threshold beside a
    // gradient norm that never reaches it): a fitted y range includes it.
    if (ye.lo <= ye.hi)
        for (const auto& h : spec.hlines)
            if (!h.label.empty())
                ye.add(h.y);
    for (auto [axis, def] : {std::pair{p.x(), &spec.x}, std::pair{p.y(), &spec.y}}) {
        if (def->log) {
            axis->setScaleType(QCPAxis::stLogarithmic);
            // At most ~4 labelled decades: attention weights span 10^-8..1, and on the query-row
            // plot (170 px) the default density stacked the 10^k labels onto each other.
            auto ticker = QSharedPointer<QCPAxisTickerLog>(new ShortLogTicker);
            ticker->setTickCount(4);
            axis->setTicker(ticker);
            axis->setNumberFormat(QStringLiteral("eb"));  // 10^k, not 1e+k
            axis->setNumberPrecision(0);
        }
    }
    p.x()->setRange(p.clip ? QCPRange(p.clip->first, p.clip->second) : fitRange(xe, spec.x));
    p.y()->setRange(fitRange(ye, spec.y));
    // Within ~1.6 decades the ticks are 1, 2, 5 of a decade (ShortLogTicker); written as
    // 2·10^-2 those labels are two lines tall and stacked onto each other on a short axis (the
    // attention view's query row). Plain numbers stay readable.
    for (auto [axis, def] : {std::pair{p.x(), &spec.x}, std::pair{p.y(), &spec.y}})
        if (def->log && ShortLogTicker::isShort(axis->range())) {
            axis->setNumberFormat(QStringLiteral("g"));
            axis->setNumberPrecision(6);
        }
}

// `top`: beside the first row of panels rather than centred beside them all (a grid of many
// rows scrolls in the studio: centred, the legend was out of view).
void styleLegend(QCustomPlot& plot)
{
    // One entry under another: a wide grid's legend below its panels (placeLegendBelow) lays
    // its entries out in rows, and the plot keeps its legend from figure to figure (Compare's
    // loss after its panels drew a legend three entries wide, issue 80).
    plot.legend->setWrap(0);  // first: setFillOrder lays the entries out again by the wrap
    plot.legend->setFillOrder(QCPLayoutGrid::foRowsFirst, true);
    plot.legend->setColumnSpacing(8);
    plot.legend->setVisible(plot.legend->itemCount() > 0);
    plot.legend->setFont(style::font(style::kLegendPt));
    plot.legend->setTextColor(style::textColor());
    plot.legend->setBrush(QColor(255, 255, 255, 220));  // matplotlib's framealpha 0.8-ish
    plot.legend->setBorderPen(QPen(QColor(0xCC, 0xCC, 0xCC)));
    plot.legend->setRowSpacing(0);
    // QCPGraph's icon line overshoots its icon box by 5 px, which only a clip rect hides;
    // the SVG export keeps no clip rects, so leave room for it before the text.
    plot.legend->setIconTextPadding(10);
}

void placeLegend(QCustomPlot& plot, QCPLayoutGrid* body, QCPAxisRect* rect, LegendPlace place,
                 bool top = false)
{
    // An inset legend is placed even while empty: a live plot (the training view) adds its
    // named graphs after building and then shows it. Empty, it stays hidden.
    if (place == LegendPlace::None ||
        (place == LegendPlace::OutsideRight && plot.legend->itemCount() == 0))
        return;
    styleLegend(plot);
    if (place == LegendPlace::OutsideRight) {
        // Centred vertically beside the panels: between two stretching empty rows.
        auto* side = new QCPLayoutGrid;
        side->setMargins(QMargins(0, 4, 8, 4));
        body->addElement(0, body->columnCount(), side);
        side->addElement(0, 0, new QCPLayoutElement(&plot));
        side->addElement(1, 0, plot.legend);
        side->addElement(2, 0, new QCPLayoutElement(&plot));
        side->setRowStretchFactors({top ? 0.001 : 1, 0.001, 1});
        body->setColumnStretchFactor(body->columnCount() - 1, 0.01);
        return;
    }
    const Qt::Alignment a = place == LegendPlace::UpperRight   ? Qt::AlignTop | Qt::AlignRight
                            : place == LegendPlace::LowerRight ? Qt::AlignBottom | Qt::AlignRight
                                                               : Qt::AlignTop | Qt::AlignLeft;
    rect->insetLayout()->addElement(plot.legend, a);
    rect->insetLayout()->setMargins(QMargins(10, 10, 10, 10));
}

// A wide grid's shared legend: below the panels, centred, its entries in rows of up to one
// per column (beside the panels it pushed three columns past 1280 px).
void placeLegendBelow(QCustomPlot& plot, QCPLayoutGrid* body, int columns)
{
    if (plot.legend->itemCount() == 0)
        return;
    styleLegend(plot);
    plot.legend->setColumnSpacing(16);
    plot.legend->setWrap(std::max(columns, 3));
    plot.legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    auto* row = new QCPLayoutGrid;
    row->setMargins(QMargins(0, 6, 0, 4));
    const int at = body->rowCount();
    body->addElement(at, 0, row);
    row->addElement(0, 0, new QCPLayoutElement(&plot));
    row->addElement(0, 1, plot.legend);
    row->addElement(0, 2, new QCPLayoutElement(&plot));
    row->setColumnStretchFactors({1, 0.001, 1});
    body->setRowStretchFactor(at, 0.001);
}

QCPAxisRect* addZoomPanel(QCustomPlot& plot, QCPLayoutGrid* body, QCPAxisRect* main,
                          const FigureSpec& spec)
{
    auto* zoom = new QCPAxisRect(&plot);
    markInsetPanel(zoom);  // narrower than a main panel by design
    body->addElement(0, 1, zoom);
    style::styleAxisRect(zoom);
    // No x label: the main panel's applies, and a long one would overflow the narrow panel
    // (the margin group keeps both panels' bottoms aligned anyway).
    zoom->axis(QCPAxis::atBottom)->ticker()->setTickCount(3);
    auto* top = zoom->axis(QCPAxis::atTop);  // the panel's title: a label without ticks
    top->setVisible(true);
    top->setTickLabels(false);
    top->grid()->setVisible(false);
    top->setLabel(qs(spec.zoom->title));
    top->setLabelFont(style::font(style::kLabelPt));
    FigureSpec z = spec;
    z.vlines.clear();  // the train-length marker lies far left of the window
    const Panel p{plot, zoom, std::pair{spec.zoom->x0, spec.zoom->x1}};
    drawPanel(p, z, false);
    fitAxes(p, z);
    p.y()->setScaleType(main->axis(QCPAxis::atLeft)->scaleType());
    p.y()->setTicker(main->axis(QCPAxis::atLeft)->ticker());
    p.y()->setRange(main->axis(QCPAxis::atLeft)->range());  // same y range: compare heights
    body->setColumnStretchFactor(0, 3);
    body->setColumnStretchFactor(1, 1);
    auto* margins = new QCPMarginGroup(&plot);
    main->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    zoom->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    return zoom;
}

}  // namespace

std::string baselineColor(int i)
{
    // Charcoal, brown, wine, indigo: apart from the colorblind palette runs take, and from
    // each other (dark slate beside charcoal read as one, found in the Xvfb walk).
    static const char* const tones[] = {"#36454F", "#8B5A2B", "#7A1F3D", "#4B0082"};
    return tones[((i % 4) + 4) % 4];
}

void buildFigure(QCustomPlot& plot, const FigureSpec& spec)
{
    auto* body = style::beginFigure(plot, spec.title);
    ensureBandLayer(plot);
    auto* main = new QCPAxisRect(&plot);
    body->addElement(0, 0, main);
    style::styleAxisRect(main);
    main->axis(QCPAxis::atBottom)->setLabel(qs(spec.x.label));
    main->axis(QCPAxis::atLeft)->setLabel(qs(spec.y.label));
    const Panel p{plot, main, std::nullopt};
    drawPanel(p, spec, true);
    fitAxes(p, spec);
    if (spec.zoom)
        addZoomPanel(plot, body, main, spec);
    placeLegend(plot, body, main, spec.legend);
    keepAnnotationsOffTheData(plot);
    plot.replot(QCustomPlot::rpImmediateRefresh);
}

void buildGrid(QCustomPlot& plot, const GridSpec& spec)
{
    auto* body = style::beginFigure(plot, spec.title);
    ensureBandLayer(plot);
    auto* grid = new QCPLayoutGrid;
    body->addElement(0, 0, grid);
    grid->setColumnSpacing(14);
    grid->setRowSpacing(10);
    const int columns = std::max(1, std::min(spec.columns, int(spec.panels.size())));
    auto* margins = new QCPMarginGroup(&plot);  // every panel's frame the same size
    std::map<std::string, std::string> colours;
    std::set<std::string> listed;
    for (size_t i = 0; i < spec.panels.size(); ++i) {
        FigureSpec f = spec.panels[i];
        for (auto& s : f.series) {
            if (s.color.empty())
                s.color =
                    colours
                        .try_emplace(s.name, paletteColor(int(colours.size())).name().toStdString())
                        .first->second;
            s.inLegend = s.inLegend && listed.insert(s.name).second;  // once in the shared legend
        }
        if (i > 0) {  // reference lines and regions are listed once too
            for (auto& h : f.hlines)
                h.label.clear();
            for (auto& sp : f.spans)
                sp.label.clear();
        }
        auto* rect = new QCPAxisRect(&plot);
        grid->addElement(int(i) / columns, int(i) % columns, rect);
        style::styleAxisRect(rect);
        rect->setMarginGroup(QCP::msAll, margins);
        rect->axis(QCPAxis::atBottom)->setLabel(qs(f.x.label));
        if (int(i) % columns == 0)
            rect->axis(QCPAxis::atLeft)->setLabel(qs(f.y.label));
        auto* top = rect->axis(QCPAxis::atTop);  // the panel's title: a label without ticks
        top->setVisible(true);
        top->setTickLabels(false);
        top->setTicks(false);
        top->grid()->setVisible(false);
        top->setLabel(qs(f.title));
        top->setLabelFont(style::font(style::kLabelPt, true));
        const Panel p{plot, rect, std::nullopt};
        drawPanel(p, f, true);
        fitAxes(p, f);
    }
    if (columns >= kLegendBelowColumns)
        placeLegendBelow(plot, body, columns);
    else
        placeLegend(plot, body, nullptr, LegendPlace::OutsideRight,
                    int(spec.panels.size()) > columns);
    keepAnnotationsOffTheData(plot);
    plot.replot(QCustomPlot::rpImmediateRefresh);
}

}  // namespace lengen::plots
