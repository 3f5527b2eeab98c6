#include "jobs_panel.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

#include "lengen/engine/run_control.h"
#include "lengen/engine/sweep_jobs.h"
#include "run_controller.h"

namespace lengen::ui {

namespace {

enum Column { Name, Kind, State, Progress, Elapsed, Eta, Subject, Columns };

QString clock(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0)
        return {};
    const qint64 s = std::llround(seconds);
    return s >= 3600 ? QStringLiteral("%1:%2:%3")
                           .arg(s / 3600)
                           .arg(s / 60 % 60, 2, 10, QLatin1Char('0'))
                           .arg(s % 60, 2, 10, QLatin1Char('0'))
                     : QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

QString qs(const std::string& s) { return QString::fromStdString(s); }

// The state column of the studio's own job. A job says what it did: "finished: 1,200 steps, …"
// only where its kind counted something; a job that did nothing countable says its own words
// ("created 4 cell(s)", "nothing to aggregate yet", "took no cell") without "finished".
QString stateText(const JobInfo& j)
{
    if (j.state == JobState::Queued)
        return j.waitingFor.empty() ? JobsPanel::tr("queued")
                                    : JobsPanel::tr("queued, waiting for %1").arg(qs(j.waitingFor));
    if (j.state == JobState::Failed)
        return JobsPanel::tr("failed: %1").arg(qs(j.message).section(QLatin1Char('\n'), 0, 0));
    if (j.state == JobState::Finished && !j.message.empty())
        return j.result.said.empty() && j.result.done > 0
                   ? JobsPanel::tr("finished: %1").arg(qs(j.message))
                   : qs(j.message);
    if (j.state == JobState::Cancelled && !j.message.empty())
        return qs(j.message);  // "stopped after …" or "cancelled before it started"
    return jobStateText(j.state);
}

bool isRunFile(const std::string& subject)
{
    return QString::fromStdString(subject).endsWith(QLatin1String(".h5")) &&
           QFileInfo::exists(qs(subject));
}

constexpr int kKeyRole = Qt::UserRole + 1;  // another process's job: its JobRecord::key

// Another process's job as a row, named as its kind's row says from its subject: a cell's
// name, a run's folder, a sweep's folder ("evaluation of run-3").
QString otherName(const engine::JobRecord& j)
{
    const QFileInfo subject(qs(j.subject));
    const QString name = !j.cell.empty() ? qs(j.cell)
                         : subject.fileName().endsWith(QLatin1String(".h5"))
                             ? subject.dir().dirName()
                             : subject.fileName();
    return QCoreApplication::translate("lengen::engine::JobKindRow",
                                       engine::jobKindRow(j.kind).shownAs)
        .arg(name);
}

// Whether another process's job of this kind takes `request` from here.
bool takes(const engine::JobRecord& j, engine::JobRequest request)
{
    return engine::jobKindRow(j.kind).foreign == request;
}

// Another process's state column: its state (Slurm's beside it) and who holds it; a cell of
// this studio's own sweep run is said to be one.
QString otherState(const engine::JobRecord& o, const QList<JobInfo>& own)
{
    QString state = QString::fromLatin1(engine::jobStateName(o.state, o.kind));
    if (!o.schedulerState.empty())
        state += QStringLiteral(" (Slurm %1)").arg(qs(o.schedulerState));
    QString holder = qs(o.holder);
    if (o.heldHere())  // a cell of a sweep this studio runs: its row names the job
        for (const auto& j : own)
            if (j.active() && !j.subject.empty() &&
                QFileInfo(qs(j.subject)) == QFileInfo(qs(o.subject)))
                holder = JobsPanel::tr("cell of “%1”").arg(qs(j.label));
    return JobsPanel::tr("%1 · held by %2")
        .arg(state, holder.isEmpty() ? JobsPanel::tr("an unknown process") : holder);
}

}  // namespace

JobsPanel::JobsPanel(RunController& controller, QWidget* parent)
    : QWidget(parent), m_controller(controller)
{
    m_list = new QTreeWidget;
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->setColumnCount(Columns);
    m_list->setHeaderLabels(
        {tr("Job"), tr("Kind"), tr("State"), tr("Progress"), tr("Elapsed"), tr("ETA"), tr("On")});
    // Room for what each column says; the state (with what a queued job waits for) takes the rest.
    for (const auto& [column, width] : {std::pair{Name, 280},
                                        {Kind, 90},
                                        {Progress, 230},
                                        {Elapsed, 70},
                                        {Eta, 70},
                                        {Subject, 130}})
        m_list->setColumnWidth(column, width);
    m_list->header()->setSectionResizeMode(State, QHeaderView::Stretch);
    m_list->setSelectionMode(QAbstractItemView::SingleSelection);
    m_selected = new QLabel(tr("Select a job"));
    m_pause = new QPushButton(tr("Pause"));
    m_continue = new QPushButton(tr("Continue"));
    m_stop = new QPushButton(tr("Stop"));
    m_cancel = new QPushButton(tr("Cancel"));
    m_open = new QPushButton(tr("Open run"));
    m_cores = new QLabel;
    m_cores->setToolTip(
        tr("CPU-heavy work (trainings, evaluations, probes, exports and a local sweep's cells) "
           "shares this many cores; Run ▸ Concurrent jobs… sets the limit"));
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_cores);
    buttons->addWidget(m_selected, 1);
    for (auto* b : {m_pause, m_continue, m_stop, m_cancel, m_open})
        buttons->addWidget(b);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_list, 1);
    layout->addLayout(buttons);

    m_timer = new QTimer(this);
    m_timer->setInterval(250);
    connect(m_timer, &QTimer::timeout, this, [this] {
        // Elapsed times move every second even when no job reports.
        if (m_dirty || ++m_ticks % 4 == 0)
            rebuild();
    });
    m_timer->start();
    // Other processes' jobs: looked for every 2 s, off the GUI thread (a folder walk and, for
    // Slurm cells, squeue).
    m_look = new QTimer(this);
    m_look->setInterval(2000);
    connect(m_look, &QTimer::timeout, this, &JobsPanel::lookForOtherJobs);
    connect(&m_controller, &RunController::jobChanged, this, [this] { m_dirty = true; });
    connect(m_list, &QTreeWidget::itemSelectionChanged, this, &JobsPanel::updateActions);
    connect(m_list, &QTreeWidget::itemDoubleClicked, this, [this] { trigger(Action::OpenRun); });
    connect(m_pause, &QPushButton::clicked, this, [this] { trigger(Action::Pause); });
    connect(m_continue, &QPushButton::clicked, this, [this] { trigger(Action::Continue); });
    connect(m_stop, &QPushButton::clicked, this, [this] { trigger(Action::Stop); });
    connect(m_cancel, &QPushButton::clicked, this, [this] { trigger(Action::Cancel); });
    connect(m_open, &QPushButton::clicked, this, [this] { trigger(Action::OpenRun); });
    rebuild();
}

void JobsPanel::rebuild()
{
    m_dirty = false;
    const quint64 selected = selectedJob();
    const auto selectedKey = selectedOther();
    const auto jobs = m_controller.jobs();
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    // Rows in the controller's order (running, queued, ended), then other processes' jobs;
    // items are reused by position so the selection and scroll position survive a rebuild.
    const int rows = int(jobs.size()) + int(m_other.size());
    while (m_list->topLevelItemCount() > rows)
        delete m_list->takeTopLevelItem(m_list->topLevelItemCount() - 1);
    const QSignalBlocker block(m_list);
    for (int i = 0; i < rows; ++i) {
        auto* item = m_list->topLevelItem(i);
        if (!item)
            item = new QTreeWidgetItem(m_list);
        const bool own = i < jobs.size();
        const JobInfo& j = own ? jobs[i] : m_other[size_t(i - jobs.size())];
        item->setData(Name, Qt::UserRole, QVariant::fromValue(own ? j.id : quint64(0)));
        item->setData(Name, kKeyRole, own ? QVariant() : QVariant(qs(j.key())));
        item->setText(Name, own ? qs(j.label) : otherName(j));
        item->setText(Kind, QString::fromLatin1(engine::jobKindRow(j.kind).name));
        item->setText(State, own ? stateText(j) : otherState(j, jobs));
        item->setToolTip(State,
                         !own ? item->text(State) +
                                    (j.waitingFor.empty() ? QString() : "\n" + qs(j.waitingFor))
                         : j.message.empty() ? stateText(j)
                                             : qs(j.message));
        const QString pct =
            j.fraction >= 0 ? QStringLiteral("%1 %").arg(std::floor(100 * j.fraction)) : QString();
        item->setText(Progress, j.progress.empty() ? pct
                                : pct.isEmpty()    ? qs(j.progress)
                                                   : pct + " · " + qs(j.progress));
        const qint64 end = j.endedAtMs ? j.endedAtMs : now;
        item->setText(Elapsed, j.startedAtMs ? clock((end - j.startedAtMs) / 1000.0) : QString());
        item->setText(Eta, j.state == JobState::Running ? clock(j.etaSeconds) : QString());
        const QFileInfo subject(qs(j.subject));
        item->setText(Subject, subject.fileName() == QLatin1String("run.h5")
                                   ? subject.dir().dirName()
                                   : subject.fileName());
        item->setToolTip(Subject, qs(j.subject));
        item->setSelected(own ? j.id == selected : selectedKey && selectedKey->key() == j.key());
    }
    // What waits for a core: the studio's queued jobs and the cells of a sweep it runs.
    const auto cores = m_controller.cores();
    const auto waiting =
        std::count_if(jobs.begin(), jobs.end(), [](const JobInfo& j) { return j.waitingForCore; }) +
        cores->cellsWaiting();
    m_cores->setText(tr("cores: %1 of %2 in use").arg(cores->inUse()).arg(cores->limit()) +
                     (waiting ? tr(" · %n waiting for one", nullptr, int(waiting)) : QString()));
    updateActions();
}

QString JobsPanel::coresText() const { return m_cores->text(); }

quint64 JobsPanel::selectedJob() const
{
    const auto items = m_list->selectedItems();
    return items.isEmpty() ? 0 : items.front()->data(Name, Qt::UserRole).value<quint64>();
}

void JobsPanel::select(quint64 id)
{
    rebuild();
    for (int i = 0; i < m_list->topLevelItemCount(); ++i) {
        auto* item = m_list->topLevelItem(i);
        item->setSelected(item->data(Name, Qt::UserRole).value<quint64>() == id);
    }
    updateActions();
}

void JobsPanel::setFoldersSource(std::function<QStringList()> folders)
{
    m_folders = std::move(folders);
    m_look->start();
    lookForOtherJobs();
}

void JobsPanel::lookForOtherJobs()
{
    if (!m_folders || (m_looking && m_looking->isRunning()))
        return;
    std::vector<std::string> folders;
    for (const auto& f : m_folders())
        if (!f.isEmpty() && QFileInfo::exists(f))
            folders.push_back(f.toStdString());
    if (!m_looking) {
        m_looking = new QFutureWatcher<std::vector<engine::JobRecord>>(this);
        connect(m_looking, &QFutureWatcherBase::finished, this, [this] {
            m_other = m_looking->result();
            m_dirty = true;
        });
    }
    m_looking->setFuture(QtConcurrent::run([folders] {
        std::vector<engine::JobRecord> other;
        try {
            // This studio's own trainings and analyses are its rows above; the cells of a
            // sweep it runs are listed (held by this process, "cell of" its sweep's row).
            for (auto& j : engine::findJobs(folders))
                if (!j.heldHere() || !j.cell.empty())
                    other.push_back(std::move(j));
        } catch (const std::exception&) {
            // A folder that vanished mid-walk: the next look sees what is there.
        }
        return other;
    }));
}

std::optional<engine::JobRecord> JobsPanel::selectedOther() const
{
    const auto items = m_list->selectedItems();
    if (items.isEmpty())
        return std::nullopt;
    const auto key = items.front()->data(Name, kKeyRole).toString().toStdString();
    for (const auto& o : m_other)
        if (!key.empty() && o.key() == key)
            return o;
    return std::nullopt;
}

bool JobsPanel::selectOther(const std::string& key)
{
    rebuild();
    bool found = false;
    for (int i = 0; i < m_list->topLevelItemCount(); ++i) {
        auto* item = m_list->topLevelItem(i);
        const bool it = item->data(Name, kKeyRole).toString().toStdString() == key;
        item->setSelected(it);
        found = found || it;
    }
    updateActions();
    return found;
}

// Another process's job: what can reach it is a file it watches (a stop request, a cell's
// cancel mark), the same requests `lengen stop` and `lengen sweep cancel` leave.
void JobsPanel::act(Action a, const engine::JobRecord& j)
{
    try {
        if (a == Action::Stop && takes(j, engine::JobRequest::Stop)) {
            engine::requestStop(j.subject, "lengen-studio " + engine::thisHolder());
            Q_EMIT statusMessage(tr("Asked %1 to stop %2 after its current step, with a checkpoint "
                                    "(as `lengen stop`)")
                                     .arg(qs(j.holder), qs(j.subject)));
        } else if (a == Action::Cancel && takes(j, engine::JobRequest::Cancel)) {
            // scancel may take seconds: asked off the GUI thread.
            const std::string dir = j.subject, cell = j.cell;
            auto* watcher = new QFutureWatcher<QString>(this);
            connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
                Q_EMIT statusMessage(watcher->result());
                watcher->deleteLater();
                lookForOtherJobs();
            });
            watcher->setFuture(QtConcurrent::run([dir, cell] {
                try {
                    engine::cancelSweepCells(dir, {cell});
                    return tr("Cancelled cell %1 of %2 (as `lengen sweep cancel`)")
                        .arg(qs(cell), qs(dir));
                } catch (const std::exception& e) {
                    return tr("Cell %1 not cancelled: %2")
                        .arg(qs(cell), QString::fromUtf8(e.what()));
                }
            }));
        } else if (a == Action::OpenRun) {
            Q_EMIT openRunRequested(qs(j.subject));
        }
    } catch (const std::exception& e) {
        Q_EMIT statusMessage(tr("%1: %2").arg(otherName(j), QString::fromUtf8(e.what())));
    }
    lookForOtherJobs();
}

bool JobsPanel::actionEnabled(Action a) const
{
    if (const auto o = selectedOther()) {  // another process's: only what reaches it
        switch (a) {
        case Action::Stop:  // asked already: it stops at its next step
            return takes(*o, engine::JobRequest::Stop) && o->state == JobState::Running;
        case Action::Cancel:
            return takes(*o, engine::JobRequest::Cancel) && o->state != JobState::Stopping;
        case Action::OpenRun: return o->cell.empty() && isRunFile(o->subject);
        default: return false;  // pause needs the process's own controls
        }
    }
    const auto j = m_controller.job(selectedJob());
    if (!j)
        return false;
    switch (a) {
    case Action::Pause:
        return engine::jobKindRow(j->kind).pausable && j->state == JobState::Running;
    case Action::Continue: return j->state == JobState::Paused;
    case Action::Stop: return j->state == JobState::Running || j->state == JobState::Paused;
    case Action::Cancel: return j->state == JobState::Queued;
    case Action::OpenRun: return isRunFile(j->subject);
    }
    return false;
}

void JobsPanel::trigger(Action a)
{
    if (!actionEnabled(a))
        return;
    if (const auto o = selectedOther())
        return act(a, *o);
    const quint64 id = selectedJob();
    switch (a) {
    case Action::Pause: m_controller.pause(id); break;
    case Action::Continue: m_controller.resume(id); break;
    case Action::Stop:
    case Action::Cancel: m_controller.stop(id); break;
    case Action::OpenRun: Q_EMIT openRunRequested(qs(m_controller.job(id)->subject)); break;
    }
    rebuild();
}

// Each button says what it does to the selected job, or why it cannot (a disabled button
// without a word read as a fault: issue 53).
QString JobsPanel::actionTip(Action a) const
{
    const auto o = selectedOther();
    const auto j = o ? std::optional<JobInfo>(*o) : m_controller.job(selectedJob());
    if (!j)
        return tr("Select a job");
    const auto& row = engine::jobKindRow(j->kind);
    const QString kind = QString::fromLatin1(row.name);
    const bool on = actionEnabled(a);
    switch (a) {
    case Action::Pause:
        if (o)
            return tr("Pausing needs the controls of the process that runs it (%1)")
                .arg(qs(o->holder));
        if (!row.pausable)
            return tr("A %1 does not pause; Stop ends it and keeps what it stored").arg(kind);
        return on ? tr("Pause this training after its current step")
                  : tr("Only a running training pauses");
    case Action::Continue:
        return on ? tr("Continue this paused job") : tr("Only a paused job continues");
    case Action::Stop:
        if (o && o->state == JobState::Stopping)
            return tr("Already asked to stop: it stops after its current step");
        if (o)
            return takes(*o, engine::JobRequest::Stop)
                       ? tr("Ask the process that trains it to stop after its current step, with "
                            "a checkpoint (the request `lengen stop` leaves)")
                   : takes(*o, engine::JobRequest::Cancel)
                       ? tr("A sweep cell is stopped by Cancel (the mark `lengen sweep cancel` "
                            "leaves)")
                       : tr("Another process's %1 stops only from that process (%2)")
                             .arg(kind, qs(o->holder));
        return on ? tr("Stop this job (a training writes its checkpoint; an analysis keeps what "
                       "it stored)")
                  : tr("Only a running or paused job stops");
    case Action::Cancel:
        if (o)
            return takes(*o, engine::JobRequest::Cancel)
                       ? (on ? tr("Cancel this sweep cell (the mark `lengen sweep cancel` leaves; "
                                  "a running cell stops with a checkpoint)")
                             : tr("Already cancelled: it stops after its current step"))
                       : tr("Cancel takes sweep cells and this studio's queued jobs; use Stop");
        return on ? tr("Take this queued job off the queue")
                  : tr("Only a queued job is cancelled; use Stop");
    case Action::OpenRun:
        return on ? tr("Open the run this job works on")
                  : tr("This job works on no run file yet (or on a sweep)");
    }
    return {};
}

void JobsPanel::updateActions()
{
    const auto j = m_controller.job(selectedJob());
    const auto o = selectedOther();
    m_selected->setText(o   ? tr("“%1” (held by %2):").arg(otherName(*o), qs(o->holder))
                        : j ? tr("“%1”:").arg(qs(j->label))
                            : tr("Select a job"));
    for (auto [button, action] : {std::pair{m_pause, Action::Pause},
                                  {m_continue, Action::Continue},
                                  {m_stop, Action::Stop},
                                  {m_cancel, Action::Cancel},
                                  {m_open, Action::OpenRun}}) {
        button->setEnabled(actionEnabled(action));
        button->setToolTip(actionTip(action));
    }
}

QStringList JobsPanel::rowTexts() const
{
    QStringList out;
    for (int i = 0; i < m_list->topLevelItemCount(); ++i) {
        const auto* item = m_list->topLevelItem(i);
        out << QStringLiteral("%1 | %2 | %3 | %4")
                   .arg(item->text(Name), item->text(State), item->text(Progress),
                        item->text(Elapsed));
    }
    return out;
}

}  // namespace lengen::ui
