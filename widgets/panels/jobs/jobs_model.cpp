#include "jobs_model.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <cmath>
#include <map>

namespace lengen::ui {

namespace {

QString jobsTr(const char* text, const char* disambiguation = nullptr, int n = -1)
{
    return QCoreApplication::translate("lengen::ui::JobsPanel", text, disambiguation, n);
}

QString qstr(const std::string& s) { return QString::fromStdString(s); }

QString jobClock(double seconds)
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

// The state column of the studio's own job. A job says what it did: "finished: 1,200 steps, …"
// only where its kind counted something; a job that did nothing countable says its own words
// ("created 4 cell(s)", "nothing to aggregate yet", "took no cell") without "finished".
QString stateText(const JobInfo& j)
{
    if (j.state == JobState::Queued)
        return j.waitingFor.empty() ? jobsTr("queued")
                                    : jobsTr("queued, waiting for %1").arg(qstr(j.waitingFor));
    if (j.state == JobState::Failed)
        return jobsTr("failed: %1").arg(qstr(j.message).section(QLatin1Char('\n'), 0, 0));
    if (j.state == JobState::Finished && !j.message.empty())
        return j.result.said.empty() && j.result.done > 0
                   ? jobsTr("finished: %1").arg(qstr(j.message))
                   : qstr(j.message);
    if (j.state == JobState::Cancelled && !j.message.empty())
        return qstr(j.message);  // "stopped after …" or "cancelled before it started"
    return jobStateText(j.state);
}

bool isRunFile(const std::string& subject)
{
    return qstr(subject).endsWith(QLatin1String(".h5")) && QFileInfo::exists(qstr(subject));
}

// 0: runs (or is paused, or stops), 1: waits, 2: ended — the order rows are shown in.
int rank(const engine::JobRecord& j) { return j.active() ? 0 : j.ended() ? 2 : 1; }

// The progress, elapsed, ETA and subject columns, alike for every job.
void fillCommon(JobRow& row, const engine::JobRecord& j, qint64 nowMs)
{
    const QString pct =
        j.fraction >= 0 ? QStringLiteral("%1 %").arg(std::floor(100 * j.fraction)) : QString();
    row.progress = j.progress.empty() ? pct
                   : pct.isEmpty()    ? qstr(j.progress)
                                      : pct + " · " + qstr(j.progress);
    const qint64 end = j.endedAtMs ? j.endedAtMs : nowMs;
    row.elapsed = j.startedAtMs ? jobClock((end - j.startedAtMs) / 1000.0) : QString();
    row.eta = j.state == JobState::Running ? jobClock(j.etaSeconds) : QString();
    const QFileInfo subject(qstr(j.subject));
    row.subject = subject.fileName() == QLatin1String("run.h5") ? subject.dir().dirName()
                                                                : subject.fileName();
    row.subjectTip = qstr(j.subject);
    row.kind = QString::fromLatin1(engine::jobKindRow(j.kind).name);
}

}  // namespace

bool takes(const engine::JobRecord& j, engine::JobRequest request)
{
    return engine::jobKindRow(j.kind).foreign == request;
}

bool heldOnThisHost(const std::string& holder)
{
    const auto hostOf = [](const std::string& h) {
        const auto colon = h.rfind(':');
        return colon == std::string::npos ? std::string() : h.substr(0, colon);
    };
    const auto host = hostOf(holder);
    return !host.empty() && host == hostOf(engine::thisHolder());
}

void JobsModel::setCores(int inUse, int limit, int waiting)
{
    m_inUse = inUse;
    m_limit = std::max(limit, 1);
    m_waiting = waiting;
}

int JobsModel::otherCoresHere() const
{
    // A sweep this studio runs has its cells' cores in its own budget already (held here).
    return int(std::count_if(m_other.begin(), m_other.end(), [](const engine::JobRecord& o) {
        return o.state == JobState::Running && engine::jobKindRow(o.kind).cpuHeavy &&
               !o.heldHere() && heldOnThisHost(o.holder);
    }));
}

QString JobsModel::coresText() const
{
    const int others = otherCoresHere();
    // What is true, the overload said as such (issue 80, defect 17: "3 of 2 in use (1 by other
    // processes)"): "2 cores: 2 in use here, 1 by other processes (over by 1)". A terminal's
    // trainings use this machine's cores too (issue 70, defect 14).
    QString text = jobsTr("%1 cores: %2 in use here").arg(m_limit).arg(m_inUse);
    if (others > 0)
        text += jobsTr(", %n by other processes", nullptr, others);
    if (m_inUse + others > m_limit)
        text += jobsTr(" (over by %1)").arg(m_inUse + others - m_limit);
    if (m_waiting > 0)
        text += jobsTr(" · %n waiting for one", nullptr, m_waiting);
    return text;
}

QString JobsModel::otherName(const engine::JobRecord& j) const
{
    // A training is named as the studio names its own: by task and encoding, from the Runs list.
    if (j.kind == JobKind::Training && j.cell.empty() && m_namer)
        if (const QString name = m_namer(qstr(j.subject)); !name.isEmpty())
            return name;
    const QFileInfo subject(qstr(j.subject));
    const QString name = !j.cell.empty() ? qstr(j.cell)
                         : subject.fileName().endsWith(QLatin1String(".h5"))
                             ? subject.dir().dirName()
                             : subject.fileName();
    return QCoreApplication::translate("lengen::engine::JobKindRow",
                                       engine::jobKindRow(j.kind).shownAs)
        .arg(name);
}

JobRow JobsModel::ownRow(const JobInfo& j, qint64 nowMs) const
{
    JobRow row;
    fillCommon(row, j, nowMs);
    row.id = j.id;
    row.name = qstr(j.label);
    row.state = stateText(j);
    row.stateTip = j.message.empty() ? row.state : qstr(j.message);
    return row;
}

JobRow JobsModel::otherRow(const engine::JobRecord& o, qint64 nowMs) const
{
    JobRow row;
    fillCommon(row, o, nowMs);
    row.key = qstr(o.key());
    row.name = otherName(o);
    QString state = QString::fromLatin1(engine::jobStateName(o.state, o.kind));
    if (!o.schedulerState.empty())
        state += QStringLiteral(" (Slurm %1)").arg(qstr(o.schedulerState));
    const QString ownJob = ownJobOf(o);  // a cell of a sweep this studio runs: its row names it
    // "pending · cell of “sweep x”" (it read "pending · held by cell of …")
    row.state = !ownJob.isEmpty()  ? jobsTr("%1 · cell of “%2”").arg(state, ownJob)
                : o.holder.empty() ? jobsTr("%1 · held by an unknown process").arg(state)
                                   : jobsTr("%1 · held by %2").arg(state, qstr(o.holder));
    row.stateTip = row.state + (o.waitingFor.empty() ? QString() : "\n" + qstr(o.waitingFor));
    return row;
}

std::vector<JobRow> JobsModel::rows(qint64 nowMs) const
{
    std::vector<std::pair<int, JobRow>> ranked;
    // Ended jobs of one label, kind, subject and end: the newest (listed first) stands for all
    // (a failed "new sweep" is not folded into the one that then worked).
    std::map<std::tuple<QString, int, QString, int>, size_t> ended;
    for (const auto& j : m_own) {
        if (j.ended()) {
            const auto key =
                std::make_tuple(qstr(j.label), int(j.kind), qstr(j.subject), int(j.state));
            if (const auto it = ended.find(key); it != ended.end()) {
                ++ranked[it->second].second.repeats;
                continue;
            }
            ended.emplace(key, ranked.size());
        }
        ranked.emplace_back(rank(j), ownRow(j, nowMs));
    }
    for (const auto& o : m_other)
        ranked.emplace_back(rank(o), otherRow(o, nowMs));
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<JobRow> out;
    out.reserve(ranked.size());
    for (auto& [r, row] : ranked) {
        if (row.repeats > 1)
            row.state += jobsTr(" (×%1)").arg(row.repeats);
        out.push_back(std::move(row));
    }
    return holdingOrder(std::move(out));
}

namespace {
QString identity(const JobRow& row)
{
    return row.own() ? QStringLiteral("id:%1").arg(row.id) : QStringLiteral("key:") + row.key;
}

// A row whose job is no longer listed, kept in its place while the pointer is over the list.
JobRow goneRow(JobRow row)
{
    if (!row.state.startsWith(jobsTr("ended")))
        row.state = jobsTr("ended");
    row.stateTip = jobsTr("This job ended; its row goes when the pointer leaves the list");
    row.progress.clear();
    row.eta.clear();
    return row;
}
}  // namespace

// While the order is held, the rows shown keep their places and new ones come last; a row
// whose job went (a sweep's cell that ended) stays, said to have ended, so that the rows below
// do not move up under the pointer (the Xvfb pass: the next cell's row took its place). The
// order the rules give is taken again once it is let go.
std::vector<JobRow> JobsModel::holdingOrder(std::vector<JobRow> ordered) const
{
    if (m_orderHeld && !m_shownOrder.isEmpty()) {
        std::vector<JobRow> kept;
        kept.reserve(ordered.size() + size_t(m_shownOrder.size()));
        for (int k = 0; k < m_shownOrder.size(); ++k) {
            bool found = false;
            for (auto& row : ordered)
                if (!row.name.isNull() && identity(row) == m_shownOrder[k]) {
                    kept.push_back(std::move(row));
                    row.name = QString();  // taken
                    found = true;
                    break;
                }
            if (!found && size_t(k) < m_shownRows.size())
                kept.push_back(goneRow(m_shownRows[size_t(k)]));
        }
        for (auto& row : ordered)
            if (!row.name.isNull())
                kept.push_back(std::move(row));
        ordered = std::move(kept);
    }
    m_shownOrder.clear();
    for (const auto& row : ordered)
        m_shownOrder << identity(row);
    m_shownRows = ordered;
    return ordered;
}

void JobsModel::selectOwn(quint64 id)
{
    m_selectedId = id;
    m_selectedKey.clear();
}

void JobsModel::selectOther(const QString& key)
{
    m_selectedId = 0;
    m_selectedKey = key;
}

bool JobsModel::isSelected(const JobRow& row) const
{
    return row.own() ? row.id == m_selectedId
                     : !m_selectedKey.isEmpty() && row.key == m_selectedKey;
}

std::optional<JobInfo> JobsModel::selectedOwn() const
{
    for (const auto& j : m_own)
        if (m_selectedId != 0 && j.id == m_selectedId)
            return j;
    return std::nullopt;
}

std::optional<engine::JobRecord> JobsModel::selectedOther() const
{
    for (const auto& o : m_other)
        if (!m_selectedKey.isEmpty() && qstr(o.key()) == m_selectedKey)
            return o;
    return std::nullopt;
}

// The label of this studio's job that holds `o` (a cell of the sweep it runs here), "" when
// another process holds it.
QString JobsModel::ownJobOf(const engine::JobRecord& o) const
{
    if (o.heldHere())
        for (const auto& j : m_own)
            if (j.active() && !j.subject.empty() &&
                QFileInfo(qstr(j.subject)) == QFileInfo(qstr(o.subject)))
                return qstr(j.label);
    return {};
}

QString JobsModel::selectedText() const
{
    if (const auto o = selectedOther()) {
        // This studio's own cell is named as its job's, not by the studio's pid (the Xvfb pass:
        // "held by vm:31752", the studio).
        if (const QString own = ownJobOf(*o); !own.isEmpty())
            return jobsTr("“%1” (cell of “%2”, run by this studio):").arg(otherName(*o), own);
        return jobsTr("“%1” (held by %2):").arg(otherName(*o), qstr(o->holder));
    }
    if (const auto j = selectedOwn())
        return jobsTr("“%1”:").arg(qstr(j->label));
    return jobsTr("Select a job");
}

bool JobsModel::actionEnabled(Action a) const
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
    const auto j = selectedOwn();
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

// Each button says what it does to the selected job, or why it cannot (a disabled button
// without a word read as a fault: issue 53).
QString JobsModel::confirmation(Action a) const
{
    if (!actionEnabled(a))
        return {};
    const auto o = selectedOther();
    const auto j = o ? std::optional<JobInfo>(*o) : selectedOwn();
    if (!j)
        return {};
    const QString name = o ? otherName(*o) : qstr(j->label);
    if (a == Action::Cancel && j->kind == JobKind::SweepCell && j->state == JobState::Running)
        return jobsTr("Cancel %1? The cell stops and reads cancelled (as `lengen sweep cancel`); "
                      "a later run of the sweep takes it up again.")
            .arg(name);
    if ((a == Action::Stop || a == Action::Cancel) && j->kind == JobKind::Sweep &&
        j->state != JobState::Queued)
        return jobsTr("Stop %1? Every running cell writes its checkpoint and stops; Run here "
                      "resumes them.")
            .arg(name);
    return {};
}

QString JobsModel::actionTip(Action a) const
{
    const auto o = selectedOther();
    const auto j = o ? std::optional<JobInfo>(*o) : selectedOwn();
    if (!j)
        return jobsTr("Select a job");
    const auto& row = engine::jobKindRow(j->kind);
    const QString kind = QString::fromLatin1(row.name);
    const bool on = actionEnabled(a);
    switch (a) {
    case Action::Pause:
        if (o)
            return jobsTr("Pausing needs the controls of the process that runs it (%1)")
                .arg(qstr(o->holder));
        if (!row.pausable)
            return jobsTr("A %1 does not pause; Stop ends it and keeps what it stored").arg(kind);
        return on ? jobsTr("Pause this training after its current step")
                  : jobsTr("Only a running training pauses");
    case Action::Continue:
        return on ? jobsTr("Continue this paused job") : jobsTr("Only a paused job continues");
    case Action::Stop:
        if (o && o->state == JobState::Stopping)
            return jobsTr("Already asked to stop: it stops after its current step");
        if (o)
            return takes(*o, engine::JobRequest::Stop)
                       ? jobsTr(
                             "Ask the process that trains it to stop after its current step, with "
                             "a checkpoint (the request `lengen stop` leaves)")
                   : takes(*o, engine::JobRequest::Cancel)
                       ? jobsTr("A sweep cell is stopped by Cancel (the mark `lengen sweep cancel` "
                                "leaves)")
                       : jobsTr("Another process's %1 stops only from that process (%2)")
                             .arg(kind, qstr(o->holder));
        return on ? jobsTr(
                        "Stop this job (a training writes its checkpoint; an analysis keeps what "
                        "it stored)")
                  : jobsTr("Only a running or paused job stops");
    case Action::Cancel:
        if (o)
            return takes(*o, engine::JobRequest::Cancel)
                       ? (on ? jobsTr(
                                   "Cancel this sweep cell (the mark `lengen sweep cancel` leaves; "
                                   "a running cell stops with a checkpoint)")
                             : jobsTr("Already cancelled: it stops after its current step"))
                       : jobsTr("Cancel takes sweep cells and this studio's queued jobs; use Stop");
        return on ? jobsTr("Take this queued job off the queue")
                  : jobsTr("Only a queued job is cancelled; use Stop");
    case Action::OpenRun:
        return on ? jobsTr("Open the run this job works on")
                  : jobsTr("This job works on no run file yet (or on a sweep)");
    }
    return {};
}

}  // namespace lengen::ui
