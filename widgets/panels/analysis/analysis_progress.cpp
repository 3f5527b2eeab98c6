#include "analysis_progress.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QToolButton>

#include <algorithm>
#include <cmath>

namespace lengen::ui {

namespace {
QString clock(double seconds)
{
    const int s = int(std::lround(seconds));
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}
constexpr int kLabelWidth = 360;
constexpr int kNarrowestLabel = 100;
}  // namespace

int AnalysisProgressArea::fullTextRoom() { return kLabelWidth; }

AnalysisProgressArea::AnalysisProgressArea(RunController& controller, QWidget* parent)
    : QWidget(parent), m_controller(controller), m_room(kLabelWidth)
{
    m_label = new QLabel;
    // A bounded width, elided: the status bar's messages keep the room left of it (a long
    // label pushed them under the progress text, issue 52); the whole text is its tooltip.
    m_label->setMaximumWidth(kLabelWidth);
    m_bar = new QProgressBar;
    m_bar->setRange(0, 1000);
    m_bar->setFixedWidth(140);
    m_bar->setTextVisible(true);
    m_bar->setFormat(QStringLiteral("%p%"));
    m_stop = new QToolButton;
    m_stop->setText(tr("Stop"));
    m_stop->setToolTip(tr("Stop this analysis (what is already stored stays)"));
    // Its own width and no more: the bar's Expanding policy made the area take half the status
    // bar's spare width, which the messages left of it lacked (the Xvfb pass, N4).
    setSizePolicy(QSizePolicy::Maximum, QSizePolicy::Preferred);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_label);
    layout->addWidget(m_bar);
    layout->addWidget(m_stop);
    setVisible(false);
    connect(m_stop, &QToolButton::clicked, this, [this] { m_controller.stop(m_job); });
    connect(&m_controller, &RunController::analysisProgress, this,
            &AnalysisProgressArea::onProgress);
}

QString AnalysisProgressArea::text() const { return m_text; }
int AnalysisProgressArea::perMille() const { return m_bar->value(); }

void AnalysisProgressArea::onProgress(const JobInfo& job, const AnalysisProgress& p)
{
    const QString label = QString::fromStdString(job.label);
    // In the kind's units: "3 of 8 cells ended", "ood_length (method 2 of 3)"
    QString text =
        QStringLiteral("%1 · %2").arg(label, QString::fromStdString(engine::jobProgressText(
                                                 job.kind, p.stageName.toStdString(), p.stage,
                                                 p.stages, p.done, p.total, p.part.toStdString())));
    if (p.etaSeconds >= 0)
        text += tr(", ETA %1").arg(clock(p.etaSeconds));
    m_text = text;
    showText();
    // Rounded down, as the Jobs panel's percentage is (the Xvfb check: 4 % here, 3 % there).
    m_bar->setValue(int(std::floor(1000 * p.fraction)));
    // The latest analysis to report is the one shown (others run beside it: the Jobs panel has
    // them all); Stop names it.
    if (m_job != job.id) {
        m_job = job.id;
        m_controller.whenEnded(job.id, this, [this](const JobInfo& j) { onEnded(j.id); });
    }
    m_stop->setToolTip(tr("Stop “%1” (what is already stored stays)").arg(label));
    setVisible(true);
}

void AnalysisProgressArea::setTextRoom(int pixels)
{
    m_room = std::clamp(pixels, kNarrowestLabel, kLabelWidth);
    m_label->setMaximumWidth(m_room);
    showText();
}

void AnalysisProgressArea::showText()
{
    m_label->setText(m_label->fontMetrics().elidedText(m_text, Qt::ElideMiddle, m_room));
    m_label->setToolTip(m_text);
}

void AnalysisProgressArea::onEnded(quint64 id)
{
    if (id != m_job)
        return;  // another analysis reported since: it is the one shown
    m_bar->setValue(m_bar->maximum());
    setVisible(false);  // the status bar says how it ended
}

}  // namespace lengen::ui
