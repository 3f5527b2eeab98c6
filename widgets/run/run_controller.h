#pragma once
// Owns the worker thread and a queue of engine jobs (a sweep over PEs is several training
// runs in a row, evaluations and probes wait their turn), each of a JobKind; lives on the GUI
// thread. Training jobs report runStarted/stepProgress/logRecord, analysis jobs
// analysisProgress. Its State alone decides which buttons are enabled.
// Each job ends with exactly one of runFinished, runCancelled, runFailed.

#include <QList>
#include <QObject>
#include <QThread>

#include <memory>

#include "training_worker.h"

namespace lengen::ui {

class RunController final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunController)

public:
    enum class State { Idle, Running, Paused, Stopping };
    Q_ENUM(State)

    explicit RunController(QObject* parent = nullptr);
    ~RunController() override;  ///< cancels the current job and waits for the thread

    State state() const { return m_state; }
    QString currentLabel() const { return m_label; }
    /// The kind of the job running, or of the one whose terminal signal is being emitted.
    JobKind currentKind() const { return m_kind; }
    int queuedCount() const { return static_cast<int>(m_queue.size()); }
    QStringList queuedLabels() const;

    /// Adds a training job; starts it at once when idle.
    void enqueue(const QString& label, TrainingWorker::Job job);
    /// Adds an evaluation or probe job.
    void enqueue(JobKind kind, const QString& label, TrainingWorker::AnalysisJob job);
    void pause();
    void resume();
    /// Cancels the current job (training writes a checkpoint first); queued jobs stay.
    void stop();
    void clearQueue();

Q_SIGNALS:
    void stateChanged(lengen::ui::RunController::State state);
    void queueChanged(int queued);
    void runStarted(QString label, lengen::engine::RunStarted info);
    void stepProgress(lengen::engine::StepProgress step);
    void logRecord(lengen::engine::LogRecord record);
    void analysisProgress(QString label, lengen::ui::JobKind kind, lengen::ui::AnalysisProgress progress);
    void warning(QString message);
    void runFinished(QString label, lengen::engine::RunSummary summary);
    void runCancelled(QString label, lengen::engine::RunSummary summary);
    void runFailed(QString label, lengen::ui::RunError error);

private:
    struct Queued {
        JobKind kind;
        QString label;
        TrainingWorker::Job job;
        TrainingWorker::AnalysisJob analysis;
    };
    void startNext();
    void finishCurrent();
    void setState(State s);

    std::unique_ptr<QThread> m_thread;
    TrainingWorker* m_worker = nullptr;  // owned by its thread; deleteLater when done
    QList<Queued> m_queue;
    QString m_label;
    JobKind m_kind = JobKind::Train;
    State m_state = State::Idle;
};

}  // namespace lengen::ui
