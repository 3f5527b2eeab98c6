#include "training_view.h"

#include <set>

#include "run_figures.h"
#include "run_table_model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSlider>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <optional>

#include "curve_interactions.h"
#include "export_dialog.h"
#include "figure_builder.h"
#include "figure_export.h"
#include "lengen/engine/config.h"
#include "lengen/engine/jobs.h"
#include "lengen/engine/run_control.h"
#include "lengen/engine/run_file.h"
#include "qcp.h"

namespace lengen::ui {

namespace {

QString duration(double seconds)
{
    const int s = int(seconds + 0.5);
    return s >= 3600 ? QStringLiteral("%1:%2:%3")
                           .arg(s / 3600)
                           .arg(s / 60 % 60, 2, 10, QChar('0'))
                           .arg(s % 60, 2, 10, QChar('0'))
                     : QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
}

// The run's effective max_grad_norm, drawn on the gradient-norm plot (0 when its config does
// not read: the line is left out, nothing else depends on it).
double clipNormOf(const engine::RunFileInfo& info)
{
    try {
        return engine::storedRunConfig(info.configYaml, info.path).effectiveMaxGradNorm();
    } catch (const std::exception&) {
        return 0;
    }
}

}  // namespace

int TrainingView::loggedPoints() const { return int(m_model.steps().size()); }

void TrainingView::onState(RunController::State)
{
    updateControls();
    const auto j = m_controller.job(m_model.liveJob());
    if (!j || !m_model.showingLive())
        return;
    if (j->state == JobState::Stopping)
        m_rate->setText(tr("stopping…"));
    else if (j->state == JobState::Paused)
        m_rate->setText(tr("paused"));
}

// Pause and Stop belong to the training job: an evaluation or a probe has its own Stop in the
// status bar (pausing one froze it without a word). Resume is offered for a stopped run when
// nothing trains.
void TrainingView::updateControls()
{
    const auto c =
        m_model.controls(m_model.liveJob() ? m_controller.job(m_model.liveJob()) : std::nullopt);
    m_pause->setEnabled(c.pause);
    m_pause->setText(c.pauseText);
    m_pause->setToolTip(c.pauseTip);
    m_stop->setEnabled(c.stop);
    m_stop->setToolTip(c.stopTip);
    m_openLive->setVisible(c.offerLive);
    if (!c.liveText.isEmpty()) {
        setElided(m_openLive, c.liveText);
        m_openLive->setToolTip(m_openLive->toolTip() +
                               tr("\nPause and Stop here act on the open run only"));
    }
    m_resume->setVisible(c.resume);
}

QString TrainingView::progressText() const
{
    return QStringLiteral("%1/%2").arg(m_progress->value()).arg(m_progress->maximum());
}

QString TrainingView::rateText() const { return m_rate->text(); }

bool TrainingView::resumeOffered() const { return !m_resume->isHidden(); }

QString TrainingView::headerText() const { return m_label->text(); }

QString TrainingView::trainedElsewhereBy() const { return m_model.trainedElsewhereBy(); }

bool TrainingView::controlsEnabled() const { return m_pause->isEnabled() || m_stop->isEnabled(); }

QString TrainingView::otherTrainingOffer() const
{
    return m_openLive->isHidden() ? QString() : m_openLive->text();
}

void TrainingView::followOpenRun(const OpenRunModel& model)
{
    connect(&model, &OpenRunModel::changed, this, &TrainingView::showRunLog);
    // The run the worker trains arrives through the controller's signals: re-reading its file
    // every 2 s would only redraw what is already drawn.
    connect(&model, &OpenRunModel::updated, this,
            [this](const QString& run, OpenRunModel::Part part) {
                if (part == OpenRunModel::Part::Log &&
                    !(m_model.showingLive() && run == m_model.runFile()))
                    showRunLog(run);
            });
}

void TrainingView::onStarted(const JobInfo& job, const engine::RunStarted& info)
{
    if (job.kind != JobKind::Training)
        return;
    const QString label = QString::fromStdString(job.label);
    const QString runFile = QFileInfo(QString::fromStdString(info.runFile)).absoluteFilePath();
    // A resumed run keeps the history its file holds; a new one starts empty.
    if (!runFile.isEmpty() && QFileInfo::exists(runFile))
        showRunLog(runFile);
    else
        m_model.clearShown();
    const QString header = info.runFile.empty()
                               ? label
                               : tr("%1 — %2 (seed %3, %4, %5 parameters)")
                                     .arg(label, QString::fromStdString(info.runFile))
                                     .arg(info.seed)
                                     .arg(QString::fromStdString(info.device))
                                     .arg(info.parameterCount);
    m_model.startLive(job.id, runFile, info.runId, label, header);
    updateControls();
    redrawAll();
    m_progress->setRange(0, int(std::max<std::int64_t>(1, info.totalSteps)));
    m_progress->setValue(int(info.firstStep));
    m_label->setText(header);
}

void TrainingView::onProgress(const JobInfo& job, const engine::StepProgress& p)
{
    if (job.id != m_model.liveJob())
        return;
    // Another run is shown, or the job is paused (a throttled update may arrive after the
    // pause: "paused" must not be replaced by the last rate and ETA).
    const auto j = m_controller.job(m_model.liveJob());
    if (!m_model.showingLive() || (j && j->state == JobState::Paused))
        return;
    m_progress->setMaximum(int(std::max<std::int64_t>(1, p.totalSteps)));
    m_progress->setValue(int(p.step + 1));
    m_rate->setText(
        p.stepsPerSecond > 0
            ? tr("%1 steps/s, ETA %2").arg(p.stepsPerSecond, 0, 'f', 1).arg(duration(p.etaSeconds))
            : QString());
}

void TrainingView::onLog(const JobInfo& job, const engine::LogRecord& r)
{
    if (!m_model.acceptsLog(job.id, r.step))
        return;
    m_model.appendLog(r);
    redrawSmoothed();
    redrawColumn();
    redrawPointwise();
}

// Every plot from the model: after the shown run changed.
void TrainingView::redrawAll()
{
    redrawSmoothed();
    redrawColumn();
    redrawPointwise();
}

// The per-position curve: the mean of the model's last rows.
void TrainingView::redrawPointwise()
{
    const auto [k, v] = m_model.pointwise();
    if (!m_model.steps().isEmpty())  // the run's colour, as its loss is drawn
        m_pointwise->graph(0)->setPen(QPen(QColor(QString::fromStdString(m_model.runColor())), 2));
    m_pointwise->graph(0)->setData(k, v, true);
    m_pointwise->rescaleAxes();
    m_pointwise->replot(QCustomPlot::rpQueuedReplot);
}

QString TrainingView::hoverText() const { return m_hover->text(); }

void TrainingView::refreshColors()
{
    if (m_model.overlaid())
        redrawSmoothed();
}

QStringList TrainingView::setOverlays(const QStringList& runFiles)
{
    const QStringList failed = m_model.setOverlays(runFiles);
    m_clearOverlays->setVisible(m_model.overlaid());
    redrawSmoothed();
    return failed;
}

QStringList TrainingView::overlays() const
{
    QStringList out;
    for (const auto& o : m_model.overlays())
        out << o.runFile;
    return out;
}

// The loss plot as the model's figure says: alone, the run is blue with a raw trace; beside
// others each run's smoothed curve in the colour it is shown in (raw traces of several runs
// are noise).
void TrainingView::redrawSmoothed()
{
    m_model.setSmoothing(m_smoothing->value() / 100.0);
    m_model.setExcess(m_series->currentIndex() == 1);
    m_model.setLogScale(m_logScale->isChecked());
    const auto f = m_model.lossFigure();
    const bool overlaid = m_model.overlaid();
    const auto color = [](const std::string& c) { return QColor(QString::fromStdString(c)); };
    const auto values = [](const std::vector<double>& v) {
        return QVector<double>(v.begin(), v.end());
    };
    // Graph 0 is the shown run's raw curve (alone only), graph 1 its EMA; the overlays follow.
    const bool shown = !m_model.steps().isEmpty();
    // No run shown and none overlaid (closed, or its file went): no curve, no legend entry.
    const plots::Series* raw = !overlaid && shown ? &f.series.at(0) : nullptr;
    const plots::Series* ema = !overlaid ? (shown ? &f.series.at(1) : nullptr)
                               : shown   ? &f.series.front()
                                         : nullptr;
    const auto paint = [&](QCPGraph* g, const plots::Series* s, double width) {
        g->setVisible(s != nullptr);
        g->setName(s ? QString::fromStdString(s->name) : QString());
        g->setData(s ? values(s->x) : QVector<double>(), s ? values(s->y) : QVector<double>(),
                   true);
        if (s)
            g->setPen(QPen(color(s->color), width));
        s ? g->addToLegend() : g->removeFromLegend();
    };
    paint(m_loss->graph(0), raw, 1);
    paint(m_loss->graph(1), ema, 2);
    m_loss->yAxis->setLabel(QString::fromStdString(f.y.label));
    while (m_loss->graphCount() > 2)
        m_loss->removeGraph(m_loss->graphCount() - 1);
    for (size_t i = !overlaid ? 2 : shown ? 1 : 0; i < f.series.size(); ++i) {
        const auto& s = f.series[i];
        auto* g = m_loss->addGraph();
        g->setName(QString::fromStdString(s.name));
        g->setPen(QPen(color(s.color), 2, s.dashed ? Qt::DashLine : Qt::SolidLine));
        g->setData(values(s.x), values(s.y), true);
    }
    m_loss->rescaleAxes();
    // An empty legend is a white box in the corner (the Xvfb pass found one on "No run open").
    m_loss->legend->setVisible(m_loss->legend->itemCount() > 0);
    if (!shown && !overlaid) {  // the last run's axes do not stay (found in the Xvfb walk)
        m_loss->xAxis->setRange(0, 1);
        m_loss->yAxis->setRange(0, 1);
    }
    m_loss->replot(QCustomPlot::rpQueuedReplot);
}

plots::FigureSpec TrainingView::lossFigure() const { return m_model.lossFigure(); }

void TrainingView::setLoggedColumn(LoggedColumn column) { m_column->setCurrentIndex(int(column)); }

plots::FigureSpec TrainingView::columnFigure() const { return m_model.columnFigure(); }

// Rebuilt from its figure on every change, so the plot and its export never differ.
void TrainingView::redrawColumn()
{
    m_model.setColumn(LoggedColumn(std::max(0, m_column->currentIndex())));
    const auto hidden = plots::hiddenSeries(*m_side);  // a legend click survives new rows
    auto shown = columnFigure();
    shown.title.clear();  // the chooser above names it; the export keeps the title
    plots::buildFigure(*m_side, shown);
    plots::hideSeries(*m_side, hidden);
    m_side->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
}

bool TrainingView::exportColumn(const QString& path, int dpi, QString* error)
{
    const auto format = plots::formatFromPath(path).value_or(plots::Format::Png);
    const auto result =
        plots::exportFigure(plots::shownSpec(columnFigure(), *m_side), path, format, dpi);
    if (!result.ok && error)
        *error = result.error;
    return result.ok;
}

bool TrainingView::exportLoss(const QString& path, int dpi, QString* error)
{
    const auto format = plots::formatFromPath(path).value_or(plots::Format::Png);
    const auto result = plots::exportFigure(lossFigure(), path, format, dpi);
    if (!result.ok && error)
        *error = result.error;
    return result.ok;
}

void TrainingView::exportWithDialog()
{
    if (m_model.steps().isEmpty())
        return;
    askExportTarget(this, tr("Export loss plot"), QStringLiteral("loss.png"),
                    [this](const ExportChoice& target) {
                        QString error;
                        reportExport(this, exportLoss(target.path, target.dpi, &error), error);
                    });
}

namespace {

// The header over a stored run's plot: its file and status, then its steps and last loss, or
// why there is no log. "final" only for a run that ended: a running or stopped run's last loss
// is not final.
QString runHeader(const QString& runFile, const QString& status, const engine::RunFileInfo& info,
                  std::size_t logRows, qint64 done)
{
    if (logRows == 0)
        return info.importedFrom.empty()
                   ? TrainingView::tr("%1 — %2, no training log stored yet").arg(runFile, status)
                   : TrainingView::tr("%1 — imported from %2: no training log (the Python code "
                                      "keeps none)")
                         .arg(runFile, QString::fromStdString(info.importedFrom));
    return (info.status == "finished"
                ? TrainingView::tr("%1 — %2 · %3 of %4 steps · final loss %5 (%6 log rows)")
                : TrainingView::tr("%1 — %2 · %3 of %4 steps · last logged loss %5 (%6 log rows)"))
        .arg(runFile, status)
        .arg(done)
        .arg(info.totalSteps)
        .arg(info.lastLoss, 0, 'g', 4)
        .arg(logRows);
}

}  // namespace

void TrainingView::showRunLog(const QString& runFile)
{
    // Read first, then replace what is drawn: a run another process writes can refuse a read
    // for a moment (its writer mid-append); that is retried a few times, 150 ms apart, with the
    // view left as it was, instead of flashing 0 % and an empty plot (issue 52).
    if (runFile != m_pendingRead)
        m_readRetries = 0;  // another run: its own retries
    std::optional<engine::RunFileInfo> readInfo;
    std::optional<engine::TrainLog> readLog;
    try {
        const auto path = engine::locateRunFile(runFile.toStdString());
        readInfo = engine::readRunInfo(path);
        readLog = engine::readTrainLog(path);
    } catch (const std::exception&) {
        if (m_readRetries < 10 && QFileInfo::exists(runFile)) {
            ++m_readRetries;
            m_pendingRead = runFile;
            QTimer::singleShot(150, this, [this, runFile] {
                if (m_pendingRead == runFile)  // not another run opened meanwhile
                    showRunLog(runFile);
            });
            return;
        }
    }
    m_readRetries = 0;
    m_pendingRead.clear();
    m_model.clearShown();
    m_hover->clear();  // the read-out was the previous run's (issue 41)
    m_label->setToolTip(QString());
    m_rate->clear();
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    if (runFile.isEmpty()) {  // none open (closed, or its file went): no "run file not found:"
        m_label->setText(
            tr("No run open. Double-click a run in the Runs list to see its training."));
        updateControls();
        redrawAll();
        return;
    }
    try {
        const QString path =
            QFileInfo(QString::fromStdString(engine::locateRunFile(runFile.toStdString())))
                .absoluteFilePath();
        if (!readInfo || !readLog) {  // the retries ran out: this read says why
            readInfo = engine::readRunInfo(path.toStdString());
            readLog = engine::readTrainLog(path.toStdString());
        }
        const auto& info = *readInfo;
        const auto& log = *readLog;
        m_model.showStored(path, info, log, clipNormOf(info));
        m_clearOverlays->setVisible(m_model.overlaid());
        // This run's own progress: steps done (logged or checkpointed) of its total.
        const qint64 done = std::max<qint64>({0, info.checkpointStep, info.lastLoggedStep + 1});
        m_progress->setRange(0, int(std::max<qint64>(1, info.totalSteps)));
        m_progress->setValue(int(std::min<qint64>(done, std::max<qint64>(1, info.totalSteps))));
        const QString status = statusLabel(QString::fromStdString(info.status));
        m_label->setText(runHeader(path, status, info, log.step.size(), done));
        m_label->setToolTip(finalLossDefinition());
        if (m_model.showingLive())
            m_label->setText(m_model.liveHeader());  // the live header: seed, device, parameters
        else if (const QString by = m_model.trainedElsewhereBy(); !by.isEmpty())
            m_label->setText(m_label->text() + tr(" · trained by %1 (another process)").arg(by));
    } catch (const std::exception& e) {
        m_model.clearShown();
        m_label->setText(QString::fromUtf8(e.what()));
    }
    updateControls();
    redrawAll();
}

}  // namespace lengen::ui
