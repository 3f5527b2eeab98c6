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

// Jobs that keep cores busy (the kind table's CPU-heavy rows: the studio's own trainings,
// analyses and exports; a sweep's cells take their threads from the same budget, cores(), in
// the sweep's executor, and a sweep's own job and an import take none).
bool heavy(JobKind k) { return engine::jobKindRow(k).cpuHeavy; }

QString quoted(const std::string& label)
{
    return QStringLiteral("“%1”").arg(QString::fromStdString(label));
}

}  // namespace

QString runSubject(const QString& runOrFolder)
{
    try {
        return QFileInfo(QString::fromStdString(engine::locateRunFile(runOrFolder.toStdString())))
            .absoluteFilePath();
    } catch (const std::exception&) {
        return QFileInfo(runOrFolder).absoluteFilePath();
    }
}

QString newRunSubject(const QString& label) { return QStringLiteral("new run: ") + label; }

RunController::RunController(QObject* parent)
    : QObject(parent), m_holder(engine::thisHolder()),
      m_maxConcurrent(std::max(1, QThread::idealThreadCount())),
      m_cores(std::make_shared<engine::CoreBudget>(m_maxConcurrent))
{
    registerRunTypes();
    // Cores given back on another thread (a sweep's cell ended): queued jobs may start now.
    m_cores->setOnFreed([this] {
        QMetaObject::invokeMethod(
            this, [this] { schedule(); }, Qt::QueuedConnection);
    });
}

RunController::~RunController()
{
    m_cores->setOnFreed(
        {});  // a sweep executor may outlive nothing here, but not call back into it
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
        out << QString::fromStdString(e->info.label);
    return out;
}

quint64 RunController::enqueue(const QString& label, JobWorker::Job job, const QString& subject)
{
    auto* e = new Entry;
    e->info.kind = JobKind::Training;
    e->job = std::move(job);
    return add(e, label, subject);
}

quint64 RunController::enqueue(JobKind kind, const QString& label, JobWorker::AnalysisJob job,
                               const QString& subject)
{
    auto* e = new Entry;
    e->info.kind = kind;
    e->analysis = std::move(job);
    return add(e, label, subject);
}

quint64 RunController::add(Entry* e, const QString& label, const QString& subject)
{
    e->info.id = m_nextId++;
    e->info.label = label.toStdString();
    e->info.subject = subject.toStdString();
    e->info.holder = m_holder;
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
    return tr("a free core (%1 of %2 in use; Run ▸ Concurrent jobs…)")
        .arg(m_cores->inUse())
        .arg(m_cores->limit());
}

QString RunController::blocker(const Entry& e, const QList<Entry*>& before) const
{
    const auto& me = e.info;
    auto conflict = [&](const JobInfo& other, bool running) -> QString {
        const QString who = quoted(other.label) + (running ? QString() : tr(" (queued before it)"));
        if (me.subject.empty() || other.subject.empty())
            return who;  // one of them may touch anything: one at a time
        if (me.subject == other.subject)
            return who + tr(", on the same files");
        if (me.kind == other.kind && engine::jobKindRow(me.kind).oneAtATime)
            return who + tr(": one %1 at a time").arg(engine::jobKindRow(me.kind).name);
        return {};
    };
    for (const auto* r : m_running)
        if (auto why = conflict(r->info, true); !why.isEmpty())
            return why;
    for (const auto* b : before)
        if (auto why = conflict(b->info, false); !why.isEmpty())
            return why;
    return {};
}

void RunController::schedule() { m_schedule.request(); }

void RunController::schedulePass()
{
    QList<Entry*> before;
    for (auto* e : QList<Entry*>(m_queue)) {
        if (!m_queue.contains(e))
            continue;
        QString why = blocker(*e, before);
        // The core is taken here, in the same pass: a sweep's cell may take the last one
        // between a look at the budget and the job's start (sweep cells hold cores too).
        const bool forCore =
            why.isEmpty() && heavy(e->info.kind) && !(e->cores = m_cores->tryTake(1));
        if (forCore)
            why = freeCoreText();
        if (why.isEmpty()) {
            m_queue.removeOne(e);
            Q_EMIT queueChanged(queuedCount());
            start(*e);
            continue;
        }
        if (e->info.waitingFor != why.toStdString() || e->info.waitingForCore != forCore) {
            e->info.waitingFor = why.toStdString();
            e->info.waitingForCore = forCore;
            Q_EMIT jobChanged(e->info);
        }
        before << e;
    }
    // What the queue waits for is reserved from a sweep's cells (CoreBudget::setWaiting).
    const auto waiting = std::count_if(m_queue.begin(), m_queue.end(),
                                       [](const Entry* e) { return e->info.waitingForCore; });
    m_cores->setWaiting(int(waiting));
    m_schedule.done();
}

void RunController::start(Entry& e)
{
    const quint64 id = e.info.id;  // its core, if it takes one, was taken by schedule()
    e.info.state = JobState::Running;
    e.info.waitingFor.clear();
    e.info.waitingForCore = false;
    e.info.startedAtMs = nowMs();
    e.worker = e.analysis ? new JobWorker(std::move(e.analysis)) : new JobWorker(std::move(e.job));
    e.thread = new QThread;
    e.thread->setObjectName(QStringLiteral("lengen-job-%1").arg(id));
    e.worker->moveToThread(e.thread);
    m_running.append(&e);
    auto* w = e.worker;
    connect(w, &JobWorker::started, this, [this, id](const engine::RunStarted& s) {
        auto* a = active(id);
        if (!a)
            return;
        if (!s.runFile.empty())  // a new run's files are known now: jobs on them wait for it
            a->info.subject =
                QFileInfo(QString::fromStdString(s.runFile)).absoluteFilePath().toStdString();
        a->info.totalSteps = s.totalSteps;
        touch(*a);
        Q_EMIT runStarted(a->info, s);
    });
    connect(w, &JobWorker::progress, this, [this, id](const engine::StepProgress& p) {
        auto* a = active(id);
        if (!a)
            return;
        const auto total = std::max<std::int64_t>(1, p.totalSteps);
        a->info.fraction = double(p.step + 1) / double(total);
        a->info.step = p.step + 1;
        a->info.totalSteps = total;
        a->info.progress =
            tr("%1/%2 steps")
                .arg(QLocale().toString(qint64(p.step + 1)), QLocale().toString(qint64(total)))
                .toStdString();
        a->info.etaSeconds = p.etaSeconds;
        touch(*a);
        Q_EMIT stepProgress(a->info, p);
    });
    connect(w, &JobWorker::logged, this, [this, id](const engine::LogRecord& r) {
        if (auto* a = active(id)) {
            a->info.lastLoss = r.loss;
            Q_EMIT logRecord(a->info, r);
        }
    });
    connect(w, &JobWorker::warning, this, [this, id](const QString& text) {
        if (auto* a = active(id))
            Q_EMIT warning(a->info, text);
    });
    connect(w, &JobWorker::analysisProgress, this, [this, id](const AnalysisProgress& p) {
        auto* a = active(id);
        if (!a)
            return;
        a->info.fraction = p.fraction;
        a->info.etaSeconds = p.etaSeconds;
        a->info.progress = engine::jobProgressText(a->info.kind, p.stageName.toStdString(), p.stage,
                                                   p.stages, p.done, p.total, p.part.toStdString());
        touch(*a);
        Q_EMIT analysisProgress(a->info, p);
    });
    connectEnds(w, id);
    e.thread->start();
    touch(e);
    emitStateIfChanged();
    QMetaObject::invokeMethod(w, &JobWorker::run, Qt::QueuedConnection);
}

// The worker's three ends, each to one terminal signal of the job (and the next job started).
void RunController::connectEnds(JobWorker* w, quint64 id)
{
    connect(w, &JobWorker::finished, this, [this, id](const engine::JobResult& r) {
        const auto* a = active(id);
        const auto ended = a ? end(id, JobState::Finished, r,
                                   QString::fromStdString(engine::jobResultText(a->info.kind, r)))
                             : std::nullopt;
        if (!ended)
            return;
        Q_EMIT runFinished(*ended);
        emitStateIfChanged();
        schedule();
    });
    connect(w, &JobWorker::cancelled, this, [this, id](const engine::JobResult& r) {
        const auto* a = active(id);
        if (!a)
            return;
        // "stopped after 900 steps, …", "stopped after 2 methods computed"
        const auto ended = end(
            id, JobState::Cancelled, r,
            QString::fromStdString(engine::jobResultText(a->info.kind, r, JobState::Cancelled)));
        if (!ended)
            return;
        Q_EMIT runCancelled(*ended);
        emitStateIfChanged();
        schedule();
    });
    connect(w, &JobWorker::failed, this, [this, id](const RunError& error) {
        const auto ended = end(id, JobState::Failed, {}, error.message);
        if (!ended)
            return;
        Q_EMIT runFailed(*ended, error);
        emitStateIfChanged();
        schedule();
    });
}

// The job leaves the running list and joins the ended ones; the caller sends its terminal
// signal with the record returned.
std::optional<JobInfo> RunController::end(quint64 id, JobState how, const engine::JobResult& result,
                                          const QString& message)
{
    auto* e = active(id);
    if (!e)
        return std::nullopt;
    m_running.removeOne(e);
    if (e->cores > 0) {
        const int cores = std::exchange(e->cores, 0);
        m_cores->give(cores);  // its callback reschedules, queued
    }
    e->info.state = how;
    e->info.endedAtMs = nowMs();
    e->info.result = result;
    e->info.message = message.toStdString();
    e->info.etaSeconds = -1;
    if (how == JobState::Finished)
        e->info.fraction = 1;
    // run() has returned (its terminal signal is its last act): the thread ends at once.
    e->thread->quit();
    e->thread->wait();
    delete e->worker;
    delete e->thread;
    m_ended.prepend(e->info);
    while (m_ended.size() > kEndedKept)
        m_ended.removeLast();
    JobInfo ended = e->info;
    delete e;
    Q_EMIT jobChanged(ended);
    return ended;
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
    // Only a pausable kind (a training): an evaluation paused froze without a word (issue 29).
    if (!e || !engine::jobKindRow(e->info.kind).pausable || e->info.state != JobState::Running)
        return false;
    e->worker->setPaused(true);
    e->info.state = JobState::Paused;
    touch(*e);
    emitStateIfChanged();
    return true;
}

bool RunController::resume(quint64 id)
{
    auto* e = active(id);
    if (!e || e->info.state != JobState::Paused)
        return false;
    e->worker->setPaused(false);
    e->info.state = JobState::Running;
    touch(*e);
    emitStateIfChanged();
    return true;
}

bool RunController::stop(quint64 id)
{
    for (auto* q : m_queue)
        if (q->info.id == id) {  // never started: it leaves the queue, no terminal signal
            m_queue.removeOne(q);
            q->info.state = JobState::Cancelled;
            q->info.endedAtMs = nowMs();
            q->info.message = tr("cancelled before it started").toStdString();
            m_ended.prepend(q->info);
            Q_EMIT jobChanged(q->info);
            Q_EMIT queueChanged(queuedCount());
            delete q;
            schedule();  // what waited for it may start
            return true;
        }
    auto* e = active(id);
    if (!e || e->info.state == JobState::Stopping)
        return false;
    e->worker->requestCancel();  // also wakes a paused job
    e->info.state = JobState::Stopping;
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
        if (e->info.kind == JobKind::Training)
            return e->info.id;
    return m_running.isEmpty() ? 0 : m_running.first()->info.id;
}

RunController::State RunController::state() const
{
    const auto* e = activeOrNull(focusJob());
    if (!e)
        return State::Idle;
    switch (e->info.state) {
    case JobState::Paused: return State::Paused;
    case JobState::Stopping: return State::Stopping;
    default: return State::Running;
    }
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

void RunController::whenEnded(quint64 id, QObject* receiver,
                              std::function<void(const JobInfo&)> then)
{
    // A context object of its own, child of the receiver: the connection goes with the first
    // end it reports, or with the receiver.
    auto* once = new QObject(receiver);
    connect(this, &RunController::jobChanged, once,
            [once, id, then = std::move(then)](const JobInfo& j) {
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
    Q_EMIT stateChanged(s, job(f).value_or(JobInfo{}));
}

}  // namespace lengen::ui
