#include "run_controller.h"

#include <QDateTime>
#include <QFileInfo>
#include <QLocale>
#include <QThread>

#include <algorithm>
#include <cmath>
#include <utility>

#include "lengen/engine/run_file.h"

namespace lengen::ui {

namespace {

constexpr int kEndedKept = 50;

qint64 nowMs() { return QDateTime::currentMSecsSinceEpoch(); }

// In-process jobs that keep cores busy; a sweep's cells are child processes with their own
// thread budget, an import mostly reads and writes files.
bool heavy(JobKind k) { return k == JobKind::Train || k == JobKind::Evaluate || k == JobKind::Probe || k == JobKind::Export; }

QString quoted(const QString& label) { return QStringLiteral("“%1”").arg(label); }

// What a job produced, in its kind's own units (the engine's summary counts them in stepsDone).
QString resultText(JobKind kind, const engine::RunSummary& s, bool stopped = false)
{
    if (!s.result.empty())  // the job's own words: "created 4 cells", "nothing to aggregate yet"
        return QString::fromStdString(s.result);
    const int n = int(s.stepsDone);
    switch (kind) {
    case JobKind::Train:
        // "final" only for a run that ended: a stopped run's last logged loss is not final.
        if (stopped)
            return std::isfinite(s.finalLoss) && s.stepsDone > 0
                       ? RunController::tr("stopped at step %1, last logged loss %2").arg(n).arg(s.finalLoss, 0, 'g', 4)
                       : RunController::tr("stopped at step %1").arg(n);
        return std::isfinite(s.finalLoss) && s.stepsDone > 0
                   ? RunController::tr("%n step(s), final loss %1", nullptr, n).arg(s.finalLoss, 0, 'g', 4)
                   : RunController::tr("%n step(s)", nullptr, n);
    case JobKind::Evaluate: return RunController::tr("%n method(s) computed", nullptr, n);
    case JobKind::Probe: return RunController::tr("%n probe(s) computed", nullptr, n);
    case JobKind::Export: return RunController::tr("%n file(s) written", nullptr, n);
    case JobKind::Sweep: return RunController::tr("%n cell(s) finished", nullptr, n);
    case JobKind::Import: return RunController::tr("%n run(s) imported", nullptr, n);
    }
    return {};
}

}  // namespace

QString runSubject(const QString& runOrFolder)
{
    try {
        return QFileInfo(QString::fromStdString(engine::locateRunFile(runOrFolder.toStdString()))).absoluteFilePath();
    } catch (const std::exception&) {
        return QFileInfo(runOrFolder).absoluteFilePath();
    }
}

QString newRunSubject(const QString& label) { return QStringLiteral("new run: ") + label; }

RunController::RunController(QObject* parent)
    : QObject(parent), m_maxConcurrent(std::max(1, QThread::idealThreadCount())),
      m_cores(std::make_shared<engine::CoreBudget>(m_maxConcurrent))
{
    registerRunTypes();
    // Cores given back on another thread (a sweep's cell ended): queued jobs may start now.
    m_cores->setOnFreed([this] { QMetaObject::invokeMethod(this, [this] { schedule(); }, Qt::QueuedConnection); });
}

RunController::~RunController()
{
    m_cores->setOnFreed({});  // a sweep executor may outlive nothing here, but not call back into it
    qDeleteAll(m_queue);
    m_queue.clear();
    for (auto* e : m_running)
        e->worker->requestCancel();  // the engine checks it between steps
    for (auto* e : m_running) {
        e->thread->quit();
        e->thread->wait();
        delete e->worker;  // its thread has stopped: nothing else touches it
        delete e->thread;
        delete e;
    }
}

QStringList RunController::queuedLabels() const
{
    QStringList out;
    for (const auto* e : m_queue)
        out << e->info.label;
    return out;
}

quint64 RunController::enqueue(const QString& label, TrainingWorker::Job job, const QString& subject)
{
    auto* e = new Entry;
    e->info.id = m_nextId++;
    e->info.kind = JobKind::Train;
    e->info.label = label;
    e->info.subject = subject;
    e->info.queuedAtMs = nowMs();
    e->job = std::move(job);
    m_queue.append(e);
    Q_EMIT jobChanged(e->info);
    Q_EMIT queueChanged(queuedCount());
    const quint64 id = e->info.id;
    schedule();
    return id;
}

quint64 RunController::enqueue(JobKind kind, const QString& label, TrainingWorker::AnalysisJob job,
                               const QString& subject)
{
    auto* e = new Entry;
    e->info.id = m_nextId++;
    e->info.kind = kind;
    e->info.label = label;
    e->info.subject = subject;
    e->info.queuedAtMs = nowMs();
    e->analysis = std::move(job);
    m_queue.append(e);
    Q_EMIT jobChanged(e->info);
    Q_EMIT queueChanged(queuedCount());
    const quint64 id = e->info.id;
    schedule();
    return id;
}

// ---- what runs ------------------------------------------------------------------------

QString RunController::freeCoreText() const
{
    return tr("a free core (%1 of %2 in use; Run ▸ Concurrent jobs…)").arg(m_cores->inUse()).arg(m_cores->limit());
}

QString RunController::blocker(const Entry& e, const QList<Entry*>& before) const
{
    const auto& me = e.info;
    auto conflict = [&](const JobInfo& other, bool running) -> QString {
        const QString who = quoted(other.label) + (running ? QString() : tr(" (queued before it)"));
        if (me.subject.isEmpty() || other.subject.isEmpty())
            return who;  // one of them may touch anything: one at a time
        if (me.subject == other.subject)
            return who + tr(", on the same files");
        if (me.kind == JobKind::Train && other.kind == JobKind::Train)
            return who + tr(": one training at a time");
        return {};
    };
    for (const auto* r : m_running)
        if (auto why = conflict(r->info, true); !why.isEmpty())
            return why;
    for (const auto* b : before)
        if (auto why = conflict(b->info, false); !why.isEmpty())
            return why;
    if (heavy(me.kind) && m_cores->inUse() >= m_cores->limit())  // sweep cells hold cores too
        return freeCoreText();
    return {};
}

void RunController::schedule()
{
    // start() emits signals whose handlers may enqueue: one pass at a time, repeated until none
    // of them changed the queue.
    if (m_scheduling) {
        m_scheduleAgain = true;
        return;
    }
    m_scheduling = true;
    do {
        m_scheduleAgain = false;
        QList<Entry*> before;
        for (auto* e : QList<Entry*>(m_queue)) {
            if (!m_queue.contains(e))
                continue;
            QString why = blocker(*e, before);
            // The core is taken here, in the same pass: a sweep's cell may take the last one
            // between a look at the budget and the job's start.
            if (why.isEmpty() && heavy(e->info.kind) && !(e->cores = m_cores->tryTake(1)))
                why = freeCoreText();
            if (why.isEmpty()) {
                m_queue.removeOne(e);
                Q_EMIT queueChanged(queuedCount());
                start(*e);
                continue;
            }
            if (e->info.waitingFor != why) {
                e->info.waitingFor = why;
                Q_EMIT jobChanged(e->info);
            }
            before << e;
        }
    } while (m_scheduleAgain);
    // What the queue waits for is reserved from a sweep's cells (CoreBudget::setWaiting).
    const auto waiting = std::count_if(m_queue.begin(), m_queue.end(), [](const Entry* e) {
        return heavy(e->info.kind) && e->info.waitingFor.startsWith(QStringLiteral("a free core"));
    });
    m_cores->setWaiting(int(waiting));
    m_scheduling = false;
}

void RunController::start(Entry& e)
{
    const quint64 id = e.info.id;  // its core, if it takes one, was taken by schedule()
    e.info.state = JobInfo::State::Running;
    e.info.waitingFor.clear();
    e.info.startedAtMs = nowMs();
    e.worker = e.analysis ? new TrainingWorker(std::move(e.analysis)) : new TrainingWorker(std::move(e.job));
    e.thread = new QThread;
    e.thread->setObjectName(QStringLiteral("lengen-job-%1").arg(id));
    e.worker->moveToThread(e.thread);
    m_running.append(&e);
    auto* w = e.worker;
    connect(w, &TrainingWorker::started, this, [this, id](const engine::RunStarted& s) {
        auto* a = active(id);
        if (!a)
            return;
        if (!s.runFile.empty())  // a new run's files are known now: jobs on them wait for it
            a->info.subject = QFileInfo(QString::fromStdString(s.runFile)).absoluteFilePath();
        touch(*a);
        as(a->info, [&] { Q_EMIT runStarted(a->info.label, s); });
    });
    connect(w, &TrainingWorker::progress, this, [this, id](const engine::StepProgress& p) {
        auto* a = active(id);
        if (!a)
            return;
        const auto total = std::max<std::int64_t>(1, p.totalSteps);
        a->info.fraction = double(p.step + 1) / double(total);
        a->info.progress = tr("%1/%2 steps").arg(QLocale().toString(qint64(p.step + 1)), QLocale().toString(qint64(total)));
        a->info.etaSeconds = p.etaSeconds;
        touch(*a);
        as(a->info, [&] { Q_EMIT stepProgress(p); });
    });
    connect(w, &TrainingWorker::logged, this, [this, id](const engine::LogRecord& r) {
        if (auto* a = active(id))
            as(a->info, [&] { Q_EMIT logRecord(r); });
    });
    connect(w, &TrainingWorker::warning, this, [this, id](const QString& text) {
        if (auto* a = active(id))
            as(a->info, [&] { Q_EMIT warning(text); });
    });
    connect(w, &TrainingWorker::analysisProgress, this, [this, id](const AnalysisProgress& p) {
        auto* a = active(id);
        if (!a)
            return;
        a->info.fraction = p.fraction;
        a->info.etaSeconds = p.etaSeconds;
        a->info.progress = a->info.kind == JobKind::Sweep ? tr("%1/%2 cells ended").arg(p.done).arg(p.total)
                           : p.stages > 1 ? tr("%1 (%2 of %3)").arg(p.stageName).arg(p.stage + 1).arg(p.stages)
                                          : p.stageName;
        touch(*a);
        as(a->info, [&] { Q_EMIT analysisProgress(a->info.label, a->info.kind, p); });
    });
    connect(w, &TrainingWorker::finished, this, [this, id](const engine::RunSummary& s) {
        const auto* a = active(id);
        if (!a || !end(id, JobInfo::State::Finished, resultText(a->info.kind, s)))
            return;
        Q_EMIT runFinished(m_emitting->label, s);
        m_emitting.reset();
        emitStateIfChanged();
        schedule();
    });
    connect(w, &TrainingWorker::cancelled, this, [this, id](const engine::RunSummary& s) {
        const auto* a = active(id);
        if (!a || !end(id, JobInfo::State::Cancelled,
                       a->info.kind == JobKind::Train ? resultText(a->info.kind, s, true)  // "stopped at step N, …"
                                                      : tr("stopped: %1").arg(resultText(a->info.kind, s))))
            return;
        Q_EMIT runCancelled(m_emitting->label, s);
        m_emitting.reset();
        emitStateIfChanged();
        schedule();
    });
    connect(w, &TrainingWorker::failed, this, [this, id](const RunError& error) {
        if (!end(id, JobInfo::State::Failed, error.message))
            return;
        Q_EMIT runFailed(m_emitting->label, error);
        m_emitting.reset();
        emitStateIfChanged();
        schedule();
    });
    e.thread->start();
    touch(e);
    emitStateIfChanged();
    QMetaObject::invokeMethod(w, &TrainingWorker::run, Qt::QueuedConnection);
}

// The job leaves the running list and joins the ended ones; it is the emitting job until the
// caller has sent its terminal signal (views ask currentKind() there).
bool RunController::end(quint64 id, JobInfo::State how, const QString& message)
{
    auto* e = active(id);
    if (!e)
        return false;
    m_running.removeOne(e);
    if (e->cores > 0) {
        const int cores = std::exchange(e->cores, 0);
        m_cores->give(cores);  // its callback reschedules, queued
    }
    e->info.state = how;
    e->info.endedAtMs = nowMs();
    e->info.message = message;
    e->info.etaSeconds = -1;
    if (how == JobInfo::State::Finished)
        e->info.fraction = 1;
    // run() has returned (its terminal signal is its last act): the thread ends at once.
    e->thread->quit();
    e->thread->wait();
    delete e->worker;
    delete e->thread;
    m_lastKind = e->info.kind;
    m_lastLabel = e->info.label;
    m_ended.prepend(e->info);
    while (m_ended.size() > kEndedKept)
        m_ended.removeLast();
    m_emitting = e->info;
    Q_EMIT jobChanged(e->info);
    delete e;
    return true;
}

// ---- steering -------------------------------------------------------------------------

void RunController::pause()
{
    if (const quint64 f = focusJob())
        pause(f);
}

void RunController::resume()
{
    if (const quint64 f = focusJob())
        resume(f);
}

void RunController::stop()
{
    if (const quint64 f = focusJob())
        stop(f);
}

bool RunController::pause(quint64 id)
{
    auto* e = active(id);
    // Only a training pauses: an evaluation paused froze without a word (issue 29).
    if (!e || e->info.kind != JobKind::Train || e->info.state != JobInfo::State::Running)
        return false;
    e->worker->setPaused(true);
    e->info.state = JobInfo::State::Paused;
    touch(*e);
    emitStateIfChanged();
    return true;
}

bool RunController::resume(quint64 id)
{
    auto* e = active(id);
    if (!e || e->info.state != JobInfo::State::Paused)
        return false;
    e->worker->setPaused(false);
    e->info.state = JobInfo::State::Running;
    touch(*e);
    emitStateIfChanged();
    return true;
}

bool RunController::stop(quint64 id)
{
    for (auto* q : m_queue)
        if (q->info.id == id) {  // never started: it leaves the queue, no terminal signal
            m_queue.removeOne(q);
            q->info.state = JobInfo::State::Cancelled;
            q->info.endedAtMs = nowMs();
            q->info.message = tr("cancelled before it started");
            m_ended.prepend(q->info);
            Q_EMIT jobChanged(q->info);
            Q_EMIT queueChanged(queuedCount());
            delete q;
            schedule();  // what waited for it may start
            return true;
        }
    auto* e = active(id);
    if (!e || e->info.state == JobInfo::State::Stopping)
        return false;
    e->worker->requestCancel();  // also wakes a paused job
    e->info.state = JobInfo::State::Stopping;
    touch(*e);
    emitStateIfChanged();
    return true;
}

void RunController::clearQueue()
{
    for (auto* q : QList<Entry*>(m_queue))
        stop(q->info.id);
    Q_EMIT queueChanged(0);
}

void RunController::setMaxConcurrent(int jobs)
{
    m_maxConcurrent = std::max(1, jobs);
    m_cores->setLimit(m_maxConcurrent);
    schedule();
}

// ---- reading --------------------------------------------------------------------------

RunController::Entry* RunController::active(quint64 id)
{
    for (auto* e : m_running)
        if (e->info.id == id)
            return e;
    return nullptr;
}

const RunController::Entry* RunController::activeOrNull(quint64 id) const
{
    for (const auto* e : m_running)
        if (e->info.id == id)
            return e;
    return nullptr;
}

quint64 RunController::focusJob() const
{
    for (const auto* e : m_running)
        if (e->info.kind == JobKind::Train)
            return e->info.id;
    return m_running.isEmpty() ? 0 : m_running.first()->info.id;
}

RunController::State RunController::state() const
{
    const auto* e = activeOrNull(focusJob());
    if (!e)
        return State::Idle;
    switch (e->info.state) {
    case JobInfo::State::Paused: return State::Paused;
    case JobInfo::State::Stopping: return State::Stopping;
    default: return State::Running;
    }
}

QString RunController::currentLabel() const
{
    if (m_emitting)
        return m_emitting->label;
    const auto* e = activeOrNull(focusJob());
    return e ? e->info.label : QString();
}

JobKind RunController::currentKind() const
{
    if (m_emitting)
        return m_emitting->kind;
    const auto* e = activeOrNull(focusJob());
    return e ? e->info.kind : m_lastKind;
}

quint64 RunController::currentJob() const { return m_emitting ? m_emitting->id : focusJob(); }

QString RunController::trainingRunFile() const
{
    for (const auto* e : m_running)
        if (e->info.kind == JobKind::Train && e->info.subject != newRunSubject(e->info.label))
            return e->info.subject;
    return {};
}

QList<JobInfo> RunController::jobs() const
{
    QList<JobInfo> out;
    for (const auto* e : m_running)
        out << e->info;
    for (const auto* e : m_queue)
        out << e->info;
    out << m_ended;
    return out;
}

// Views ask for one job on every progress signal and every button update: look it up where
// it is, without copying the whole list (jobs() does).
std::optional<JobInfo> RunController::job(quint64 id) const
{
    if (id == 0)
        return std::nullopt;
    for (const auto* list : {&m_running, &m_queue})
        for (const auto* e : *list)
            if (e->info.id == id)
                return e->info;
    for (const auto& j : m_ended)
        if (j.id == id)
            return j;
    return std::nullopt;
}

void RunController::whenEnded(quint64 id, QObject* receiver, std::function<void(const JobInfo&)> then)
{
    // A context object of its own, child of the receiver: the connection goes with the first
    // end it reports, or with the receiver.
    auto* once = new QObject(receiver);
    connect(this, &RunController::jobChanged, once, [once, id, then = std::move(then)](const JobInfo& j) {
        if (j.id != id || !j.ended())
            return;
        once->deleteLater();  // a job ends once
        then(j);
    });
}

void RunController::touch(Entry& e) { Q_EMIT jobChanged(e.info); }

void RunController::emitStateIfChanged()
{
    const State s = state();
    const quint64 f = focusJob();
    if (s == m_lastState && f == m_lastFocus)
        return;
    m_lastState = s;
    m_lastFocus = f;
    // Handlers ask currentKind(): the focus job's, even inside another job's terminal signal.
    const auto outer = m_emitting;
    if (const auto* e = activeOrNull(f))
        m_emitting = e->info;
    else
        m_emitting.reset();
    Q_EMIT stateChanged(s);
    m_emitting = outer;
}

template <typename Fn>
void RunController::as(const JobInfo& info, Fn&& emitNow)
{
    const auto outer = m_emitting;
    m_emitting = info;
    emitNow();
    m_emitting = outer;
}

}  // namespace lengen::ui
