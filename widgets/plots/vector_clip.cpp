#include "vector_clip.h"

#include "qcp.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace lengen::plots {

namespace {

// All geometry is done in pixels, where every drawn segment is straight whatever the axis
// scale (log axes included), then mapped back to coordinates.

bool finite(const QPointF& p) { return std::isfinite(p.x()) && std::isfinite(p.y()); }

// Liang–Barsky: cuts the segment a→b to `r`; false when nothing of it is inside.
bool clipSegment(QPointF& a, QPointF& b, const QRectF& r)
{
    double t0 = 0, t1 = 1;
    const double dx = b.x() - a.x(), dy = b.y() - a.y();
    const double p[4] = {-dx, dx, -dy, dy};
    const double q[4] = {a.x() - r.left(), r.right() - a.x(), a.y() - r.top(), r.bottom() - a.y()};
    for (int i = 0; i < 4; ++i) {
        if (p[i] == 0) {
            if (q[i] < 0)
                return false;
            continue;
        }
        const double t = q[i] / p[i];
        if (p[i] < 0)
            t0 = std::max(t0, t);
        else
            t1 = std::min(t1, t);
        if (t0 > t1)
            return false;
    }
    const QPointF d = b - a;
    b = a + t1 * d;
    a = a + t0 * d;
    return true;
}

struct PixelMap {
    QCPAxis* x;
    QCPAxis* y;
    QPointF toPixel(const QCPGraphData& d) const
    {
        return {x->coordToPixel(d.key), y->coordToPixel(d.value)};
    }
    QCPGraphData toData(const QPointF& p) const
    {
        return {x->pixelToCoord(p.x()), y->pixelToCoord(p.y())};
    }
};

// The pixel rectangle the axes' ranges span. Not QCPAxisRect::rect(): QCustomPlot maps the
// lower y bound to QRect::bottom(), one pixel above where QRectF(rect) ends.
QRectF rangeRect(QCPAxis* x, QCPAxis* y)
{
    return QRectF(QPointF(x->coordToPixel(x->range().lower), y->coordToPixel(y->range().lower)),
                  QPointF(x->coordToPixel(x->range().upper), y->coordToPixel(y->range().upper)))
        .normalized();
}

// A polyline cut to `r`; the pieces are separated by a NaN value, which QCPGraph draws as a gap.
QSharedPointer<QCPGraphDataContainer> clipLine(const QCPGraphDataContainer& in, const PixelMap& m,
                                               const QRectF& r)
{
    QVector<QCPGraphData> out;
    bool open = false;  // the last point out ends a visible piece that the next may continue
    QPointF lastEnd;
    const QCPGraphData gap(0, std::numeric_limits<double>::quiet_NaN());
    for (auto it = in.constBegin(); it != in.constEnd(); ++it) {
        const QPointF here = m.toPixel(*it);
        if (in.size() == 1 && r.contains(here))
            out << *it;
        auto next = it + 1;
        if (next == in.constEnd())
            break;
        QPointF a = here, b = m.toPixel(*next);
        if (!finite(a) || !finite(b) || !clipSegment(a, b, r)) {
            open = false;
            continue;
        }
        if (!open || a != lastEnd) {
            if (!out.isEmpty())
                out << QCPGraphData(out.last().key, gap.value);
            out << m.toData(a);
        }
        out << m.toData(b);
        lastEnd = b;
        open = true;
    }
    QSharedPointer<QCPGraphDataContainer> c(new QCPGraphDataContainer);
    c->set(out, true);  // keep the order: gap points share their neighbour's key
    return c;
}

// A band (a fill between `lo` and `hi`, same keys) cut to `r`: split where either edge or the
// x range crosses a side of `r`, then clamp both edges into it. Exact, since the fill is
// straight between split points. Returns false when the keys differ (not one of our bands).
bool clipBand(const QCPGraphDataContainer& lo, const QCPGraphDataContainer& hi, const PixelMap& m,
              const QRectF& r, QVector<QCPGraphData>& outLo, QVector<QCPGraphData>& outHi)
{
    if (lo.size() != hi.size())
        return false;
    std::vector<QPointF> l, h;
    for (auto a = lo.constBegin(), b = hi.constBegin(); a != lo.constEnd(); ++a, ++b) {
        if (a->key != b->key)
            return false;
        l.push_back(m.toPixel(*a));
        h.push_back(m.toPixel(*b));
    }
    auto push = [&](const QPointF& pl, const QPointF& ph) {
        if (pl.x() < r.left() - 1e-6 || pl.x() > r.right() + 1e-6)
            return;
        const double x = std::clamp(pl.x(), r.left(), r.right());
        outLo << m.toData({x, std::clamp(pl.y(), r.top(), r.bottom())});
        outHi << m.toData({x, std::clamp(ph.y(), r.top(), r.bottom())});
    };
    for (size_t i = 0; i + 1 < l.size(); ++i) {
        if (!finite(l[i]) || !finite(h[i]) || !finite(l[i + 1]) || !finite(h[i + 1]))
            continue;
        std::set<double> ts{0.0, 1.0};
        auto cross = [&](double from, double to, double at) {
            if ((from - at) * (to - at) < 0)
                ts.insert((at - from) / (to - from));
        };
        for (double edge : {r.top(), r.bottom()}) {
            cross(l[i].y(), l[i + 1].y(), edge);
            cross(h[i].y(), h[i + 1].y(), edge);
        }
        for (double edge : {r.left(), r.right()})
            cross(l[i].x(), l[i + 1].x(), edge);
        for (double t : ts) {
            if (t == 0.0 && i > 0)  // the previous segment emitted its end already
                continue;
            push(l[i] + t * (l[i + 1] - l[i]), h[i] + t * (h[i + 1] - h[i]));
        }
    }
    return true;
}

}  // namespace

VectorClip::VectorClip(QCustomPlot& plot) : m_plot(plot)
{
    clipGraphs();
    clipItems();
}

VectorClip::~VectorClip()
{
    for (auto& [graph, data] : m_data)
        graph->setData(data);
    for (const auto& s : m_positions)
        s.position->setCoords(s.key, s.value);
    for (auto* item : m_hidden)
        item->setVisible(true);
}

void VectorClip::replaceData(QCPGraph* graph, const QSharedPointer<QCPGraphDataContainer>& data)
{
    m_data.emplace_back(graph, graph->data());
    graph->setData(data);
}

void VectorClip::clipGraphs()
{
    std::set<QCPGraph*> lowerEdges;
    for (int i = 0; i < m_plot.graphCount(); ++i)  // a band's lower edge is no line of its own
        if (auto* other = m_plot.graph(i)->channelFillGraph())
            lowerEdges.insert(other);
    for (int i = 0; i < m_plot.graphCount(); ++i) {
        auto* g = m_plot.graph(i);
        if (lowerEdges.count(g) || !g->keyAxis() || !g->valueAxis() || g->data()->isEmpty())
            continue;
        const PixelMap m{g->keyAxis(), g->valueAxis()};
        const QRectF r = rangeRect(g->keyAxis(), g->valueAxis());
        if (auto* other = g->channelFillGraph()) {
            QVector<QCPGraphData> lo, hi;
            if (clipBand(*other->data(), *g->data(), m, r, lo, hi)) {
                QSharedPointer<QCPGraphDataContainer> cLo(new QCPGraphDataContainer),
                    cHi(new QCPGraphDataContainer);
                cLo->set(lo, true);
                cHi->set(hi, true);
                replaceData(other, cLo);
                replaceData(g, cHi);
            }
        } else if (g->brush().style() == Qt::NoBrush) {  // a fill to zero would break open
            replaceData(g, clipLine(*g->data(), m, r));
        }
    }
}

void VectorClip::movePosition(QCPItemPosition* position, double pixelX, double pixelY)
{
    m_positions.push_back({position, position->key(), position->value()});
    position->setPixelPosition(QPointF(pixelX, pixelY));
}

void VectorClip::clipItems()
{
    for (int i = 0; i < m_plot.itemCount(); ++i) {
        auto* item = m_plot.item(i);
        if (!item->visible() || !item->clipToAxisRect() || !item->clipAxisRect())
            continue;
        const QRectF r = rangeRect(item->clipAxisRect()->axis(QCPAxis::atBottom),
                                   item->clipAxisRect()->axis(QCPAxis::atLeft));
        bool keep = true;
        if (auto* line = qobject_cast<QCPItemLine*>(item)) {
            QPointF a = line->start->pixelPosition(), b = line->end->pixelPosition();
            keep = clipSegment(a, b, r);
            if (keep) {
                movePosition(line->start, a.x(), a.y());
                movePosition(line->end, b.x(), b.y());
            }
        } else if (auto* rect = qobject_cast<QCPItemRect*>(item)) {
            const QRectF cut =
                QRectF(rect->topLeft->pixelPosition(), rect->bottomRight->pixelPosition())
                    .normalized()
                    .intersected(r);
            keep = !cut.isEmpty();
            if (keep) {
                movePosition(rect->topLeft, cut.left(), cut.top());
                movePosition(rect->bottomRight, cut.right(), cut.bottom());
            }
        } else if (auto* text = qobject_cast<QCPItemText*>(item)) {
            keep = r.adjusted(-0.5, -0.5, 0.5, 0.5).contains(text->position->pixelPosition());
        }
        if (!keep) {
            item->setVisible(false);
            m_hidden.push_back(item);
        }
    }
}

}  // namespace lengen::plots
