#pragma once
// What the Runs list's context menu offers for the selected runs (issue 72), with no widgets:
// its entries in order, each enabled or not and why (Archive and Delete: RunRemovalModel plans,
// moves and undoes them). The view builds the menu from entries(), opens it with popup() and
// forwards the chosen action; tests drive this without a window.

#include <QString>
#include <QStringList>

#include <vector>

namespace lengen::ui {

/// "a1b2c3d4" for one run (its folder's name), "3 runs" for several: how the menu names runs.
QString runsNamed(const QStringList& runFiles);

class RunMenuModel {
public:
    enum class Action {
        Open,
        Compare,
        Evaluate,
        Probe,
        Notes,
        OpenFolder,
        CopyPaths,
        ExportFigures,
        Archive,
        Delete
    };
    struct Entry {
        Action action;
        QString text;  ///< as the menu says it: "Evaluate 3 runs", "Open a1b2c3d4"
        bool enabled = true;
        QString why;  ///< the tooltip of a disabled entry
    };
    /// `sweeps`: the sweep each run is a cell of ("" for none; empty: none known). Archive and
    /// Delete are offered disabled for a sweep's cell, saying why, instead of refused after.
    /// `busyHere`: what this studio's own jobs do with each run ("evaluating", "" for
    /// nothing; empty: none known): Archive and Delete are offered disabled for such a run,
    /// naming the studio's job (issue 80, defect 6: the studio named itself "another process").
    explicit RunMenuModel(QStringList runFiles, QStringList sweeps = {}, QStringList busyHere = {})
        : m_runs(std::move(runFiles)), m_sweeps(std::move(sweeps)), m_busy(std::move(busyHere))
    {}
    /// Why Archive and Delete are not offered: a sweep's cell, a run this studio's job holds;
    /// "" when they are.
    QString removalBlocked() const;
    const QStringList& runs() const { return m_runs; }
    /// Every entry, in the menu's order (separators between groups are the view's).
    std::vector<Entry> entries() const;

private:
    QStringList m_runs, m_sweeps, m_busy;
};

}  // namespace lengen::ui
