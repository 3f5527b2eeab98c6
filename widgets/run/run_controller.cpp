#include "run_controller.h"

namespace lengen::ui {

RunController::RunController(QObject* parent) : QObject(parent), m_thread(std::make_unique<QThread>())
{
    registerRunTypes();
    m_thread->setObjectName(QStringLiteral("lengen-worker"));
    m_thread->start();
}

RunController::~RunController()
{
    m_queue.clear();
    if (m_worker)
        m_worker->requestCancel();  // the engine checks it between steps
    m_thread->quit();
    m_thread->wait();
    delete m_worker;  // its thread has stopped: no queued deleteLater will run any more
}

QStringList RunController::queuedLabels() const
{
    QStringList out;
    for (const auto& q : m_queue)
        out << q.label;
    return out;
}

void RunController::enqueue(const QString& label, TrainingWorker::Job job)
{
    m_queue.append({JobKind::Train, label, std::move(job), {}});
    Q_EMIT queueChanged(queuedCount());
    if (m_state == State::Idle)
        startNext();
}

void RunController::enqueue(JobKind kind, const QString& label, TrainingWorker::AnalysisJob job)
{
    m_queue.append({kind, label, {}, std::move(job)});
    Q_EMIT queueChanged(queuedCount());
    if (m_state == State::Idle)
        startNext();
}

void RunController::pause()
{
    if (m_state != State::Running)
        return;
    m_worker->setPaused(true);
    setState(State::Paused);
}

void RunController::resume()
{
    if (m_state != State::Paused)
        return;
    m_worker->setPaused(false);
    setState(State::Running);
}

void RunController::stop()
{
    if (m_state != State::Running && m_state != State::Paused)
        return;
    m_worker->requestCancel();  // also wakes a paused job
    setState(State::Stopping);
}

void RunController::clearQueue()
{
    m_queue.clear();
    Q_EMIT queueChanged(0);
}

void RunController::startNext()
{
    if (m_queue.isEmpty()) {
        setState(State::Idle);
        return;
    }
    auto next = m_queue.takeFirst();
    Q_EMIT queueChanged(queuedCount());
    m_label = next.label;
    m_kind = next.kind;
    m_worker = next.analysis ? new TrainingWorker(std::move(next.analysis)) : new TrainingWorker(std::move(next.job));
    m_worker->moveToThread(m_thread.get());
    const QString label = m_label;
    const JobKind kind = m_kind;
    connect(m_worker, &TrainingWorker::analysisProgress, this,
            [this, label, kind](const AnalysisProgress& p) { Q_EMIT analysisProgress(label, kind, p); });
    connect(m_worker, &TrainingWorker::started, this,
            [this, label](const engine::RunStarted& s) { Q_EMIT runStarted(label, s); });
    connect(m_worker, &TrainingWorker::progress, this, &RunController::stepProgress);
    connect(m_worker, &TrainingWorker::logged, this, &RunController::logRecord);
    connect(m_worker, &TrainingWorker::warning, this, &RunController::warning);
    connect(m_worker, &TrainingWorker::finished, this, [this, label](const engine::RunSummary& s) {
        finishCurrent();
        Q_EMIT runFinished(label, s);
        startNext();
    });
    connect(m_worker, &TrainingWorker::cancelled, this, [this, label](const engine::RunSummary& s) {
        finishCurrent();
        Q_EMIT runCancelled(label, s);
        startNext();
    });
    connect(m_worker, &TrainingWorker::failed, this, [this, label](const RunError& e) {
        finishCurrent();
        Q_EMIT runFailed(label, e);
        startNext();
    });
    // Running -> Running when a queued job follows: views whose controls belong to one kind
    // of job (the Train tab's Pause/Stop) must hear of the new job's kind all the same.
    if (m_state == State::Running)
        Q_EMIT stateChanged(m_state);
    setState(State::Running);
    QMetaObject::invokeMethod(m_worker, &TrainingWorker::run, Qt::QueuedConnection);
}

void RunController::finishCurrent()
{
    if (m_worker) {
        m_worker->deleteLater();  // runs on the worker thread, after run() has returned
        m_worker = nullptr;
    }
    m_label.clear();
}

void RunController::setState(State s)
{
    if (s == m_state)
        return;
    m_state = s;
    Q_EMIT stateChanged(s);
}

}  // namespace lengen::ui
