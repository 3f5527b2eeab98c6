#pragma once
// Watching a run train: progress bar with steps/s and ETA, pause/resume/stop, the queue, a
// live plot of the loss or the excess loss (raw + EMA smoothing with a slider, log scale,
// export of exactly what is drawn), the per-position metric averaged over the last logs, and
// beside them any other logged column (the curriculum, the gradient norm, the learning rate...).
// Appends from the controller's throttled signals and replots through QCustomPlot's queued replot,
// so a burst of updates costs one redraw. GUI thread only.

#include <QWidget>

#include <deque>
#include <vector>

#include "figure_spec.h"
#include "open_run_model.h"
#include "run_controller.h"
#include "train_model.h"
#include "training_columns.h"
#include "training_overlay.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QSlider;

namespace lengen::ui {

class TrainingView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TrainingView)

public:
    explicit TrainingView(RunController& controller, QWidget* parent = nullptr);
    /// Follows the studio's open run: shows its log, live while the worker trains it.
    void followOpenRun(const OpenRunModel& model);
    /// Shows this run: its log read from the file, continued live when it is the run the
    /// worker trains. Everything of the previous run (plots, progress, rate) is replaced; a run
    /// without a log (imported) says so.
    void showRunLog(const QString& runFile);
    /// The progress bar's value and maximum, and the rate text (tests).
    QString progressText() const;
    QString shownRun() const { return m_model.runFile(); }
    /// The tab's state (train_model.h): the run shown, the live training, the curves, choices.
    const TrainModel& model() const { return m_model; }
    QString rateText() const;
    bool resumeOffered() const;
    /// Whether Pause / Stop are enabled, and the "another run trains" offer (tests).
    bool controlsEnabled() const;
    QString otherTrainingOffer() const;
    QString headerText() const;  ///< the line above the progress bar
    /// "<host>:<pid>" of another process that trains the shown run ("" when none): Stop then
    /// asks it to stop, as `lengen stop` does (issue 53).
    QString trainedElsewhereBy() const;

Q_SIGNALS:
    /// The shown run is stopped or interrupted and nothing trains: continue it.
    void resumeRequested(QString runFile);
    /// Another run than the open one trains, and the user asked to open it.
    void openRunRequested(QString runFile);

public:
    int loggedPoints() const;
    /// The loss plot as a figure: the chosen series raw and smoothed, as drawn.
    plots::FigureSpec lossFigure() const;
    /// Writes lossFigure() (PNG/SVG/PDF/CSV by the extension); false + error on failure.
    bool exportLoss(const QString& path, int dpi, QString* error);
    /// Draws these runs' logged curves over the loss plot, smoothed like the shown run's and
    /// each in the colour it is shown in (its Compare group's, as its swatch; a group's later
    /// runs dashed); an empty list removes them. Returns the runs left out (not
    /// readable), each with its message; the shown run itself is not overlaid twice.
    QStringList setOverlays(const QStringList& runFiles);
    QStringList overlays() const;
    /// Redraws the overlay in the colours the runs are shown in now (plots::shownRunColor:
    /// Compare regrouped them).
    void refreshColors();
    /// The hover read-out under the loss plot.
    QString hoverText() const;
    /// The second plot beside the loss: any logged column of the shown run (the curriculum
    /// by default), as a figure that is both drawn and exported.
    void setLoggedColumn(LoggedColumn column);
    plots::FigureSpec columnFigure() const;
    bool exportColumn(const QString& path, int dpi, QString* error);

private:
    /// A status text that never widens the window (issue 41: "2 queued: …" pushed it past the
    /// screen and cut off Stop): at most 360 px, elided, the whole text in the tooltip.
    template <typename W>
    static void setElided(W* widget, const QString& text)
    {
        widget->setToolTip(text);
        widget->setText(widget->fontMetrics().elidedText(text, Qt::ElideRight, 360));
    }
    // The constructor's steps, in order.
    void createControls();
    void createPlots();
    void layOut();
    void wireControls();
    void wireController();
    void onState(RunController::State s);
    void onStarted(const JobInfo& job, const engine::RunStarted& info);
    void onProgress(const JobInfo& job, const engine::StepProgress& p);
    void onLog(const JobInfo& job, const engine::LogRecord& r);
    void redrawAll();
    void redrawSmoothed();
    void redrawColumn();
    void redrawPointwise();
    void exportWithDialog();

    RunController& m_controller;
    TrainModel m_model;
    QProgressBar* m_progress;
    QLabel *m_label, *m_rate, *m_queue;
    QPushButton *m_pause, *m_stop, *m_resume, *m_openLive;
    QSlider* m_smoothing;
    QCheckBox* m_logScale;
    QComboBox* m_series;  ///< loss | excess loss
    QComboBox* m_column;  ///< the logged column beside the loss (LoggedColumn order)
    QCustomPlot *m_loss, *m_pointwise, *m_side;
    int m_readRetries = 0;  ///< reads of a run another process writes, retried (showRunLog)
    QString m_pendingRead;  ///< the run a retry will read again ("" when none)
    void updateControls();
    QPushButton* m_clearOverlays;
    QPushButton* m_export = nullptr;
    QPushButton* m_columnExport = nullptr;
    QLabel* m_hover;
};

}  // namespace lengen::ui
