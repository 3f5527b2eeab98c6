// The Attention view's second map: the same tile probed under an intervention
// (docs/interventions.md), drawn beside the untouched one with the same colour settings, so a
// Λ-mask's or a window's shape shows against what the model does by itself.

#include "attention_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QSplitter>

#include <cmath>
#include <limits>

#include "figure_builder.h"
#include "qcp.h"

namespace lengen::ui {

QStringList AttentionView::interventions() const
{
    QStringList out;
    for (int i = 0; i < m_intervention->count(); ++i)
        out << m_intervention->itemData(i).toString();
    return out;
}

void AttentionView::setIntervention(const QString& spec)
{
    m_intervention->setCurrentIndex(std::max(0, m_intervention->findData(spec)));
}

QString AttentionView::intervention() const { return m_intervention->currentData().toString(); }

// The intervention's tile of the same window, with the untouched map's colour settings; not
// drawn yet (loadVisibleTile fits one colour range to both first). Empty when none is chosen
// or this prompt length was not probed under it.
std::optional<plots::HeatmapSpec> AttentionView::interventionTile(const figures::MapSelection& m)
{
    const QString spec = intervention();
    const int i = m_setting->currentIndex();
    if (spec.isEmpty() || m_run.isEmpty() || i < 0 || size_t(i) >= m_settings.size())
        return std::nullopt;
    auto edit = m;
    edit.intervention = spec.toStdString();
    try {
        auto fig = figures::makeFigure(m_run.toStdString(),
                                       "attention_map/" + m_settings[size_t(i)].name, edit);
        return fig.heatmap;
    } catch (const std::exception& e) {
        Q_EMIT statusMessage(tr("%1: %2").arg(spec, QString::fromUtf8(e.what())));
        return std::nullopt;
    }
}

// One colour scale for both maps (issue 41): fitted to the finite cells of both (for a log
// scale the positive ones), so the same colour is the same weight left and right.
void AttentionView::shareColourRange(plots::HeatmapSpec& a, plots::HeatmapSpec& b) const
{
    if (!m_fit->isChecked())
        return;  // both keep the fixed range already
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto* h : {&a, &b})
        for (float v : h->values)
            if (std::isfinite(v) && (!h->logScale || v > 0)) {
                lo = std::min(lo, double(v));
                hi = std::max(hi, double(v));
            }
    if (!(lo < hi))
        return;
    a.zMin = b.zMin = lo;
    a.zMax = b.zMax = hi;
}

void AttentionView::drawInterventionTile(const std::optional<plots::HeatmapSpec>& tile,
                                         const QCPRange& xr, const QCPRange& yr)
{
    m_editHeatmap = tile;
    if (!tile) {
        m_editPlot->hide();
        return;
    }
    plots::buildHeatmap(*m_editPlot, *tile);
    m_editPlot->axisRect()->axis(QCPAxis::atBottom)->setRange(xr);
    m_editPlot->axisRect()->axis(QCPAxis::atLeft)->setRange(yr);
    m_editPlot->replot(QCustomPlot::rpQueuedReplot);
    if (m_editPlot->isHidden()) {  // appearing: the two maps get equal halves (the user may drag)
        m_editPlot->show();
        const int half = std::max(1, m_maps->width() / 2);
        m_maps->setSizes({half, half});
    }
}

// The query's row under the intervention, added to the untouched row's figure (dashed).
void AttentionView::addInterventionRow(plots::FigureSpec& row, const figures::MapSelection& m)
{
    const QString spec = intervention();
    const int i = m_setting->currentIndex();
    if (spec.isEmpty() || i < 0 || size_t(i) >= m_settings.size())
        return;
    auto edit = m;
    edit.intervention = spec.toStdString();
    try {
        const auto other = figures::attentionRowFigure(
            m_run.toStdString(), m_settings[size_t(i)].name, edit, m_query->value());
        row.series.insert(row.series.end(), other.series.begin(), other.series.end());
    } catch (const std::exception&) {  // not probed at this length: the tile's message said so
    }
}

}  // namespace lengen::ui
