#pragma once
// Watching a run train: progress bar with steps/s and ETA, pause/resume/stop, the queue, a
// live loss plot (raw + EMA smoothing with a slider, log scale) and the latest per-position
// metric. Appends from the controller's throttled signals and replots through QCustomPlot's
// queued replot, so a burst of updates costs one redraw. GUI thread only.

#include <QWidget>

#include "run_controller.h"

class QCheckBox;
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

private:
    void onState(RunController::State s);
    void onStarted(const QString& label, const engine::RunStarted& info);
    void onProgress(const engine::StepProgress& p);
    void onLog(const engine::LogRecord& r);
    void appendLoss(double step, double loss);
    void redrawSmoothed();

    RunController& m_controller;
    QProgressBar* m_progress;
    QLabel *m_label, *m_rate, *m_queue;
    QPushButton *m_pause, *m_stop;
    QSlider* m_smoothing;
    QCheckBox* m_logScale;
    QCustomPlot *m_loss, *m_pointwise, *m_curriculum;
    QVector<double> m_steps, m_values;
};

}  // namespace lengen::ui
