#include "curve_interactions.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "plot_style.h"
#include "qcp.h"

namespace lengen::plots {

namespace {
// Graphs drawn as curves (named, with a pen): bands share the name but draw no line.
bool isCurve(const QCPGraph* g) { return !g->name().isEmpty() && g->pen().style() != Qt::NoPen; }
}  // namespace

void setSeriesVisible(QCustomPlot& plot, const QString& name, bool visible)
{
    for (int i = 0; i < plot.graphCount(); ++i) {
        auto* g = plot.graph(i);
        if (g->name() != name)
            continue;
        g->setVisible(visible);
        if (auto* item = plot.legend ? plot.legend->itemWithPlottable(g) : nullptr)
            item->setTextColor(visible ? style::textColor() : QColor(160, 160, 160));
    }
    plot.replot(QCustomPlot::rpQueuedReplot);
}

QStringList hiddenSeries(const QCustomPlot& plot)
{
    std::set<QString> names;
    for (int i = 0; i < plot.graphCount(); ++i)
        if (isCurve(plot.graph(i)) && !plot.graph(i)->visible())
            names.insert(plot.graph(i)->name());
    return {names.begin(), names.end()};
}

FigureSpec shownSpec(const FigureSpec& spec, const QCustomPlot& plot)
{
    FigureSpec shown = spec;
    const QStringList hidden = hiddenSeries(plot);
    shown.series.erase(
        std::remove_if(shown.series.begin(), shown.series.end(),
                       [&](const Series& s) { return hidden.contains(style::qs(s.name)); }),
        shown.series.end());
    return shown;
}

void hideSeries(QCustomPlot& plot, const QStringList& names)
{
    for (const auto& n : names)
        setSeriesVisible(plot, n, false);
}

QString nearestPoints(const QCustomPlot& plot, double x)
{
    QStringList parts;
    double shownX = x;
    for (int i = 0; i < plot.graphCount(); ++i) {
        const auto* g = plot.graph(i);
        if (!isCurve(g) || !g->visible() || g->data()->isEmpty())
            continue;
        auto it = g->data()->findBegin(x, false);  // first key >= x, or the end
        auto best = it == g->data()->constEnd() ? it - 1 : it;
        if (it != g->data()->constBegin() && it != g->data()->constEnd() &&
            std::abs((it - 1)->key - x) < std::abs(it->key - x))
            best = it - 1;
        if (std::isnan(best->value))
            continue;
        shownX = best->key;
        parts << QStringLiteral("%1 %2").arg(g->name()).arg(best->value, 0, 'g', 4);
    }
    if (parts.isEmpty())
        return {};
    return QStringLiteral("x = %1: %2")
        .arg(shownX, 0, 'g', 6)
        .arg(parts.join(QStringLiteral(" · ")));
}

void enableCurveInteractions(QCustomPlot& plot, std::function<void(const QString&)> readout)
{
    plot.setMouseTracking(true);
    QObject::connect(&plot, &QCustomPlot::legendClick, &plot,
                     [&plot](QCPLegend*, QCPAbstractLegendItem* item, QMouseEvent*) {
                         if (auto* entry = qobject_cast<QCPPlottableLegendItem*>(item))
                             setSeriesVisible(plot, entry->plottable()->name(),
                                              !entry->plottable()->visible());
                     });
    if (!readout)
        return;
    QObject::connect(&plot, &QCustomPlot::mouseMove, &plot, [&plot, readout](QMouseEvent* event) {
        auto* rect = plot.axisRectCount() > 0 ? plot.axisRect(0) : nullptr;
        if (!rect || !rect->rect().contains(event->pos())) {
            readout(QString());
            return;
        }
        readout(nearestPoints(plot, rect->axis(QCPAxis::atBottom)->pixelToCoord(event->pos().x())));
    });
}

}  // namespace lengen::plots
