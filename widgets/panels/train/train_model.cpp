#include "train_model.h"

#include <QColor>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <cmath>
#include <set>

#include "figure_builder.h"
#include "lengen/engine/jobs.h"
#include "run_figures.h"

namespace lengen::ui {

namespace {

// The texts keep the view's translation context: they are what the Train tab says.
QString trainTr(const char* text, const char* disambiguation = nullptr, int n = -1)
{
    return QCoreApplication::translate("lengen::ui::TrainingView", text, disambiguation, n);
}

}  // namespace

void TrainModel::clearShown()
{
    m_runFile.clear();
    m_runId.clear();
    m_runName.clear();
    m_title.clear();
    m_status.clear();
    m_writer.clear();
    m_steps.clear();
    m_values.clear();
    m_excess.clear();
    m_recent.clear();
    m_columns.clear();
}

void TrainModel::showStored(const QString& runFile, const engine::RunFileInfo& info,
                            const engine::TrainLog& log, double clipNorm)
{
    clearShown();
    m_runFile = runFile;
    for (size_t i = 0; i < log.step.size(); ++i) {
        m_steps << double(log.step[i]);
        m_values << log.loss[i];
        m_excess << (i < log.excessLoss.size() ? log.excessLoss[i] : std::nan(""));
    }
    m_columns.assign(log, clipNorm);
    const size_t w = size_t(std::max(log.pointwiseWidth, 0));
    if (w > 0) {
        const size_t rows = log.pointwise.size() / w;
        for (size_t row = rows > kRecent ? rows - kRecent : 0; row < rows; ++row)
            m_recent.emplace_back(log.pointwise.data() + row * w,
                                  log.pointwise.data() + (row + 1) * w);
    }
    m_title = QFileInfo(runFile).dir().dirName();
    m_runId = info.runId;
    m_runName = QString::fromStdString(figures::runLegend(info));
    m_status = info.status;
    m_writer = QString::fromStdString(info.writer);
    m_overlays.erase(std::remove_if(m_overlays.begin(), m_overlays.end(),
                                    [&](const LoggedCurve& o) {
                                        return QFileInfo(o.runFile) == QFileInfo(runFile);
                                    }),
                     m_overlays.end());
}

void TrainModel::startLive(quint64 job, const QString& runFile, const std::string& runId,
                           const QString& label, const QString& header)
{
    m_liveJob = job;
    m_liveRunFile = runFile;
    m_liveHeader = header;
    m_runFile = runFile;
    m_runId = runId;
    m_runName = label;
    m_title = label;
}

QString TrainModel::title() const { return m_title.isEmpty() ? trainTr("training") : m_title; }

QString TrainModel::trainedElsewhereBy() const
{
    return m_status == "running" && !showingLive() && !m_writer.isEmpty() &&
                   m_writer != QString::fromStdString(engine::thisHolder())
               ? m_writer
               : QString();
}

bool TrainModel::acceptsLog(quint64 job, std::int64_t step) const
{
    // Rows of another run than the shown one, or already read from the file when the run was
    // (re)opened while it trained, are not drawn again.
    return job == m_liveJob && showingLive() &&
           (m_steps.isEmpty() || double(step) > m_steps.back());
}

void TrainModel::appendLog(const engine::LogRecord& r)
{
    m_steps << double(r.step);
    m_values << r.loss;
    m_excess << r.excessLoss;
    m_columns.append(r);
    m_recent.emplace_back(r.pointwise.begin(), r.pointwise.end());
    if (m_recent.size() > kRecent)
        m_recent.pop_front();
}

// A row from a shorter curriculum stage contributes to the positions it has.
std::pair<QVector<double>, QVector<double>> TrainModel::pointwise() const
{
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
    return {k, v};
}

QStringList TrainModel::setOverlays(const QStringList& runFiles)
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
    return failed;
}

QVector<double> TrainModel::smoothed(const QVector<double>& raw) const
{
    return emaSmoothed(raw, m_smoothing);
}

std::string TrainModel::runKey() const
{
    return m_runId.empty() ? m_runFile.toStdString() : m_runId;
}

std::string TrainModel::runColor() const { return plots::shownRunColor(runKey()); }

plots::FigureSpec TrainModel::lossFigure() const
{
    const auto& raw = shownSeries();
    plots::FigureSpec f;
    f.title = title().toStdString() + "\n" + (m_excessShown ? "excess loss" : "training loss");
    f.x.label = "step";
    f.y.label = m_excessShown ? "excess loss" : "loss";
    f.y.log = m_logScale;
    plots::Series r, e;
    r.name = m_excessShown ? "excess loss" : "loss";
    e.name = QStringLiteral("EMA %1").arg(m_smoothing, 0, 'f', 2).toStdString();
    r.x.assign(m_steps.begin(), m_steps.end());
    r.y.assign(raw.begin(), raw.end());
    e.x = r.x;
    const auto ema = smoothed(raw);
    e.y.assign(ema.begin(), ema.end());
    // The run in its colour, the one it has in every view (issue 80, defect 23: blue here
    // alone, its own colour once runs were overlaid); the raw curve that colour, lightened.
    e.color = runColor();
    QColor light(QString::fromStdString(e.color));
    light.setRgbF(0.45 * light.redF() + 0.55, 0.45 * light.greenF() + 0.55,
                  0.45 * light.blueF() + 0.55);
    r.color = light.name().toStdString();
    r.width = 1;
    f.series = {r, e};
    if (overlaid()) {  // as drawn: each run's smoothed curve in the colour it is shown in
        e.name = (m_runName + " · ").toStdString() + e.name;
        f.series.clear();
        if (!m_steps.isEmpty())  // no run shown: the overlaid runs alone (it was a nameless entry)
            f.series.push_back(e);
        std::set<std::string> used{QColor(QString::fromStdString(e.color)).name().toStdString()};
        for (const auto& o : m_overlays) {
            plots::Series s;
            s.name = o.name.toStdString();
            s.x.assign(o.steps.begin(), o.steps.end());
            const auto y = smoothed(m_excessShown ? o.excess : o.loss);
            s.y.assign(y.begin(), y.end());
            s.color = plots::shownRunColor(o.runId);
            // Runs of one Compare group share its colour: the later ones dashed, told apart.
            s.dashed =
                !used.insert(QColor(QString::fromStdString(s.color)).name().toStdString()).second;
            f.series.push_back(s);
        }
    }
    // The runs drawn in their colours (overlaid), whose swatches the Runs list shows.
    std::vector<std::string> drawn;
    if (!m_steps.isEmpty())
        drawn.push_back(runKey());
    for (const auto& o : m_overlays)
        drawn.push_back(o.runId);
    plots::setRunsDrawn("train", drawn);
    return f;
}

plots::FigureSpec TrainModel::columnFigure() const
{
    return loggedColumnFigure(m_columns, m_column, title().toStdString());
}

TrainControls TrainModel::controls(const std::optional<JobInfo>& live) const
{
    using S = JobState;
    TrainControls c;
    const bool training = live && live->active();
    const bool here = training && showingLive();  // the open run is the one training
    const QString by = trainedElsewhereBy();
    c.pause = here && live->state != S::Stopping;
    c.pauseText = here && live->state == S::Paused ? trainTr("Continue") : trainTr("Pause");
    // A run another process trains (a terminal's `lengen train`): Stop sends it the request
    // `lengen stop` leaves; pausing needs that process's own controls. A disabled button says
    // why (issue 53: it said nothing).
    c.pauseTip = !by.isEmpty() ? trainTr("Pausing needs the controls of %1, which trains this "
                                         "run; Stop asks it to stop with a checkpoint")
                                     .arg(by)
                 : here && live->state == S::Stopping
                     ? trainTr("Stopping: it ends after its current step")
                 : here ? trainTr("Pause after the current step (Continue goes on from there)")
                        : trainTr("Nothing trains this run: Pause acts on a running training");
    c.stop = (here && live->state != S::Stopping) || !by.isEmpty();
    c.stopTip = !by.isEmpty()
                    ? trainTr("Ask %1, which trains this run, to stop after its current step "
                              "with a checkpoint (as `lengen stop`)")
                          .arg(by)
                : here ? trainTr("Stop after the current step; a checkpoint is written and the "
                                 "run can be resumed")
                       : trainTr("Nothing trains this run: Stop acts on a running training");
    // Another run trains: say which, and offer it (its controls are there, and in Jobs).
    c.offerLive = training && !showingLive() && !m_liveRunFile.isEmpty();
    if (training)
        c.liveText = trainTr("“%1” is %2 — open it")
                         .arg(QString::fromStdString(live->label), jobStateText(live->state));
    c.resume =
        !training && !m_runFile.isEmpty() && (m_status == "cancelled" || m_status == "interrupted");
    return c;
}

}  // namespace lengen::ui
