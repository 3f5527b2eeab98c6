#include "jobs_panel.h"

#include "ask.h"
#include <QEvent>

#include <QDateTime>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

#include "latest_only.h"
#include "lengen/engine/run_control.h"
#include "lengen/engine/sweep_jobs.h"
#include "run_controller.h"

namespace lengen::ui {

namespace {

enum Column { Name, Kind, State, Progress, Elapsed, Eta, Subject, Columns };

QString qs(const std::string& s) { return QString::fromStdString(s); }

constexpr int kIdRole = Qt::UserRole, kKeyRole = Qt::UserRole + 1;

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
    connect(m_list, &QTreeWidget::itemSelectionChanged, this, [this] {
        const auto items = m_list->selectedItems();
        if (items.isEmpty())
            m_model.selectOwn(0);
        else if (const auto id = items.front()->data(Name, kIdRole).value<quint64>())
            m_model.selectOwn(id);
        else
            m_model.selectOther(items.front()->data(Name, kKeyRole).toString());
        updateActions();
    });
    connect(m_list, &QTreeWidget::itemDoubleClicked, this, [this] { trigger(Action::OpenRun); });
    connect(m_pause, &QPushButton::clicked, this, [this] { trigger(Action::Pause); });
    connect(m_continue, &QPushButton::clicked, this, [this] { trigger(Action::Continue); });
    connect(m_stop, &QPushButton::clicked, this, [this] { trigger(Action::Stop); });
    connect(m_cancel, &QPushButton::clicked, this, [this] { trigger(Action::Cancel); });
    connect(m_open, &QPushButton::clicked, this, [this] { trigger(Action::OpenRun); });
    m_list->viewport()->installEventFilter(this);
    rebuild();
}

// The rows hold their places while the pointer is over them (JobsModel::setOrderHeld).
bool JobsPanel::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_list->viewport() &&
        (event->type() == QEvent::Enter || event->type() == QEvent::Leave)) {
        m_model.setOrderHeld(event->type() == QEvent::Enter);
        if (event->type() == QEvent::Leave)
            rebuild();
    }
    return QWidget::eventFilter(watched, event);
}

JobsPanel::~JobsPanel() = default;

void JobsPanel::rebuild()
{
    m_dirty = false;
    m_model.setOwn(m_controller.jobs());
    // What waits for a core: the studio's queued jobs and the cells of a sweep it runs.
    const auto cores = m_controller.cores();
    const auto jobs = m_controller.jobs();
    const auto waiting =
        std::count_if(jobs.begin(), jobs.end(), [](const JobInfo& j) { return j.waitingForCore; }) +
        cores->cellsWaiting();
    m_model.setCores(cores->inUse(), cores->limit(), int(waiting));
    const auto rows = m_model.rows(QDateTime::currentMSecsSinceEpoch());
    // Items are reused by position so the scroll position survives a rebuild.
    while (m_list->topLevelItemCount() > int(rows.size()))
        delete m_list->takeTopLevelItem(m_list->topLevelItemCount() - 1);
    const QSignalBlocker block(m_list);
    for (int i = 0; i < int(rows.size()); ++i) {
        const JobRow& row = rows[size_t(i)];
        auto* item = m_list->topLevelItem(i);
        if (!item)
            item = new QTreeWidgetItem(m_list);
        item->setData(Name, kIdRole, QVariant::fromValue(row.id));
        item->setData(Name, kKeyRole, row.key);
        for (const auto& [column, text] : {std::pair{Name, &row.name},
                                           {Kind, &row.kind},
                                           {State, &row.state},
                                           {Progress, &row.progress},
                                           {Elapsed, &row.elapsed},
                                           {Eta, &row.eta},
                                           {Subject, &row.subject}})
            item->setText(column, *text);
        item->setToolTip(Name, row.name);
        item->setToolTip(State, row.stateTip);
        item->setToolTip(Subject, row.subjectTip);
        item->setSelected(m_model.isSelected(row));
    }
    m_cores->setText(m_model.coresText());
    updateActions();
}

QString JobsPanel::coresText() const { return m_cores->text(); }

void JobsPanel::select(quint64 id)
{
    m_model.selectOwn(id);
    rebuild();
}

void JobsPanel::setFoldersSource(std::function<QStringList()> folders)
{
    m_folders = std::move(folders);
    m_look->start();
    lookForOtherJobs();
}

void JobsPanel::setRunNamer(std::function<QString(const QString&)> namer)
{
    m_model.setRunNamer(std::move(namer));
    m_dirty = true;
}

void JobsPanel::lookForOtherJobs()
{
    if (!m_folders)
        return;
    std::vector<std::string> folders;
    for (const auto& f : m_folders())
        if (!f.isEmpty() && QFileInfo::exists(f))
            folders.push_back(f.toStdString());
    if (!m_looking)
        m_looking = std::make_unique<LatestOnly<std::vector<engine::JobRecord>>>(
            this, [this](std::vector<engine::JobRecord> other, bool) {
                m_model.setOther(std::move(other));
                m_dirty = true;
            });
    m_looking->submit([folders] {
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
    });
}

bool JobsPanel::selectOther(const std::string& key)
{
    const bool found = std::any_of(otherJobs().begin(), otherJobs().end(),
                                   [&key](const engine::JobRecord& o) { return o.key() == key; });
    m_model.selectOther(found ? qs(key) : QString());
    rebuild();
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
        Q_EMIT statusMessage(tr("%1: %2").arg(m_model.otherName(j), QString::fromUtf8(e.what())));
    }
    lookForOtherJobs();
}

bool JobsPanel::actionEnabled(Action a) const
{
    m_model.setOwn(m_controller.jobs());  // a job may have changed since the last paint
    return m_model.actionEnabled(a);
}

QString JobsPanel::actionTip(Action a) const
{
    m_model.setOwn(m_controller.jobs());
    return m_model.actionTip(a);
}

void JobsPanel::trigger(Action a)
{
    if (!actionEnabled(a))
        return;
    const QString question = m_model.confirmation(a);
    if (question.isEmpty())
        return carryOut(a, m_model.selectedOther(), selectedJob());
    // Asked about the job selected now: the answer acts on that one, whatever is selected then.
    ask::confirm(
        this, a == Action::Cancel ? tr("Cancel") : tr("Stop"), question,
        [this, a, other = m_model.selectedOther(), id = selectedJob()] { carryOut(a, other, id); });
}

void JobsPanel::carryOut(Action a, const std::optional<engine::JobRecord>& other, quint64 id)
{
    if (other)
        return act(a, *other);
    switch (a) {
    case Action::Pause: m_controller.pause(id); break;
    case Action::Continue: m_controller.resume(id); break;
    case Action::Stop:
    case Action::Cancel: m_controller.stop(id); break;
    case Action::OpenRun: Q_EMIT openRunRequested(qs(m_controller.job(id)->subject)); break;
    }
    rebuild();
}

void JobsPanel::updateActions()
{
    m_model.setOwn(m_controller.jobs());
    m_selected->setText(m_model.selectedText());
    for (auto [button, action] : {std::pair{m_pause, Action::Pause},
                                  {m_continue, Action::Continue},
                                  {m_stop, Action::Stop},
                                  {m_cancel, Action::Cancel},
                                  {m_open, Action::OpenRun}}) {
        button->setEnabled(m_model.actionEnabled(action));
        button->setToolTip(m_model.actionTip(action));
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
