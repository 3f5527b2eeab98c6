#pragma once
// The Hyperparameters tab's runs, apart from its widgets (issue 80 §2): which of the Runs list's
// entries the last table was built from, whether the list changed while the tab was hidden, the
// table the worker built (a row per run, engine::runTable) with each row's run file, and which
// runs the Runs list was last asked to select. HParamsModel holds what the user chose; this
// holds what the runs are. The view forwards the Runs list's changes and the worker's table
// here and paints what it says; tests drive it without a window (tst_hparams_model). GUI thread.

#include <QCoreApplication>
#include <QStringList>

#include <memory>
#include <string>
#include <vector>

#include "lengen/engine/run_index.h"
#include "lengen/engine/run_table.h"

namespace lengen::ui {

class HParamsRuns {
    Q_DECLARE_TR_FUNCTIONS(HParamsRuns)

public:
    using Entries = std::vector<std::shared_ptr<const engine::RunIndexEntry>>;

    /// The Runs list changed while the tab was hidden: its runs are taken when it is shown.
    void markStale() { m_stale = true; }
    bool stale() const { return m_stale; }
    /// The entries the next table is built of (the list is no longer stale). False when they are
    /// the ones last taken, pointer for pointer: the list said "changed" for a sort, a swatch or
    /// a job's word, and the same entries make the same table, so no build.
    bool take(Entries runs);
    const Entries& taken() const { return m_taken; }

    /// The table a build made of them, with the run file of each row.
    void setTable(std::vector<std::string> paths, engine::RunTable table);
    const engine::RunTable& table() const { return m_table; }
    const std::vector<std::string>& paths() const { return m_paths; }
    /// The run files of the rows `inside` marks (the figure's runs inside every brush).
    QStringList runsInside(const std::vector<char>& inside) const;

    /// Whether to ask the Runs list to select `runs` (the runs inside the brushes, none when
    /// there is no brush): always when `always` (a brush just ended), else only when they differ
    /// from what it was last asked and there is a brush (a build that moved a run inside).
    /// Records them as asked when it says yes.
    bool askToSelect(const QStringList& runs, bool brushed, bool always);
    const QStringList& askedToSelect() const { return m_asked; }

    /// The line above the figure: why no run is drawn (`listed`: rows in the Runs list), else
    /// the exports' title and, without a brush, how to brush.
    QString summary(int listed, int inside, bool brushed) const;

private:
    bool m_stale = false;
    Entries m_taken;
    std::vector<std::string> m_paths;  // run file of each table row
    engine::RunTable m_table;
    QStringList m_asked;
};

}  // namespace lengen::ui
