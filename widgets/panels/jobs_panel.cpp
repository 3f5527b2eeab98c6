#include "jobs_panel.h"

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

#include <cmath>

#include "run_controller.h"

namespace lengen::ui {

namespace {

enum Column { Name, Kind, State, Progress, Elapsed, Eta, Subject, Columns };

QString kindName(JobKind k)
{
    switch (k) {
    case JobKind::Train: return JobsPanel::tr("training");
    case JobKind::Evaluate: return JobsPanel::tr("evaluation");
    case JobKind::Probe: return JobsPanel::tr("probes");
    case JobKind::Export: return JobsPanel::tr("export");
    case JobKind::Sweep: return JobsPanel::tr("sweep");
    case JobKind::Import: return JobsPanel::tr("import");
    }
    return {};
}

QString clock(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0)
        return {};
    const qint64 s = std::llround(seconds);
    return s >= 3600 ? QStringLiteral("%1:%2:%3").arg(s / 3600).arg(s / 60 % 60, 2, 10, QLatin1Char('0')).arg(s % 60, 2, 10, QLatin1Char('0'))
                     : QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

QString stateText(const JobInfo& j)
{
    if (j.state == JobInfo::State::Queued)
        return j.waitingFor.isEmpty() ? JobsPanel::tr("queued") : JobsPanel::tr("queued, waiting for %1").arg(j.waitingFor);
    if (j.state == JobInfo::State::Failed)
        return JobsPanel::tr("failed: %1").arg(j.message.section(QLatin1Char('\n'), 0, 0));
    if (j.state == JobInfo::State::Finished && !j.message.isEmpty())
        return JobsPanel::tr("finished: %1").arg(j.message);
    if (j.state == JobInfo::State::Cancelled && !j.message.isEmpty())
        return j.message;  // "stopped: …" or "cancelled before it started"
    return jobStateName(j.state);
}

bool isRunFile(const QString& subject) { return subject.endsWith(QLatin1String(".h5")) && QFileInfo::exists(subject); }

}  // namespace

JobsPanel::JobsPanel(RunController& controller, QWidget* parent) : QWidget(parent), m_controller(controller)
{
    m_list = new QTreeWidget;
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->setColumnCount(Columns);
    m_list->setHeaderLabels({tr("Job"), tr("Kind"), tr("State"), tr("Progress"), tr("Elapsed"), tr("ETA"), tr("On")});
    // Room for what each column says; the state (with what a queued job waits for) takes the rest.
    for (const auto& [column, width] : {std::pair{Name, 280}, {Kind, 90}, {Progress, 230}, {Elapsed, 70},
                                        {Eta, 70}, {Subject, 130}})
        m_list->setColumnWidth(column, width);
    m_list->header()->setSectionResizeMode(State, QHeaderView::Stretch);
    m_list->setSelectionMode(QAbstractItemView::SingleSelection);
    m_selected = new QLabel(tr("Select a job"));
    m_pause = new QPushButton(tr("Pause"));
    m_continue = new QPushButton(tr("Continue"));
    m_stop = new QPushButton(tr("Stop"));
    m_cancel = new QPushButton(tr("Cancel"));
    m_open = new QPushButton(tr("Open run"));
    m_pause->setToolTip(tr("Pause the selected training after its current step"));
    m_stop->setToolTip(tr("Stop the selected job (a training writes its checkpoint; an analysis keeps what it stored)"));
    m_cancel->setToolTip(tr("Take the selected queued job off the queue"));
    m_open->setToolTip(tr("Open the run the selected job works on"));
    auto* buttons = new QHBoxLayout;
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
    const auto jobs = m_controller.jobs();
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    // Rows in the controller's order (running, queued, ended); items are reused by position so
    // the selection and scroll position survive a rebuild.
    while (m_list->topLevelItemCount() > jobs.size())
        delete m_list->takeTopLevelItem(m_list->topLevelItemCount() - 1);
    const QSignalBlocker block(m_list);
    for (int i = 0; i < jobs.size(); ++i) {
        const auto& j = jobs[i];
        auto* item = m_list->topLevelItem(i);
        if (!item)
            item = new QTreeWidgetItem(m_list);
        item->setData(Name, Qt::UserRole, QVariant::fromValue(j.id));
        item->setText(Name, j.label);
        item->setText(Kind, kindName(j.kind));
        item->setText(State, stateText(j));
        item->setToolTip(State, j.message.isEmpty() ? stateText(j) : j.message);
        const QString pct = j.fraction >= 0 ? QStringLiteral("%1 %").arg(std::floor(100 * j.fraction)) : QString();
        item->setText(Progress, j.progress.isEmpty() ? pct : pct.isEmpty() ? j.progress : pct + " · " + j.progress);
        const qint64 end = j.endedAtMs ? j.endedAtMs : now;
        item->setText(Elapsed, j.startedAtMs ? clock((end - j.startedAtMs) / 1000.0) : QString());
        item->setText(Eta, j.state == JobInfo::State::Running ? clock(j.etaSeconds) : QString());
        item->setText(Subject, QFileInfo(j.subject).fileName() == QLatin1String("run.h5")
                                   ? QFileInfo(j.subject).dir().dirName()
                                   : QFileInfo(j.subject).fileName());
        item->setToolTip(Subject, j.subject);
        item->setSelected(j.id == selected);
    }
    updateActions();
}

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

bool JobsPanel::actionEnabled(Action a) const
{
    const auto j = m_controller.job(selectedJob());
    if (!j)
        return false;
    switch (a) {
    case Action::Pause: return j->kind == JobKind::Train && j->state == JobInfo::State::Running;
    case Action::Continue: return j->state == JobInfo::State::Paused;
    case Action::Stop: return j->state == JobInfo::State::Running || j->state == JobInfo::State::Paused;
    case Action::Cancel: return j->state == JobInfo::State::Queued;
    case Action::OpenRun: return isRunFile(j->subject);
    }
    return false;
}

void JobsPanel::trigger(Action a)
{
    if (!actionEnabled(a))
        return;
    const quint64 id = selectedJob();
    switch (a) {
    case Action::Pause: m_controller.pause(id); break;
    case Action::Continue: m_controller.resume(id); break;
    case Action::Stop:
    case Action::Cancel: m_controller.stop(id); break;
    case Action::OpenRun: Q_EMIT openRunRequested(m_controller.job(id)->subject); break;
    }
    rebuild();
}

void JobsPanel::updateActions()
{
    const auto j = m_controller.job(selectedJob());
    m_selected->setText(j ? tr("“%1”:").arg(j->label) : tr("Select a job"));
    m_pause->setEnabled(actionEnabled(Action::Pause));
    m_continue->setEnabled(actionEnabled(Action::Continue));
    m_stop->setEnabled(actionEnabled(Action::Stop));
    m_cancel->setEnabled(actionEnabled(Action::Cancel));
    m_open->setEnabled(actionEnabled(Action::OpenRun));
}

QStringList JobsPanel::rowTexts() const
{
    QStringList out;
    for (int i = 0; i < m_list->topLevelItemCount(); ++i) {
        const auto* item = m_list->topLevelItem(i);
        out << QStringLiteral("%1 | %2 | %3").arg(item->text(Name), item->text(State), item->text(Progress));
    }
    return out;
}

}  // namespace lengen::ui
