#pragma once
// The studio's one owner of jobs (trainings, evaluations, probes, exports, sweeps, imports):
// every job is a JobInfo it hands out by id, and every view (the Jobs panel, the Train tab, the
// Sweeps tab, the status bar) reads jobs from here. Lives on the GUI thread; each running job
// has a worker thread of its own.
//
// Lanes: a queued job starts as soon as nothing holds it back, in queue order:
//   * jobs on the same subject (run file or sweep folder) run one after another;
//   * one training at a time (the Train tab follows it);
//   * at most maxConcurrent() cores busy with CPU-heavy work (default: the core count): each
//     in-process training, evaluation, probe or export takes one, and a local sweep run here
//     hands the same budget (cores()) to its executor, whose cells take their threads each, so
//     the cells count too; sweeps' own jobs and imports take none;
//   * a job with no subject (tests' fake jobs) runs alone.
// A queued job says what it waits for (JobInfo::waitingFor).
//
// Every signal about a job carries its record (JobInfo = engine::JobRecord: id, kind, label,
// subject, state, progress, result), so a handler knows which job spoke without asking. Each
// job ends with exactly one of runFinished, runCancelled, runFailed; whenEnded(id) is the way to
// act on one job's end. The focus job is the running training, else the oldest running job:
// state(), pause(), resume() and stop() without an id act on it (the Train tab's and the Run
// menu's controls name it).

#include <QList>
#include <QObject>

#include <functional>
#include <memory>
#include <optional>

#include "job_worker.h"
#include "latest_only.h"
#include "lengen/engine/core_budget.h"

class QThread;

namespace lengen::ui {

/// A run's subject for enqueue: its run file's absolute path (a folder or a run file given; as
/// given when it names no run).
QString runSubject(const QString& runOrFolder);
/// The subject of a training that makes a new run (its file is known once it starts).
QString newRunSubject(const QString& label);

class RunController final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunController)

public:
    enum class State { Idle, Running, Paused, Stopping };
    Q_ENUM(State)

    explicit RunController(QObject* parent = nullptr);
    ~RunController() override;  ///< cancels every running job and waits for their threads

    State state() const;  ///< of the focus job; Idle when nothing runs
    int queuedCount() const { return static_cast<int>(m_queue.size()); }
    QStringList queuedLabels() const;

    /// Adds a training job; `subject` is its run file when known (a resume). Returns its id.
    quint64 enqueue(const QString& label, JobWorker::Job job, const QString& subject = {});
    /// Adds an evaluation, probe, export, sweep or import job on `subject`.
    quint64 enqueue(JobKind kind, const QString& label, JobWorker::AnalysisJob job,
                    const QString& subject = {});
    void pause();  ///< the focus job, when it is a training
    void resume();
    void stop();  ///< the focus job (training writes a checkpoint first); the queue stays
    bool pause(quint64 id);  ///< a running training; false otherwise
    bool resume(quint64 id);
    bool stop(quint64 id);  ///< a running job: cancel it; a queued one: remove it
    void clearQueue();

    QList<JobInfo> jobs() const;  ///< running, then queued (in order), then ended (newest first)
    std::optional<JobInfo> job(quint64 id) const;
    /// Calls `then` once, on the GUI thread, when job `id` has ended (finished, stopped, failed
    /// or cancelled while queued); nothing if `receiver` is destroyed first.
    void whenEnded(quint64 id, QObject* receiver, std::function<void(const JobInfo&)> then);
    quint64 focusJob() const;  ///< 0 when nothing runs
    std::optional<JobInfo> focus() const { return job(focusJob()); }
    void setMaxConcurrent(int jobs);
    int maxConcurrent() const { return m_maxConcurrent; }
    /// The cores the studio's CPU-heavy work shares (limit maxConcurrent()): a sweep run here
    /// gives it to its executor (LocalSweepOptions::cores).
    std::shared_ptr<engine::CoreBudget> cores() const { return m_cores; }

Q_SIGNALS:
    /// The studio's state changed, or the job it is about (focusJob(): the training, else the
    /// first running job; `focus.id` 0 when nothing runs).
    void stateChanged(lengen::ui::RunController::State state, lengen::ui::JobInfo focus);
    void queueChanged(int queued);
    /// A job was added, started, progressed, changed state or ended (throttle in views).
    void jobChanged(lengen::ui::JobInfo job);
    /// A training's files are known (`job.subject` is its run file from now on).
    void runStarted(lengen::ui::JobInfo job, lengen::engine::RunStarted info);
    void stepProgress(lengen::ui::JobInfo job, lengen::engine::StepProgress step);
    void logRecord(lengen::ui::JobInfo job, lengen::engine::LogRecord record);
    void analysisProgress(lengen::ui::JobInfo job, lengen::ui::AnalysisProgress progress);
    void warning(lengen::ui::JobInfo job, QString message);
    /// Terminal signals: `job.result` holds what it did in its kind's units, `job.message` says it.
    void runFinished(lengen::ui::JobInfo job);
    void runCancelled(lengen::ui::JobInfo job);
    void runFailed(lengen::ui::JobInfo job, lengen::ui::RunError error);

private:
    struct Entry {
        JobInfo info;
        JobWorker::Job job;
        JobWorker::AnalysisJob analysis;
        QThread* thread = nullptr;    // while it runs
        int cores = 0;                // taken from m_cores while it runs
        JobWorker* worker = nullptr;  // lives on `thread`
    };
    quint64 add(Entry* e, const QString& label, const QString& subject);
    void schedule();
    QString blocker(const Entry& e, const QList<Entry*>& before) const;
    QString freeCoreText() const;  ///< what a job waiting for a core waits for
    void connectEnds(JobWorker* w, quint64 id);
    void start(Entry& e);
    /// Moves job `id` to the ended ones; its final record, or nullopt when it was not running.
    std::optional<JobInfo> end(quint64 id, JobState how, const engine::JobResult& result,
                               const QString& message);
    Entry* active(quint64 id);
    const Entry* activeOrNull(quint64 id) const;
    void touch(Entry& e);
    void schedulePass();
    void emitStateIfChanged();

    QList<Entry*> m_running;  // owned
    QList<Entry*> m_queue;    // owned
    QList<JobInfo> m_ended;   // newest first, at most kEndedKept
    std::string m_holder;     // this process, as every record's holder says it
    quint64 m_nextId = 1;
    int m_maxConcurrent = 1;
    std::shared_ptr<engine::CoreBudget> m_cores;
    State m_lastState = State::Idle;
    quint64 m_lastFocus = 0;
    // start() emits signals whose handlers may enqueue: one pass at a time, repeated until none
    // of them changed the queue.
    Coalesced m_schedule{[this] { schedulePass(); }};
};

}  // namespace lengen::ui
