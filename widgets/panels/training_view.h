#pragma once
// Watching a run train: progress bar with steps/s and ETA, pause/resume/stop, the queue, a
// live plot of the loss or the excess loss (raw + EMA smoothing with a slider, log scale,
// export of exactly what is drawn), the per-position metric averaged over the last logs, and
// the curriculum. Appends from the controller's throttled signals and replots through QCustomPlot's
// queued replot, so a burst of updates costs one redraw. GUI thread only.

#include <QWidget>

#include <deque>
#include <vector>

#include "figure_spec.h"
#include "run_controller.h"
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
    /// Shows a finished run's log (from its run file) when nothing is training.
    void showRunLog(const QString& runFile);
    int loggedPoints() const;
    /// The loss plot as a figure: the chosen series raw and smoothed, as drawn.
    plots::FigureSpec lossFigure() const;
    /// Writes lossFigure() (PNG/SVG/PDF/CSV by the extension); false + error on failure.
    bool exportLoss(const QString& path, int dpi, QString* error);
    /// Draws these runs' logged curves over the loss plot, smoothed like the shown run's and
    /// each in its run colour; an empty list removes them. Returns the runs left out (not
    /// readable), each with its message; the shown run itself is not overlaid twice.
    QStringList setOverlays(const QStringList& runFiles);
    QStringList overlays() const;
    /// The hover read-out under the loss plot.
    QString hoverText() const;

private:
    void onState(RunController::State s);
    void onStarted(const QString& label, const engine::RunStarted& info);
    void onProgress(const engine::StepProgress& p);
    void onLog(const engine::LogRecord& r);
    void appendLoss(double step, double loss, double excess);
    void addPointwise(const double* values, size_t n);
    void clearSeries();
    void redrawSmoothed();
    void exportWithDialog();
    QVector<double> smoothed(const QVector<double>& raw) const;
    bool overlaid() const { return !m_overlays.empty(); }

    RunController& m_controller;
    QProgressBar* m_progress;
    QLabel *m_label, *m_rate, *m_queue;
    QPushButton *m_pause, *m_stop;
    QSlider* m_smoothing;
    QCheckBox* m_logScale;
    QComboBox* m_series;  ///< loss | excess loss
    QCustomPlot *m_loss, *m_pointwise, *m_curriculum;
    QVector<double> m_steps, m_values, m_excess;
    std::vector<LoggedCurve> m_overlays;
    QString m_runFile, m_runName;  ///< the shown run (its legend name while overlays are drawn)
    std::string m_runId;
    QPushButton* m_clearOverlays;
    QLabel* m_hover;
    std::deque<std::vector<double>> m_recent;  ///< the last kRecent per-position rows
    QString m_title;
};

}  // namespace lengen::ui
