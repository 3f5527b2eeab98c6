// The layout check (layout_check.h): boxes from QCustomPlot as it last painted, compared.

#include "layout_check.h"

#include <QFontMetricsF>
#include <QLineF>

#include <algorithm>
#include <cmath>
#include <optional>

#include "qcp.h"

namespace lengen::plots {

namespace {

constexpr const char* kInsetProperty = "lengenInsetPanel";

// The axis's painter: it holds the tick positions (pixels) and labels it drew and the boxes of
// its tick labels and axis label. QCPAxis keeps it protected; a pointer to the member formed in
// a derived class reads it from any axis without constructing one.
struct AxisPeek : QCPAxis {
    static const QCPAxisPainterPrivate* painterOf(const QCPAxis* axis)
    {
        return axis->*(&AxisPeek::mAxisPainter);
    }
};

// One line of text's box centred at `centre` along the axis, `across` the far edge.
QRectF textBox(const QFontMetricsF& fm, const QString& text, Qt::Orientation along, double centre,
               const QRect& labelsBox, QCPAxis::AxisType type)
{
    const double w = fm.horizontalAdvance(text), h = fm.height();
    if (along == Qt::Vertical) {  // left or right axis: labels right- or left-aligned to it
        const double x = type == QCPAxis::atLeft ? labelsBox.right() - w : labelsBox.left();
        return {x, centre - h / 2, w, h};
    }
    const double y = type == QCPAxis::atBottom ? labelsBox.top() : labelsBox.bottom() - h;
    return {centre - w / 2, y, w, h};
}

void axisTexts(const QCPAxis* axis, std::vector<PaintedText>& out)
{
    if (!axis->visible())
        return;
    const auto* painter = AxisPeek::painterOf(axis);
    const auto type = axis->axisType();
    const auto along = axis->orientation() == Qt::Horizontal ? Qt::Horizontal : Qt::Vertical;
    const QString side = type == QCPAxis::atLeft     ? QStringLiteral("left")
                         : type == QCPAxis::atRight  ? QStringLiteral("right")
                         : type == QCPAxis::atBottom ? QStringLiteral("bottom")
                                                     : QStringLiteral("top");
    if (axis->tickLabels() && axis->tickLabelSide() == QCPAxis::lsOutside) {
        const QFontMetricsF fm(axis->tickLabelFont());
        const QRect box = painter->tickLabelsSelectionBox().normalized();
        for (int i = 0; i < painter->tickPositions.size() && i < painter->tickLabels.size(); ++i)
            if (!painter->tickLabels[i].isEmpty())
                out.push_back({side + " tick label " + painter->tickLabels[i],
                               textBox(fm, painter->tickLabels[i], along, painter->tickPositions[i],
                                       box, type)});
    }
    if (!axis->label().isEmpty()) {
        // The label is centred along the panel's side; its own length, not the side's.
        const QFontMetricsF fm(axis->labelFont());
        const QRect box = painter->labelSelectionBox().normalized();
        const double length = fm.horizontalAdvance(axis->label()), h = fm.height();
        const QRectF r =
            along == Qt::Vertical
                ? QRectF(box.center().x() - h / 2, box.center().y() - length / 2, h, length)
                : QRectF(box.center().x() - length / 2, box.center().y() - h / 2, length, h);
        out.push_back({side + " axis label \"" + axis->label() + "\"", r});
    }
}

// Segments of a graph's line in pixels (points in a data area; NaN breaks the line).
std::vector<QLineF> graphSegments(const QCPGraph* g)
{
    std::vector<QLineF> out;
    if (g->pen().style() == Qt::NoPen || g->lineStyle() == QCPGraph::lsNone || !g->visible())
        return out;
    std::optional<QPointF> last;
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) {
        if (!std::isfinite(it->key) || !std::isfinite(it->value)) {
            last.reset();
            continue;
        }
        const QPointF p = g->coordsToPixels(it->key, it->value);
        if (last)
            out.emplace_back(*last, p);
        last = p;
    }
    return out;
}

bool crosses(const QLineF& l, const QRectF& r)
{
    if (r.contains(l.p1()) || r.contains(l.p2()))
        return true;
    const QLineF edges[] = {{r.topLeft(), r.topRight()},
                            {r.topRight(), r.bottomRight()},
                            {r.bottomRight(), r.bottomLeft()},
                            {r.bottomLeft(), r.topLeft()}};
    for (const auto& e : edges)
        if (l.intersects(e, nullptr) == QLineF::BoundedIntersection)
            return true;
    return false;
}

// The data points of the panel's graphs inside it, in pixels.
std::vector<QPointF> panelPoints(QCustomPlot& plot, const QCPAxisRect* rect)
{
    std::vector<QPointF> out;
    for (int i = 0; i < plot.graphCount(); ++i) {
        const auto* g = plot.graph(i);
        if (!g->visible() || g->keyAxis()->axisRect() != rect)
            continue;
        for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
            if (std::isfinite(it->key) && std::isfinite(it->value)) {
                const QPointF p = g->coordsToPixels(it->key, it->value);
                if (rect->rect().contains(p.toPoint()))
                    out.push_back(p);
            }
    }
    return out;
}

// Whether `box` meets a curve or a reference line drawn in the plot.
bool meetsData(QCustomPlot& plot, const QRectF& box)
{
    for (int i = 0; i < plot.graphCount(); ++i) {
        // A curve is drawn clipped to its data area: above it (a label's strip) it meets nothing.
        const QRectF part = box & QRectF(plot.graph(i)->keyAxis()->axisRect()->rect());
        if (!part.isEmpty())
            for (const auto& seg : graphSegments(plot.graph(i)))
                if (crosses(seg, part))
                    return true;
    }
    for (int i = 0; i < plot.itemCount(); ++i)
        if (const auto* line = qobject_cast<QCPItemLine*>(plot.item(i));
            line && line->visible() &&
            crosses(QLineF(line->start->pixelPosition(), line->end->pixelPosition()),
                    box.adjusted(1, 1, -1, -1)))
            return true;
    return false;
}

constexpr const char* kLineLabel = "lengenLineLabel";
constexpr const char* kPlacing = "lengenPlacing";

QRectF textBoxOf(QCPItemText* text)
{
    const QMargins pad = text->padding();
    return QRectF(text->topLeft->pixelPosition(), text->bottomRight->pixelPosition())
        .normalized()
        .adjusted(pad.left(), pad.top(), -pad.right(), -pad.bottom());
}

constexpr const char* kStrip = "lengenLabelStrip";

// Room for one text line between a panel's data area and what is above it (the figure's title
// or the panel's own, its top axis label): where a label found no free slot beside the curves.
// Taken once per panel, and by every panel sharing its top margin (a grid's, so their titles
// stay in one row); the plot is laid out again with it.
bool reserveStrip(QCPAxisRect* rect, double lineHeight)
{
    if (rect->property(kStrip).toBool())
        return false;
    QList<QCPAxisRect*> rects{rect};
    if (auto* group = rect->marginGroup(QCP::msTop)) {
        rects.clear();
        for (auto* e : group->elements(QCP::msTop))
            if (auto* r = qobject_cast<QCPAxisRect*>(e))
                rects << r;
    }
    const int room = int(std::ceil(lineHeight)) + 2;
    for (auto* r : rects) {
        r->setProperty(kStrip, true);
        if (auto* top = r->axis(QCPAxis::atTop); top && top->visible())
            top->setLabelPadding(top->labelPadding() + room);  // under the panel's title
        else
            r->setMinimumMargins(r->minimumMargins() + QMargins(0, room, 0, 0));
    }
    return true;
}

// The labels of vertical lines, each to the first free slot: down its line on the right, then
// on the left; where curves fill the whole line (a jagged long-prompt curve), in the strip just
// above the data area (reserveStrip), beside its line's top end; hidden only where that strip
// is taken too (a label over a curve hides the data it marks). Returns whether a panel needs
// its strip first, so that the plot is laid out again.
bool placeLineLabels(QCustomPlot& plot)
{
    std::vector<QRectF> taken;  // placed labels, and a legend over the data
    if (plot.legend && plot.legend->visible() && plot.legend->itemCount() > 0)
        taken.push_back(plot.legend->outerRect());
    bool relayout = false;
    for (int i = 0; i < plot.itemCount(); ++i) {
        auto* text = qobject_cast<QCPItemText*>(plot.item(i));
        if (!text || !text->property(kLineLabel).isValid())
            continue;
        text->setVisible(true);  // placed anew at each layout: a zoom may free a slot
        auto* rect = text->clipAxisRect();
        if (!rect || rect->rect().height() <= 0)
            continue;
        const QRectF area(rect->rect());
        const int row = text->property(kLineLabel).toInt();
        const double lineHeight = QFontMetricsF(text->font()).height() + 1;
        const auto isFree = [&](const QRectF& box, const QRectF& within) {
            const bool free = within.contains(box) && !meetsData(plot, box) &&
                              std::none_of(taken.begin(), taken.end(),
                                           [&](const QRectF& t) { return t.intersects(box); });
            if (free)
                taken.push_back(box);
            return free;
        };
        const auto tryAt = [&](int slot, bool left) {
            text->setClipToAxisRect(true);
            text->position->setCoords(text->position->coords().x(), 0.02);
            text->setPositionAlignment((left ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
            text->setPadding(QMargins(left ? 0 : 4, int(slot * lineHeight), left ? 4 : 0, 0));
            return isFree(textBoxOf(text), area);
        };
        const auto tryStrip = [&](bool left) {
            text->setClipToAxisRect(false);
            text->position->setCoords(text->position->coords().x(), 0);
            text->setPositionAlignment((left ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignBottom);
            text->setPadding(QMargins(left ? 0 : 4, 0, left ? 4 : 0, 2));
            const QRectF strip(0, area.top() - lineHeight - 4, plot.width(), lineHeight + 4);
            return isFree(textBoxOf(text), strip);
        };
        const int slots = std::max(1, int(area.height() / lineHeight) - 1);
        bool placed = false;
        for (const bool left : {false, true})
            for (int k = 0; k < slots && !placed; ++k)
                placed = tryAt((row + k) % slots, left);
        if (!placed && reserveStrip(rect, lineHeight))
            relayout = true;  // placed in the strip on the next pass
        for (const bool left : {false, true})
            placed = placed || (!relayout && tryStrip(left));
        if (!placed)
            text->setVisible(false);  // nowhere free: the line speaks alone (its colour)
    }
    return relayout;
}

// An inset legend to the corner of its panel that hides the fewest data points.
void placeInsetLegend(QCustomPlot& plot)
{
    if (!plot.legend || !plot.legend->visible() || plot.legend->itemCount() == 0)
        return;
    for (auto* rect : plot.axisRects()) {
        auto* inset = rect->insetLayout();
        if (plot.legend->layout() != inset)
            continue;
        int index = -1;
        for (int i = 0; i < inset->elementCount(); ++i)
            if (inset->elementAt(i) == plot.legend)
                index = i;
        if (index < 0)
            return;
        const auto points = panelPoints(plot, rect);
        const Qt::Alignment first = inset->insetAlignment(index);
        Qt::Alignment best = first;
        long fewest = -1;
        for (const Qt::Alignment a :
             {first, Qt::AlignTop | Qt::AlignRight, Qt::AlignTop | Qt::AlignLeft,
              Qt::AlignBottom | Qt::AlignRight, Qt::AlignBottom | Qt::AlignLeft}) {
            inset->setInsetAlignment(index, a);
            inset->update(QCPLayoutElement::upLayout);  // the legend's entries follow its box
            const QRectF box = plot.legend->outerRect();
            const long hidden = std::count_if(points.begin(), points.end(),
                                              [&](const QPointF& p) { return box.contains(p); });
            if (fewest < 0 || hidden < fewest)
                fewest = hidden, best = a;
        }
        inset->setInsetAlignment(index, best);
        inset->update(QCPLayoutElement::upLayout);  // the legend's entries follow its box
        return;
    }
}

}  // namespace

void markLineLabel(QCPItemText* label, int row) { label->setProperty(kLineLabel, row); }

void keepAnnotationsOffTheData(QCustomPlot& plot)
{
    if (plot.property(kPlacing).toBool())
        return;
    plot.setProperty(kPlacing, true);
    QObject::connect(&plot, &QCustomPlot::afterLayout, &plot, [p = &plot] {
        placeInsetLegend(*p);
        if (!placeLineLabels(*p))
            return;
        // A panel took a strip for its labels: lay the plot out again, as
        // QCustomPlot::updateLayout does (protected there), and place everything anew.
        for (const auto phase : {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins,
                                 QCPLayoutElement::upLayout})
            p->plotLayout()->update(phase);
        placeInsetLegend(*p);
        placeLineLabels(*p);
    });
}

void markInsetPanel(QCPAxisRect* rect) { rect->setProperty(kInsetProperty, true); }

std::vector<PaintedText> paintedTexts(QCustomPlot& plot)
{
    std::vector<PaintedText> out;
    for (const auto* rect : plot.axisRects())
        for (const auto* axis : rect->axes())
            axisTexts(axis, out);
    // Titles: text elements of the layout, their text's own box within their cell.
    for (const auto* element : plot.plotLayout()->elements(true))
        if (const auto* t = qobject_cast<const QCPTextElement*>(element); t && t->visible())
            out.push_back({"title \"" + t->text() + "\"",
                           QFontMetricsF(t->font()).boundingRect(
                               QRectF(t->rect()), t->textFlags() | Qt::TextDontClip, t->text())});
    for (int i = 0; i < plot.itemCount(); ++i) {
        const auto* text = qobject_cast<const QCPItemText*>(plot.item(i));
        if (!text || !text->visible() || text->text().isEmpty())
            continue;
        const QMargins pad = text->padding();
        const QRectF box =
            QRectF(text->topLeft->pixelPosition(), text->bottomRight->pixelPosition())
                .normalized()
                .adjusted(pad.left(), pad.top(), -pad.right(), -pad.bottom());
        bool inside = false;
        for (const auto* rect : plot.axisRects())
            inside = inside || QRectF(rect->rect()).intersects(box);
        out.push_back(
            {"annotation \"" + QString(text->text()).replace('\n', ' ') + "\"", box, inside});
    }
    if (plot.legend && plot.legend->visible())
        for (int i = 0; i < plot.legend->itemCount(); ++i) {
            auto* item = plot.legend->item(i);
            auto* pl = qobject_cast<QCPPlottableLegendItem*>(item);
            out.push_back({"legend entry \"" + (pl ? pl->plottable()->name() : QString()) + "\"",
                           QRectF(item->rect())});
        }
    return out;
}

QStringList layoutProblems(QCustomPlot& plot, const QRectF& visible, const LayoutLimits& limits)
{
    QStringList problems;
    for (const auto* rect : plot.axisRects()) {
        const bool inset = rect->property(kInsetProperty).toBool();
        const int minWidth = inset ? limits.minInsetWidth : limits.minDataWidth;
        if (rect->rect().height() < limits.minDataHeight || rect->rect().width() < minWidth)
            problems << QStringLiteral("a data area is %1 x %2 px (at least %3 x %4 wanted)")
                            .arg(rect->rect().width())
                            .arg(rect->rect().height())
                            .arg(minWidth)
                            .arg(limits.minDataHeight);
    }
    const auto texts = paintedTexts(plot);
    for (size_t i = 0; i < texts.size(); ++i) {
        // Whole pixels of slack: boxes that only touch do not overlap.
        const QRectF a = texts[i].box.adjusted(1, 1, -1, -1);
        if (!visible.contains(texts[i].box.adjusted(0.5, 0.5, -0.5, -0.5)))
            problems << texts[i].what + " is cut by the plot's edge";
        for (size_t j = i + 1; j < texts.size(); ++j)
            if (a.intersects(texts[j].box.adjusted(1, 1, -1, -1)))
                problems << texts[i].what + " overlaps " + texts[j].what;
    }
    // Annotations inside a data area must not sit on a curve or a reference line.
    for (const auto& t : texts) {
        if (!t.insideData)
            continue;
        for (int i = 0; i < plot.graphCount(); ++i)
            for (const auto& seg : graphSegments(plot.graph(i)))
                if (crosses(seg, t.box)) {
                    problems << t.what + " lies on the curve \"" + plot.graph(i)->name() + "\"";
                    i = plot.graphCount();
                    break;
                }
        for (int i = 0; i < plot.itemCount(); ++i)
            if (const auto* line = qobject_cast<const QCPItemLine*>(plot.item(i));
                line && line->visible() &&
                crosses(QLineF(line->start->pixelPosition(), line->end->pixelPosition()),
                        t.box.adjusted(1, 1, -1, -1)))
                problems << t.what + " is crossed by a reference line";
    }
    // An inset legend stays in its panel and hides at most a tenth of the panel's points.
    if (plot.legend && plot.legend->visible() && plot.legend->itemCount() > 0)
        for (const auto* rect : plot.axisRects()) {
            if (plot.legend->layout() != rect->insetLayout())
                continue;
            const QRectF legend = plot.legend->outerRect();
            if (!QRectF(rect->rect()).contains(legend))
                problems << QStringLiteral("the legend spills out of its panel");
            const auto points = panelPoints(plot, rect);
            const auto hidden = std::count_if(points.begin(), points.end(),
                                              [&](const QPointF& p) { return legend.contains(p); });
            if (!points.empty() && double(hidden) > limits.maxLegendCover * double(points.size()))
                problems << QStringLiteral("the legend hides %1 of the panel's %2 data points")
                                .arg(hidden)
                                .arg(points.size());
        }
    problems.removeDuplicates();
    return problems;
}

}  // namespace lengen::plots
