#include "live_follow.h"

#include <QFileInfo>
#include <QMouseEvent>

#include "curve_interactions.h"
#include "lengen/engine/run_file.h"

namespace lengen::ui {

namespace {

QString fileStamp(const QString& path)
{
    const QFileInfo f(path);
    return f.exists()
               ? QStringLiteral("%1@%2").arg(f.size()).arg(f.lastModified().toMSecsSinceEpoch())
               : QString();
}

}  // namespace

QString runFilesStamp(const QStringList& runs, bool logs)
{
    QString stamp;
    for (const auto& run : runs) {
        QString file = run;
        try {  // a run may be named by its folder (--compare DIR)
            file = QString::fromStdString(engine::locateRunFile(run.toStdString()));
        } catch (const std::exception&) {
            // gone: its stamp is empty, and changes if it comes back
        }
        stamp += fileStamp(QFileInfo(file).absolutePath() + "/analysis.h5") + ';';
        if (logs)  // the rows a training logs (issue 70, defect 2: Compare stopped at them)
            stamp += fileStamp(file) + ';';
    }
    return stamp;
}

FigureState::FigureState(QCustomPlot& plot) : m_plot(plot)
{
    m_wheel = QObject::connect(&plot, &QCustomPlot::mouseWheel, &plot, [this] { m_zoomed = true; });
    m_drag = QObject::connect(&plot, &QCustomPlot::mouseMove, &plot, [this](QMouseEvent* e) {
        if (e->buttons() != Qt::NoButton)
            m_zoomed = true;  // a drag moves the ranges (iRangeDrag)
    });
}

FigureState::~FigureState()
{
    QObject::disconnect(m_wheel);
    QObject::disconnect(m_drag);
}

void FigureState::take()
{
    m_hidden = plots::hiddenSeries(m_plot);
    m_x.reset();
    m_y.reset();
    if (m_zoomed && !m_plot.axisRects().isEmpty()) {
        auto* rect = m_plot.axisRects().front();
        m_x = rect->axis(QCPAxis::atBottom)->range();
        m_y = rect->axis(QCPAxis::atLeft)->range();
    }
}

void FigureState::restore()
{
    plots::hideSeries(m_plot, m_hidden);
    if (m_x && m_y && !m_plot.axisRects().isEmpty()) {
        auto* rect = m_plot.axisRects().front();
        rect->axis(QCPAxis::atBottom)->setRange(*m_x);
        rect->axis(QCPAxis::atLeft)->setRange(*m_y);
    }
    m_plot.replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace lengen::ui
