#pragma once
// The Jobs panel's state, with no widgets (issue 70): the studio's own jobs (RunController's
// values) and the jobs other processes run under the studio's folders (engine::findJobs), as
// the rows the panel paints, the cores line, the selected job and what each action would do
// to it. Rules that live here, where tests reach them without a window:
//   * order: what runs (the studio's or another process's) first, then what waits, then what
//     ended, newest first — a terminal's training no longer sorts below dozens of ended rows;
//   * repeats: ended jobs with one label and subject ("aggregate sweep-x" after every cell) are
//     one row, the newest, counted ("×12");
//   * names: another process's training is named as the studio names its own
//     ("linear_regression · RoPE", from the Runs list), its folder beside it;
//   * cores: running work of other processes on this host counts toward the cores in use.
// GUI thread (a plain value; the panel owns one).

#include <QList>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>
#include <vector>

#include "lengen/engine/jobs.h"
#include "run_types.h"

namespace lengen::ui {

/// One row as the panel shows it.
struct JobRow {
    quint64 id = 0;  ///< the studio's job (the newest of coalesced ones); 0 for another's
    QString key;     ///< another process's job: JobRecord::key(); "" for the studio's own
    QString name, kind, state, stateTip, progress, elapsed, eta, subject, subjectTip;
    int repeats = 1;  ///< ended runs of one job shown as this row
    bool own() const { return id != 0; }
};

class JobsModel {
public:
    enum class Action { Pause, Continue, Stop, Cancel, OpenRun };

    /// The studio's jobs as RunController::jobs() lists them (running, queued, ended newest
    /// first).
    void setOwn(QList<JobInfo> jobs) { m_own = std::move(jobs); }
    /// Other processes' jobs as last found.
    void setOther(std::vector<engine::JobRecord> jobs) { m_other = std::move(jobs); }
    const std::vector<engine::JobRecord>& other() const { return m_other; }
    /// How the Runs list names a run file ("linear_regression · RoPE"; "" when it lists none).
    void setRunNamer(std::function<QString(const QString& runFile)> namer)
    {
        m_namer = std::move(namer);
    }
    /// The studio's cores: taken of the limit, and how many of its jobs and cells wait for one.
    void setCores(int inUse, int limit, int waiting);

    /// The rows in the order shown; `nowMs` for the elapsed times of what still runs.
    std::vector<JobRow> rows(qint64 nowMs) const;
    /// The pointer is over the list (issue 80, defect 19: a click meant for a cell landed on
    /// the sweep's row, pushed under the pointer by a new job): the rows shown keep their places
    /// and new rows come last until it leaves.
    void setOrderHeld(bool held) { m_orderHeld = held; }
    /// "2 cores: 1 in use here, 1 by other processes · 1 waiting for one" ("(over by N)" past
    /// the limit).
    QString coresText() const;
    /// How many of other processes' running jobs on this host keep cores busy.
    int otherCoresHere() const;

    void selectOwn(quint64 id);
    void selectOther(const QString& key);
    void selectRow(const JobRow& row) { row.own() ? selectOwn(row.id) : selectOther(row.key); }
    quint64 selectedJob() const { return m_selectedId; }
    std::optional<JobInfo> selectedOwn() const;
    std::optional<engine::JobRecord> selectedOther() const;
    bool isSelected(const JobRow& row) const;
    /// The line beside the buttons: "“name”:" or "Select a job".
    QString selectedText() const;
    bool actionEnabled(Action a) const;
    /// What the action does to the selected job, or why it cannot (its button's tooltip).
    QString actionTip(Action a) const;

    /// The question the action asks first, "" when it acts at once (issue 80, defect 20): a
    /// running cell's Cancel and a sweep's Stop (every cell stops); queued work goes at once.
    QString confirmation(Action a) const;

    /// Another process's job as its row names it.
    QString otherName(const engine::JobRecord& j) const;
    QString ownJobOf(const engine::JobRecord& o) const;

private:
    JobRow ownRow(const JobInfo& j, qint64 nowMs) const;
    std::vector<JobRow> holdingOrder(std::vector<JobRow> ordered) const;
    JobRow otherRow(const engine::JobRecord& j, qint64 nowMs) const;

    QList<JobInfo> m_own;
    std::vector<engine::JobRecord> m_other;
    std::function<QString(const QString&)> m_namer;
    int m_inUse = 0, m_limit = 1, m_waiting = 0;
    quint64 m_selectedId = 0;
    QString m_selectedKey;
    bool m_orderHeld = false;
    mutable QStringList m_shownOrder;         ///< the rows' identities as last listed
    mutable std::vector<JobRow> m_shownRows;  ///< the rows as last listed, in that order
};

/// Whether another process's job of this kind takes `request` from here.
bool takes(const engine::JobRecord& j, engine::JobRequest request);
/// Whether a holder ("host:pid") is a process on this host (a Slurm task's "job_task" is not).
bool heldOnThisHost(const std::string& holder);

}  // namespace lengen::ui
