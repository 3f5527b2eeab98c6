// The Attention view's second map: the same tile probed under an intervention
// (docs/interventions.md), drawn beside the untouched one with the same colour settings, so a
// Λ-mask's or a window's shape shows against what the model does by itself.

#include "attention_view.h"

#include <QCheckBox>
#include <QComboBox>

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

void AttentionView::loadInterventionTile(const figures::MapSelection& m, const QCPRange& xr,
                                         const QCPRange& yr)
{
    m_editHeatmap.reset();
    const QString spec = intervention();
    if (spec.isEmpty() || m_run.isEmpty()) {
        m_editPlot->hide();
        return;
    }
    const int i = m_setting->currentIndex();
    if (i < 0 || size_t(i) >= m_settings.size())
        return;
    auto edit = m;
    edit.intervention = spec.toStdString();
    try {
        auto fig = figures::makeFigure(m_run.toStdString(), "attention_map/" + m_settings[size_t(i)].name, edit);
        fig.heatmap->logScale = m_log->isChecked();
        if (m_fit->isChecked()) {
            fig.heatmap->zMin.reset();
            fig.heatmap->zMax.reset();
        } else if (!fig.heatmap->logScale) {
            fig.heatmap->zMin = 0.0;
        }
        plots::buildHeatmap(*m_editPlot, *fig.heatmap);
        m_editPlot->axisRect()->axis(QCPAxis::atBottom)->setRange(xr);
        m_editPlot->axisRect()->axis(QCPAxis::atLeft)->setRange(yr);
        m_editPlot->replot(QCustomPlot::rpQueuedReplot);
        m_editHeatmap = fig.heatmap;
        m_editPlot->show();
    } catch (const std::exception& e) {
        // This prompt length was not probed under the intervention (or its file is damaged).
        m_editPlot->hide();
        Q_EMIT statusMessage(tr("%1: %2").arg(spec, QString::fromUtf8(e.what())));
    }
}

}  // namespace lengen::ui
