#include "sweeps_model.h"

#include <QFileInfo>

#include <QCoreApplication>

#include "lengen/engine/jobs.h"
#include "sweep_figures.h"

#include <algorithm>
#include <map>
#include <set>

namespace lengen::ui {

namespace {

// The texts keep the view's translation context: they are what the Sweeps tab says.
QString sweepsTr(const char* text, const char* disambiguation = nullptr, int n = -1)
{
    return QCoreApplication::translate("lengen::ui::SweepsView", text, disambiguation, n);
}

std::string axisValueOf(const engine::SweepCell& c, const std::string& key)
{
    for (const auto& [k, v] : c.axes)
        if (k == key)
            return v;
    return {};
}

// One mark per seed: done, running (with its progress), pending, stopped, cancelled, requeued,
// failed.
QString cellMark(const engine::CellStatus& s)
{
    using S = engine::SweepCellState;
    switch (s.state) {
    case S::Done: return QStringLiteral("✔");
    case S::Failed: return QStringLiteral("✘");
    case S::Stopped: return QStringLiteral("■");
    case S::Cancelled: return QStringLiteral("⊘");
    case S::Requeued: return QStringLiteral("↻");
    case S::Running: {
        const int pct = s.totalSteps > 0 ? int(100 * s.step / s.totalSteps) : 0;
        return s.stage == "train" ? QStringLiteral("▶%1%").arg(pct)
                                  : QStringLiteral("▶%1").arg(QString::fromStdString(s.stage));
    }
    case S::Pending: break;
    }
    return QStringLiteral("·");
}

// A config-key axis names itself ("max_steps = 300"; a bare "300" said nothing); the task and
// PE values name themselves.
QStringList headersOf(QStringList values, const std::string& key)
{
    if (key.empty() || key == "task" || key == "pe")
        return values;
    const QString name = QString::fromStdString(key).section(QLatin1Char('.'), -1);
    for (auto& v : values)
        v = name + QStringLiteral(" = ") + v;
    return values;
}

}  // namespace

void SweepsModel::setSweep(const QString& dir, engine::SweepIndex index, std::string root)
{
    m_root = std::move(root);
    if (dir != m_dir) {
        m_lastRun.clear();  // what Run here did, and what Slurm said, were of another sweep
        m_scheduler = {};
        m_schedulerAskedMs = -1;
    }
    m_dir = dir;
    m_done = -1;
    m_statuses.clear();
    m_stoppedSeen.clear();
    m_resumePlan.clear();
    setAggregate(std::nullopt);
    std::vector<std::string> keys;  // the axes that vary, the seed aside
    for (const auto& k : index.axisKeys) {
        std::set<std::string> values;
        for (const auto& c : index.cells)
            values.insert(axisValueOf(c, k));
        if (k != "seed" && values.size() > 1)
            keys.push_back(k);
    }
    const std::string rowKey = keys.size() >= 2 ? keys.front() : std::string();
    const std::string colKey = keys.empty() ? std::string() : keys.back();
    const auto rowOf = [&](const engine::SweepCell& c) {
        return QString::fromStdString(rowKey.empty() ? "cells" : axisValueOf(c, rowKey));
    };
    const auto columnOf = [&](const engine::SweepCell& c) {
        return QString::fromStdString(colKey.empty() ? "seeds" : axisValueOf(c, colKey));
    };
    QStringList rows, cols;
    for (const auto& c : index.cells) {
        if (!rows.contains(rowOf(c)))
            rows << rowOf(c);
        if (!cols.contains(columnOf(c)))
            cols << columnOf(c);
    }
    m_cellsAt.assign(size_t(rows.size()), std::vector<std::vector<int>>(size_t(cols.size())));
    for (const auto& c : index.cells)  // other axes share the square
        m_cellsAt[size_t(rows.indexOf(rowOf(c)))][size_t(cols.indexOf(columnOf(c)))].push_back(
            c.index);
    m_rowHeaders = headersOf(rows, rowKey);
    m_columnHeaders = headersOf(cols, colKey);
    m_index = std::move(index);
}

QString SweepsModel::title() const
{
    if (!m_index)
        return {};
    // The axes that vary; an axis of one value is an override of every cell, said as such
    // ("(pe × seed; training.max_steps = 6000)": it read as a third axis).
    std::string axes, fixed;
    for (const auto& k : m_index->axisKeys) {
        std::set<std::string> values;
        for (const auto& c : m_index->cells)
            values.insert(axisValueOf(c, k));
        if (values.size() > 1 || k == "seed")
            axes += (axes.empty() ? "" : " × ") + k;
        else if (!values.empty())
            fixed += (fixed.empty() ? "; " : ", ") + k + " = " + *values.begin();
    }
    return sweepsTr("Sweep %1 — %2 cells (%3) — %4")
        .arg(QString::fromStdString(m_index->name))
        .arg(m_index->cells.size())
        .arg(QString::fromStdString(axes + fixed), m_dir);
}

bool SweepsModel::setStatuses(std::vector<engine::CellStatus> statuses)
{
    m_statuses = std::move(statuses);
    const int done = int(std::count_if(m_statuses.begin(), m_statuses.end(), [](const auto& s) {
        return s.state == engine::SweepCellState::Done;
    }));
    const bool more = m_done >= 0 && done != m_done && done > 0;
    m_done = done;
    return more;
}

SweepSquare SweepsModel::square(int row, int column) const
{
    SweepSquare sq;
    if (row < 0 || size_t(row) >= m_cellsAt.size() || column < 0 ||
        size_t(column) >= m_cellsAt[size_t(row)].size())
        return sq;
    sq.cells = m_cellsAt[size_t(row)][size_t(column)];
    if (sq.cells.empty()) {  // skip_refused left every cell of it out
        sq.text = sweepsTr("left out");
        sq.tip = sweepsTr(
            "No cell: the config refuses this combination (the summary's tooltip says why)");
        return sq;
    }
    QStringList marks, tips;
    for (int i : sq.cells) {
        if (size_t(i) >= m_statuses.size())
            continue;  // not read yet
        const auto& s = m_statuses[size_t(i)];
        marks << cellMark(s);
        sq.worst = std::max(sq.worst, s.state);  // the enum is ordered by urgency
        // "000-rope-s1: cancelled at step 2235 of 15000": the stage only where it says more
        // than the state (issue 80, defect 16: "cancelled stopped 2235/15000").
        const QString state = QString::fromUtf8(engine::stateName(s.state));
        const QString stage = QString::fromStdString(s.stage);
        const bool stageSaysMore =
            !stage.isEmpty() && stage != state &&
            !QStringList{"stopped", "cancelled", "done", "failed", "pending"}.contains(stage);
        tips << QStringLiteral("%1: %2%3%4%5%6")
                    .arg(QString::fromStdString(s.cell->name), state,
                         stageSaysMore ? QStringLiteral(" (%1)").arg(stage) : QString(),
                         s.totalSteps > 0
                             ? sweepsTr(" at step %1 of %2").arg(s.step).arg(s.totalSteps)
                             : QString())
                    .arg(s.message.empty() ? QString() : " — " + QString::fromStdString(s.message),
                         !s.job || s.job->schedulerState.empty()
                             ? QString()
                             : " — Slurm: " + QString::fromStdString(s.job->schedulerState));
    }
    // How Run here with members resumes its stopped cells, as `lengen sweep status` says it
    // (issue 80, defect 16: only the summary's tooltip said it).
    for (const auto& line : m_resumePlan)
        for (int i : sq.cells)
            if (m_index && size_t(i) < m_index->cells.size() &&
                line.contains(QString::fromStdString(m_index->cells[size_t(i)].name))) {
                tips << sweepsTr("Run here with members resumes %1").arg(line);
                break;
            }
    sq.text = marks.join(QStringLiteral("  "));
    sq.tip = tips.join('\n');
    return sq;
}

QStringList SweepsModel::runsAt(int row, int column) const
{
    QStringList runs;
    for (int i : square(row, column).cells)
        if (size_t(i) < m_statuses.size() && !m_statuses[size_t(i)].runFile.empty())
            runs << QString::fromStdString(m_statuses[size_t(i)].runFile);
    return runs;
}

QString SweepsModel::summary(bool runningHere, const QString& queuedBehind) const
{
    std::map<std::string, int> counts;
    for (const auto& s : m_statuses)
        ++counts[engine::stateName(s.state)];
    QString extra;  // states only some sweeps reach
    if (counts["cancelled"])
        extra += sweepsTr(" · %1 cancelled").arg(counts["cancelled"]);
    if (counts["requeued"])
        extra += sweepsTr(" · %1 requeued").arg(counts["requeued"]);
    if (m_index && !m_index->skipped.empty()) {  // skip_refused: the grid is not all it was asked
        const int n = int(m_index->skipped.size());
        extra += n == 1 ? sweepsTr(" · 1 combination left out")
                        : sweepsTr(" · %1 combinations left out").arg(n);
    }
    // Cells another process holds, named while they run (issue 70, defect 4: the tab named
    // them only once Run here had ended).
    std::map<std::string, int> others;
    const std::string here = engine::thisHolder();
    for (const auto& st : m_statuses) {
        const std::string who = st.holder();
        const bool live = st.state == engine::SweepCellState::Running ||
                          st.state == engine::SweepCellState::Requeued || st.queued();
        if (live && !who.empty() && who != here)
            ++others[who];
    }
    // What Run here said of cells others held stands while they hold some, in place of the
    // live list it repeats, and goes when they stop (issue 80, defect 16: "4 held by vm:32748"
    // stayed after that process exited, and was said twice).
    const bool namesHolders = m_lastRun.contains(QStringLiteral("held by"));
    const QString lastRun =
        m_lastRun.isEmpty() || (namesHolders && others.empty()) ? QString() : " — " + m_lastRun;
    QString text = sweepsTr("%1 done · %2 running · %3 pending · %4 stopped · %5 failed%6%7")
                       .arg(counts["done"])
                       .arg(counts["running"])
                       .arg(counts["pending"])
                       .arg(counts["stopped"])
                       .arg(counts["failed"])
                       .arg(extra, runningHere ? sweepsTr(" — running here") : lastRun);
    if (!queuedBehind.isEmpty())
        text += sweepsTr(" — queued, waiting for %1").arg(queuedBehind);
    if (!(namesHolders && !lastRun.isEmpty() && !runningHere))
        for (const auto& [who, n] : others)
            text += sweepsTr(" · %n held by %1", nullptr, n).arg(QString::fromStdString(who));
    return text;
}

QString SweepsModel::summaryTip(const QString& schedulerNote) const
{
    QString tip = schedulerNote;  // what the scheduler said, or why it said nothing
    if (m_index && !m_index->skipped.empty()) {
        const int n = int(m_index->skipped.size());
        tip += (tip.isEmpty() ? "" : "\n") + sweepsTr("Left out, as the config refuses them:");
        for (size_t i = 0; i < m_index->skipped.size() && i < 8; ++i)
            tip += "\n" + QString::fromStdString(m_index->skipped[i].axes + ": " +
                                                 m_index->skipped[i].why);
        if (n > 8)
            tip += "\n" + sweepsTr("… and %1 more (index.json lists them)").arg(n - 8);
    }
    if (!m_resumePlan.isEmpty())  // the members' rule, said before Run here applies it
        tip += (tip.isEmpty() ? "" : "\n") +
               sweepsTr("With members, Run here resumes the stopped cells:") + "\n" +
               m_resumePlan.join('\n');
    return tip;
}

bool SweepsModel::schedulerDue(qint64 nowMs) const
{
    return m_schedulerAskedMs < 0 || nowMs - m_schedulerAskedMs >= 5000;
}

bool SweepsModel::setSchedulerView(SweepSchedulerView view, const std::string& shownRoot)
{
    if (view.root != shownRoot)
        return false;  // asked about a sweep no longer shown
    m_scheduler = std::move(view);
    return true;
}

bool SweepsModel::aggregateDue() const
{
    if (!m_index || !m_index->stages.eval)
        return false;
    return std::any_of(m_statuses.begin(), m_statuses.end(),
                       [](const engine::CellStatus& s) { return s.evalDone; });
}

void SweepsModel::setRunHere(const std::string& root, quint64 job)
{
    if (job)
        m_runsHere[root] = job;
    else
        m_runsHere.erase(root);
}

quint64 SweepsModel::runHere(const std::string& root) const
{
    const auto it = m_runsHere.find(root);
    return it == m_runsHere.end() ? 0 : it->second;
}

QStringList SweepsModel::otherRunsHere(const std::string& shownRoot) const
{
    QStringList out;
    for (const auto& [root, job] : m_runsHere)
        if (root != shownRoot)
            out << QFileInfo(QString::fromStdString(root)).fileName();
    return out;
}

bool SweepsModel::stoppedCellsChanged(std::vector<std::string> stopped)
{
    if (stopped == m_stoppedSeen)
        return false;
    m_stoppedSeen = std::move(stopped);
    return true;
}

void SweepsModel::setAggregate(std::optional<engine::SweepAggregate> aggregate)
{
    m_aggregate = std::move(aggregate);
    m_figure.reset();
}

QStringList SweepsModel::aggregateMethods() const
{
    QStringList out;
    if (m_aggregate)
        for (const auto& m : engine::aggregateMethods(*m_aggregate))
            out << QString::fromStdString(m);
    return out;
}

void SweepsModel::drawFigure(const std::string& method)
{
    m_figure.reset();
    if (m_aggregate)
        m_figure = figures::sweepGridFigure(*m_aggregate, method);
}

std::string runHereSaid(const engine::SweepRunSummary& s)
{
    std::string said = "took no cell";
    if (s.taken > 0) {
        said = "of the " + std::to_string(s.taken) + " cell(s) it took, " +
               std::to_string(s.finished) + " finished";
        const int stopped = s.stopped + s.cancelledHere;
        if (stopped > 0)
            said += (s.failed > 0 ? ", " : " and ") + std::to_string(stopped) + " stopped";
        if (s.failed > 0)
            said += " and " + std::to_string(s.failed) + " failed";
    }
    if (s.elsewhere > 0)
        said +=
            "; " + std::to_string(s.elsewhere) + " " +
            (s.heldBy.empty() ? std::string("held by other processes") : engine::heldByText(s)) +
            ", left to them";
    if (s.done > 0)
        said += "; " + std::to_string(s.done) + " done before";
    return said;
}

}  // namespace lengen::ui
