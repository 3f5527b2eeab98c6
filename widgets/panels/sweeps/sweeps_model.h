#pragma once
// The Sweeps tab's state, with no widgets (issue 70): the sweep shown, its grid's layout (rows
// and columns are the axes that vary, the seeds of a square its marks), its cells as last read
// from the folder (their states merged with the jobs that hold them), and what the tab says of
// them — each square's marks, colour and tooltip, the line under the grid, what the last Run
// here did, and when a cell ended since the last look (the aggregate is due). The view
// (sweeps_view) reads the folder and the scheduler, runs the jobs and paints what this says;
// tests drive it without a window (tst_sweeps_model). GUI thread.

#include <QString>
#include <QStringList>
#include <QtGlobal>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "figure_spec.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_aggregate.h"
#include "lengen/engine/sweep_run.h"

namespace lengen::ui {

/// One square of the grid: the cells of one row × column value (its seeds, other axes).
struct SweepSquare {
    std::vector<int> cells;  ///< cell indices; empty: skip_refused left them all out
    QString text;            ///< a mark per cell ("✔  ▶40%  ·"), or "left out"
    QString tip;             ///< each cell's state, stage, step and message
    engine::SweepCellState worst = engine::SweepCellState::Done;  ///< its colour
};

/// What the scheduler (squeue) said of a sweep's cells, asked off the GUI thread.
struct SweepSchedulerView {
    std::string root;                   ///< the sweep asked about
    std::map<int, std::string> states;  ///< cell index -> Slurm's state
    std::string note;                   ///< what it said, or why it said nothing
};

class SweepsModel {
public:
    /// Shows sweep `index` read from `dir`: lays the grid out (rows: the first of two varying
    /// axes, columns: the last varying one that is not the seed; an axis with one value is an
    /// override of every cell, neither). Cell states are unknown until setStatuses.
    /// `root`: its located folder (engine::locateSweep), the key of its run here.
    void setSweep(const QString& dir, engine::SweepIndex index, std::string root = {});
    const QString& dir() const { return m_dir; }
    const std::string& root() const { return m_root; }
    const std::optional<engine::SweepIndex>& index() const { return m_index; }
    /// "Sweep NAME — 8 cells (task × pe × seed) — DIR".
    QString title() const;
    /// Row and column headers: a config key's values name it ("max_position = 64").
    const QStringList& rowHeaders() const { return m_rowHeaders; }
    const QStringList& columnHeaders() const { return m_columnHeaders; }

    /// The cells as just read. Returns whether a cell is done that was not at the last look
    /// (not on the first): the aggregate is due.
    bool setStatuses(std::vector<engine::CellStatus> statuses);
    const std::vector<engine::CellStatus>& statuses() const { return m_statuses; }
    int doneCells() const { return m_done; }
    /// Whether aggregating has anything to read: the sweep evaluates its cells and a cell has
    /// its evaluation (issue 80, defect 18: every Create and Run here added an "aggregate …
    /// nothing to aggregate yet" job, evaluation off or not).
    bool aggregateDue() const;
    SweepSquare square(int row, int column) const;
    /// The runs of a square that exist (a double click opens one or compares several).
    QStringList runsAt(int row, int column) const;

    /// The local runs of sweeps this studio has queued or running, by sweep folder (its
    /// located root) — the toolbar's Stop, Run here and the header speak of the shown sweep's
    /// only (issue 80, defect 2: Stop on a finished sweep shown stopped another sweep's run).
    /// `job` 0: none any more.
    void setRunHere(const std::string& root, quint64 job);
    quint64 runHere(const std::string& root) const;
    /// The other sweeps with a run here, by folder name: the line that keeps them reachable.
    QStringList otherRunsHere(const std::string& shownRoot) const;

    /// The scheduler's word on the sweep shown, as last heard (a view of another sweep, heard
    /// after the sweep shown changed, is dropped); asked at most every 5 s (`nowMs`: a steady
    /// clock), and never before a sweep was submitted.
    bool schedulerDue(qint64 nowMs) const;
    void schedulerAsked(qint64 nowMs) { m_schedulerAskedMs = nowMs; }
    /// Takes `view` when it is of `shownRoot`; returns whether it did.
    bool setSchedulerView(SweepSchedulerView view, const std::string& shownRoot);
    const std::map<int, std::string>& schedulerStates() const { return m_scheduler.states; }
    QString schedulerNote() const { return QString::fromStdString(m_scheduler.note); }

    /// What the last Run here did, when it left cells to others ("" clears it); a sweep
    /// shown anew forgets it.
    void setLastRun(const QString& said) { m_lastRun = said; }
    /// The line under the grid: counts by state, what only some sweeps reach, and what runs
    /// here ("running here", "queued, waiting for …") or the last Run here said.
    QString summary(bool runningHere, const QString& queuedBehind) const;
    /// Its tooltip: the scheduler's note, the combinations skip_refused left out, and how Run
    /// here with members resumes the stopped cells.
    QString summaryTip(const QString& schedulerNote) const;
    /// How a run with members resumes the stopped cells (engine::stoppedMembersPlan: "A, B
    /// together from step 120", "C alone from step 150 (…)"), as `lengen sweep status` says it.
    void setResumePlan(QStringList lines) { m_resumePlan = std::move(lines); }
    const QStringList& resumePlan() const { return m_resumePlan; }
    /// Whether the stopped (and cancelled) cells are others than those the resume plan was
    /// made of: the plan is read again only then (it reads each one's checkpoint). Records
    /// them; a sweep shown anew has none, so its plan is always read.
    bool stoppedCellsChanged(std::vector<std::string> stopped);

    // The sweep's aggregate and its figure (issue 80 §2: these were the view's members).
    /// The aggregate of the sweep shown, as read from aggregate.h5 or made by an aggregate job;
    /// a sweep shown anew has none. The figure is dropped with it.
    void setAggregate(std::optional<engine::SweepAggregate> aggregate);
    const std::optional<engine::SweepAggregate>& aggregate() const { return m_aggregate; }
    /// The evaluation methods the aggregate holds (the figure's method box), none without one.
    QStringList aggregateMethods() const;
    /// The grid figure of `method` from the aggregate (none without one); throws what
    /// figures::sweepGridFigure throws, with no figure left.
    void drawFigure(const std::string& method);
    const std::optional<plots::GridSpec>& figure() const { return m_figure; }

private:
    QString m_dir, m_lastRun;
    std::string m_root;
    std::map<std::string, quint64> m_runsHere;
    SweepSchedulerView m_scheduler;
    qint64 m_schedulerAskedMs = -1;  ///< -1: never asked
    QStringList m_resumePlan;
    std::optional<engine::SweepIndex> m_index;
    QStringList m_rowHeaders, m_columnHeaders;
    std::vector<std::vector<std::vector<int>>> m_cellsAt;  ///< [row][column] -> cell indices
    std::vector<engine::CellStatus> m_statuses;            ///< by cell index
    int m_done = -1;                                       ///< at the last look (-1: none yet)
    std::vector<std::string> m_stoppedSeen;  ///< the stopped cells the resume plan is of
    std::optional<engine::SweepAggregate> m_aggregate;
    std::optional<plots::GridSpec> m_figure;
};

/// What a Run here says when it ends: the cells it took and what became of each, what it left
/// to others, what was done before ("of the 4 cell(s) it took, 0 finished and 2 stopped; 3 done
/// before"). "0 of the 4 cell(s) it took finished" beside the row's "2 of 4 cells ended" read as
/// a contradiction (the Xvfb pass on issue 80, defect 16).
std::string runHereSaid(const engine::SweepRunSummary& s);

}  // namespace lengen::ui
