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

int TrainingView::loggedPoints() const { return int(m_steps.size()); }

void TrainingView::onState(RunController::State)
{
    updateControls();
    const auto j = m_controller.job(m_liveJob);
    if (!j || !showingLive())
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
    using S = JobState;
    const auto j = m_liveJob ? m_controller.job(m_liveJob) : std::nullopt;
    const bool training = j && j->active();
    const bool here = training && showingLive();  // the open run is the one training
    m_pause->setEnabled(here && j->state != S::Stopping);
    m_pause->setText(here && j->state == S::Paused ? tr("Continue") : tr("Pause"));
    // A run another process trains (a terminal's `lengen train`): Stop sends it the request
    // `lengen stop` leaves; pausing needs that process's own controls. A disabled button says
    // why (issue 53: it said nothing).
    const bool elsewhere = !trainedElsewhereBy().isEmpty();
    m_pause->setToolTip(
        elsewhere ? tr("Pausing needs the controls of %1, which trains this run; Stop asks it to "
                       "stop with a checkpoint")
                        .arg(m_shownWriter)
        : here && j->state == S::Stopping ? tr("Stopping: it ends after its current step")
        : here ? tr("Pause after the current step (Continue goes on from there)")
               : tr("Nothing trains this run: Pause acts on a running training"));
    m_stop->setEnabled((here && j->state != S::Stopping) || elsewhere);
    m_stop->setToolTip(
        elsewhere
            ? tr("Ask %1, which trains this run, to stop after its current step with a checkpoint "
                 "(as `lengen stop`)")
                  .arg(m_shownWriter)
        : here ? tr("Stop after the current step; a checkpoint is written and the run can be "
                    "resumed")
               : tr("Nothing trains this run: Stop acts on a running training"));
    // Another run trains: say which, and offer it (its controls are there, and in the Jobs panel).
    m_openLive->setVisible(training && !showingLive() && !m_liveRunFile.isEmpty());
    if (training)
        setElided(m_openLive, tr("“%1” is %2 — open it")
                                  .arg(QString::fromStdString(j->label), jobStateText(j->state)));
    if (training)
        m_openLive->setToolTip(m_openLive->toolTip() +
                               tr("\nPause and Stop here act on the open run only"));
    // The status showRunLog read: this runs on every state change and every 2 s follow, and a
    // table row (config parse, analysis contents) per call was work done for one word.
    const bool resumable = !training && !m_runFile.isEmpty() &&
                           (m_shownStatus == "cancelled" || m_shownStatus == "interrupted");
    m_resume->setVisible(resumable);
}

QString TrainingView::progressText() const
{
    return QStringLiteral("%1/%2").arg(m_progress->value()).arg(m_progress->maximum());
}

QString TrainingView::rateText() const { return m_rate->text(); }

bool TrainingView::resumeOffered() const { return !m_resume->isHidden(); }

QString TrainingView::headerText() const { return m_label->text(); }

QString TrainingView::trainedElsewhereBy() const
{
    return m_shownStatus == "running" && !showingLive() && !m_shownWriter.isEmpty() &&
                   m_shownWriter != QString::fromStdString(engine::thisHolder())
               ? m_shownWriter
               : QString();
}

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
                if (part == OpenRunModel::Part::Log && !(showingLive() && run == m_runFile))
                    showRunLog(run);
            });
}

void TrainingView::onStarted(const JobInfo& job, const engine::RunStarted& info)
{
    if (job.kind != JobKind::Training)
        return;
    const QString label = QString::fromStdString(job.label);
    m_liveJob = job.id;
    m_liveRunFile = QFileInfo(QString::fromStdString(info.runFile)).absoluteFilePath();
    updateControls();
    // A resumed run keeps the history its file holds; a new one starts empty.
    if (!m_liveRunFile.isEmpty() && QFileInfo::exists(m_liveRunFile))
        showRunLog(m_liveRunFile);
    else
        clearSeries();
    m_title = label;
    m_runFile = m_liveRunFile;
    m_runId = info.runId;
    m_runName = label;
    redrawSmoothed();
    m_progress->setRange(0, int(std::max<std::int64_t>(1, info.totalSteps)));
    m_progress->setValue(int(info.firstStep));
    m_liveLabel = info.runFile.empty() ? label
                                       : tr("%1 — %2 (seed %3, %4, %5 parameters)")
                                             .arg(label, QString::fromStdString(info.runFile))
                                             .arg(info.seed)
                                             .arg(QString::fromStdString(info.device))
                                             .arg(info.parameterCount);
    m_label->setText(m_liveLabel);
}

void TrainingView::onProgress(const JobInfo& job, const engine::StepProgress& p)
{
    if (job.id != m_liveJob)
        return;
    // Another run is shown, or the job is paused (a throttled update may arrive after the
    // pause: "paused" must not be replaced by the last rate and ETA).
    const auto j = m_controller.job(m_liveJob);
    if (!showingLive() || (j && j->state == JobState::Paused))
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
    if (job.id != m_liveJob)
        return;
    // Rows of another run than the shown one, or already read from the file when the run was
    // (re)opened while it trained.
    if (!showingLive() || (!m_steps.isEmpty() && double(r.step) <= m_steps.back()))
        return;
    appendLoss(double(r.step), r.loss, r.excessLoss);
    m_columns.append(r);
    redrawColumn();
    addPointwise(r.pointwise.data(), r.pointwise.size());
}

void TrainingView::clearSeries()
{
    m_steps.clear();
    m_values.clear();
    m_excess.clear();
    m_recent.clear();
    m_columns.clear();
    m_pointwise->graph(0)->data()->clear();
    // Replotted now: a run without a log would otherwise keep the previous run's picture.
    redrawColumn();
    m_pointwise->replot(QCustomPlot::rpQueuedReplot);
}

// The per-position curve is the mean of the last kRecent rows: one logged row is one batch
// (32–64 prompts), far too noisy to read a trend from. A row from a shorter curriculum stage
// contributes to the positions it has.
void TrainingView::addPointwise(const double* values, size_t n)
{
    m_recent.emplace_back(values, values + n);
    if (m_recent.size() > kRecent)
        m_recent.pop_front();
    size_t width = 0;
    for (const auto& row : m_recent)
        width = std::max(width, row.size());
    QVector<double> k, v;
    for (size_t i = 0; i < width; ++i) {
        double sum = 0;
        int count = 0;
        for (const auto& row : m_recent)
            if (i < row.size() && std::isfinite(row[i])) {
                sum += row[i];
                ++count;
            }
        if (count > 0) {
            k << double(i);
            v << sum / count;
        }
    }
    m_pointwise->graph(0)->setData(k, v, true);
    m_pointwise->rescaleAxes();
    m_pointwise->replot(QCustomPlot::rpQueuedReplot);
}

void TrainingView::appendLoss(double step, double loss, double excess)
{
    m_steps << step;
    m_values << loss;
    m_excess << excess;
    redrawSmoothed();
}

QVector<double> TrainingView::smoothed(const QVector<double>& raw) const
{
    return emaSmoothed(raw, m_smoothing->value() / 100.0);
}

QStringList TrainingView::setOverlays(const QStringList& runFiles)
{
    QStringList failed;
    m_overlays.clear();
    for (const auto& run : runFiles) {
        try {
            auto curve = readLoggedCurve(run);
            // The shown run is drawn once, as itself, however its path was written.
            if (m_runFile.isEmpty() || QFileInfo(curve.runFile) != QFileInfo(m_runFile))
                m_overlays.push_back(std::move(curve));
        } catch (const std::exception& e) {
            failed << QStringLiteral("%1: %2").arg(run, QString::fromUtf8(e.what()));
        }
    }
    m_clearOverlays->setVisible(overlaid());
    redrawSmoothed();
    return failed;
}

QStringList TrainingView::overlays() const
{
    QStringList out;
    for (const auto& o : m_overlays)
        out << o.runFile;
    return out;
}

QString TrainingView::hoverText() const { return m_hover->text(); }

void TrainingView::refreshColors()
{
    if (overlaid())
        redrawSmoothed();
}

void TrainingView::redrawSmoothed()
{
    const bool excess = m_series->currentIndex() == 1;
    const auto& raw = excess ? m_excess : m_values;
    const QString name = excess ? tr("excess loss") : tr("loss");
    const QString ema = tr("EMA %1").arg(m_smoothing->value() / 100.0, 0, 'f', 2);
    // Alone, the run is blue with a raw trace; beside others it takes its run colour and its
    // name, and every run shows its smoothed curve only (raw traces of several runs are noise).
    QColor color("#0173B2");
    if (overlaid())
        color = QColor(QString::fromStdString(
            plots::shownRunColor(m_runId.empty() ? m_runFile.toStdString() : m_runId)));
    m_loss->graph(0)->setName(name);
    m_loss->graph(0)->setVisible(!overlaid());
    m_loss->graph(0)->setPen(QPen(QColor(color.red(), color.green(), color.blue(), 90), 1));
    m_loss->graph(1)->setName(overlaid() ? m_runName + " · " + ema : ema);
    m_loss->graph(1)->setPen(QPen(color, 2));
    m_loss->yAxis->setLabel(name);
    m_loss->graph(0)->setData(m_steps, raw, true);
    m_loss->graph(1)->setData(m_steps, smoothed(raw), true);
    while (m_loss->graphCount() > 2)
        m_loss->removeGraph(m_loss->graphCount() - 1);
    std::set<std::string> used{color.name().toStdString()};
    for (const auto& o : m_overlays) {
        auto* g = m_loss->addGraph();
        g->setName(o.name);
        // Runs of one Compare group share its colour: the later ones dashed, told apart.
        const std::string c = plots::shownRunColor(o.runId);
        const bool again =
            !used.insert(QColor(QString::fromStdString(c)).name().toStdString()).second;
        g->setPen(QPen(QColor(QString::fromStdString(c)), 2, again ? Qt::DashLine : Qt::SolidLine));
        g->setData(o.steps, smoothed(excess ? o.excess : o.loss), true);
    }
    m_loss->rescaleAxes();
    m_loss->replot(QCustomPlot::rpQueuedReplot);
}

plots::FigureSpec TrainingView::lossFigure() const
{
    const bool excess = m_series->currentIndex() == 1;
    const auto& raw = excess ? m_excess : m_values;
    plots::FigureSpec f;
    f.title = (m_title.isEmpty() ? tr("training") : m_title).toStdString() + "\n" +
              (excess ? "excess loss" : "training loss");
    f.x.label = "step";
    f.y.label = excess ? "excess loss" : "loss";
    f.y.log = m_logScale->isChecked();
    plots::Series r, e;
    r.name = excess ? "excess loss" : "loss";
    e.name = QStringLiteral("EMA %1").arg(m_smoothing->value() / 100.0, 0, 'f', 2).toStdString();
    r.x.assign(m_steps.begin(), m_steps.end());
    r.y.assign(raw.begin(), raw.end());
    e.x = r.x;
    const auto ema = smoothed(raw);
    e.y.assign(ema.begin(), ema.end());
    r.color = "#8CB9D9";  // the raw curve as drawn: the EMA's blue, lightened
    r.width = 1;
    e.color = "#0173B2";
    f.series = {r, e};
    if (overlaid()) {  // as drawn: each run's smoothed curve in its run colour
        e.name = (m_runName + " · ").toStdString() + e.name;
        e.color = plots::shownRunColor(m_runId.empty() ? m_runFile.toStdString() : m_runId);
        f.series = {e};
        std::set<std::string> used{QColor(QString::fromStdString(e.color)).name().toStdString()};
        for (const auto& o : m_overlays) {
            plots::Series s;
            s.name = o.name.toStdString();
            s.x.assign(o.steps.begin(), o.steps.end());
            const auto y = smoothed(excess ? o.excess : o.loss);
            s.y.assign(y.begin(), y.end());
            s.color = plots::shownRunColor(o.runId);
            s.dashed = !used.insert(QColor(QString::fromStdString(s.color)).name().toStdString())
                            .second;  // as drawn: a group's later runs dashed
            f.series.push_back(s);
        }
    }
    return f;
}

void TrainingView::setLoggedColumn(LoggedColumn column) { m_column->setCurrentIndex(int(column)); }

plots::FigureSpec TrainingView::columnFigure() const
{
    return loggedColumnFigure(m_columns, LoggedColumn(std::max(0, m_column->currentIndex())),
                              (m_title.isEmpty() ? tr("training") : m_title).toStdString());
}

// Rebuilt from its figure on every change, so the plot and its export never differ.
void TrainingView::redrawColumn()
{
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
    if (m_steps.isEmpty())
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
    clearSeries();
    m_hover->clear();  // the read-out was the previous run's (issue 41)
    m_runFile.clear();
    m_runId.clear();
    m_runName.clear();
    m_shownStatus.clear();
    m_label->setToolTip(QString());
    m_rate->clear();
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    try {
        m_runFile = QFileInfo(QString::fromStdString(engine::locateRunFile(runFile.toStdString())))
                        .absoluteFilePath();
        if (!readInfo || !readLog) {  // the retries ran out: this read says why
            readInfo = engine::readRunInfo(m_runFile.toStdString());
            readLog = engine::readTrainLog(m_runFile.toStdString());
        }
        const auto& info = *readInfo;
        const auto& log = *readLog;
        for (size_t i = 0; i < log.step.size(); ++i) {
            m_steps << double(log.step[i]);
            m_values << log.loss[i];
            m_excess << (i < log.excessLoss.size() ? log.excessLoss[i] : std::nan(""));
        }
        m_columns.assign(log, clipNormOf(info));
        const size_t w = size_t(std::max(log.pointwiseWidth, 0));
        if (w > 0) {
            const size_t rows = log.pointwise.size() / w;
            for (size_t row = rows > kRecent ? rows - kRecent : 0; row < rows; ++row)
                addPointwise(log.pointwise.data() + row * w, w);
        }
        m_title = QFileInfo(m_runFile).dir().dirName();
        redrawColumn();
        m_runId = info.runId;
        m_runName = QString::fromStdString(figures::runLegend(info));
        m_overlays.erase(std::remove_if(m_overlays.begin(), m_overlays.end(),
                                        [&](const LoggedCurve& o) {
                                            return QFileInfo(o.runFile) == QFileInfo(m_runFile);
                                        }),
                         m_overlays.end());
        m_clearOverlays->setVisible(overlaid());
        // This run's own progress: steps done (logged or checkpointed) of its total.
        const qint64 done = std::max<qint64>({0, info.checkpointStep, info.lastLoggedStep + 1});
        m_progress->setRange(0, int(std::max<qint64>(1, info.totalSteps)));
        m_progress->setValue(int(std::min<qint64>(done, std::max<qint64>(1, info.totalSteps))));
        m_shownStatus = info.status;
        m_shownWriter = QString::fromStdString(info.writer);
        const QString status = statusLabel(QString::fromStdString(info.status));
        m_label->setText(runHeader(m_runFile, status, info, log.step.size(), done));
        m_label->setToolTip(finalLossDefinition());
        if (showingLive())
            m_label->setText(m_liveLabel);         // the live header: seed, device, parameters
        else if (!trainedElsewhereBy().isEmpty())  // who trains it, since it is not this studio
            m_label->setText(m_label->text() +
                             tr(" · trained by %1 (another process)").arg(m_shownWriter));
    } catch (const std::exception& e) {
        m_runFile.clear();
        m_label->setText(QString::fromUtf8(e.what()));
    }
    updateControls();
    redrawSmoothed();
}

}  // namespace lengen::ui
