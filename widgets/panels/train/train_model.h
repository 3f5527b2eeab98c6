#pragma once
// The Train tab's state, with no widgets (issue 70): the run shown (its identity, status and
// the process that writes it), the training the studio runs (its job, file and header), the
// shown run's log (loss, excess loss, the per-position rows, every logged column), the runs
// overlaid, what the user chose (smoothing, series, log scale, the column beside the loss), and
// the rules: which log rows join, what Pause, Stop, Resume and "open the training run" do now,
// and the figures as drawn and exported. The view (training_view) builds widgets, forwards
// input and the controller's reports here, and paints; tests drive this without a window
// (tst_train_model). GUI thread.

#include <QString>
#include <QStringList>
#include <QVector>

#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "figure_spec.h"
#include "lengen/engine/run_file.h"
#include "run_types.h"
#include "training_columns.h"
#include "training_overlay.h"

namespace lengen::ui {

/// What the Train tab's buttons do now, and say.
struct TrainControls {
    bool pause = false;  ///< Pause (or Continue) enabled
    QString pauseText, pauseTip;
    bool stop = false;
    QString stopTip;
    bool offerLive = false;  ///< "“label” is running — open it": another run trains
    QString liveText;
    bool resume = false;  ///< Resume offered: the shown run stopped and nothing trains
};

class TrainModel {
public:
    static constexpr size_t kRecent = 20;  ///< per-position curve: mean of the last 20 rows

    /// Nothing shown: no run, no log (the overlays stay).
    void clearShown();
    /// Shows a stored run: its identity, status and writer, and every row of its log; an
    /// overlay of the same run is dropped (it is drawn once, as itself).
    void showStored(const QString& runFile, const engine::RunFileInfo& info,
                    const engine::TrainLog& log, double clipNorm);
    /// The studio's training started (`header`: its line with seed, device, parameters): it is
    /// shown; its rows arrive through appendLog.
    void startLive(quint64 job, const QString& runFile, const std::string& runId,
                   const QString& label, const QString& header);
    /// The studio's training ended: nothing trains here any more.
    void endLive() { m_liveRunFile.clear(); }

    const QString& runFile() const { return m_runFile; }
    const std::string& runId() const { return m_runId; }
    /// The colour the shown run is drawn in here (its loss, its per-position curve): the one it
    /// has in every view (plots::shownRunColor by its run id).
    std::string runColor() const;
    const QString& runName() const { return m_runName; }
    QString title() const;
    const std::string& status() const { return m_status; }
    const QString& writer() const { return m_writer; }
    quint64 liveJob() const { return m_liveJob; }
    const QString& liveRunFile() const { return m_liveRunFile; }
    const QString& liveHeader() const { return m_liveHeader; }
    /// Whether the run shown is the one the studio trains.
    bool showingLive() const { return !m_liveRunFile.isEmpty() && m_runFile == m_liveRunFile; }
    /// "<host>:<pid>" of another process that trains the shown run ("" when none).
    QString trainedElsewhereBy() const;

    /// Whether a log row of job `job` at `step` joins the shown curves: the live run's, shown,
    /// and not read from its file already.
    bool acceptsLog(quint64 job, std::int64_t step) const;
    /// One logged row of the live run.
    void appendLog(const engine::LogRecord& r);
    const QVector<double>& steps() const { return m_steps; }
    /// The per-position curve: the mean of the last kRecent rows (one row is one batch, too
    /// noisy alone), as positions and values.
    std::pair<QVector<double>, QVector<double>> pointwise() const;
    const LoggedColumns& columns() const { return m_columns; }

    /// Reads these runs' logs to draw over the shown one; returns the ones left out, with why.
    QStringList setOverlays(const QStringList& runFiles);
    const std::vector<LoggedCurve>& overlays() const { return m_overlays; }
    bool overlaid() const { return !m_overlays.empty(); }

    void setSmoothing(double alpha) { m_smoothing = alpha; }
    double smoothing() const { return m_smoothing; }
    void setExcess(bool excess) { m_excessShown = excess; }
    bool excessShown() const { return m_excessShown; }
    void setLogScale(bool on) { m_logScale = on; }
    void setColumn(LoggedColumn c) { m_column = c; }
    LoggedColumn column() const { return m_column; }
    /// The series chosen (loss or excess loss), raw, and smoothed as drawn.
    const QVector<double>& shownSeries() const { return m_excessShown ? m_excess : m_values; }
    QVector<double> smoothed(const QVector<double>& raw) const;
    /// The loss plot as a figure: the chosen series raw and smoothed; beside overlays, every
    /// run's smoothed curve in the colour it is shown in.
    plots::FigureSpec lossFigure() const;
    /// The logged column chosen, as a figure.
    plots::FigureSpec columnFigure() const;

    /// What the buttons do now, given the studio's training job as the controller has it.
    TrainControls controls(const std::optional<JobInfo>& live) const;

private:
    std::string runKey() const;  ///< the run id, or its file while it has none
    QString m_runFile, m_runName, m_title, m_writer, m_liveRunFile, m_liveHeader;
    std::string m_runId, m_status;
    quint64 m_liveJob = 0;
    QVector<double> m_steps, m_values, m_excess;
    std::deque<std::vector<double>> m_recent;  ///< the last kRecent per-position rows
    LoggedColumns m_columns;
    std::vector<LoggedCurve> m_overlays;
    double m_smoothing = 0.9;
    bool m_excessShown = false, m_logScale = true;
    LoggedColumn m_column = LoggedColumn::Curriculum;
};

}  // namespace lengen::ui
