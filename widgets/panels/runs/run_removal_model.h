#pragma once
// Archive and Delete in the Runs list, with no widgets (issue 82 §5, issue 80 §2): one owner of
// plan → move → undo. plan() says what a removal of the selected runs would move, or why it
// cannot (a sweep's cell, a run this studio's job holds, a run another process holds: nothing
// moves); carryOut() moves what the user confirmed and keeps the moves; undo() puts them back.
// The Runs list asks, forwards the answer and paints the line beside its filter ("Moved 2 runs
// to the trash", Undo) from here; tests drive it without a window (tst_run_filter_model).

#include <QCoreApplication>
#include <QString>
#include <QStringList>

#include <vector>

#include "lengen/engine/run_archive.h"

namespace lengen::ui {

class RunMenuModel;

class RunRemovalModel {
    Q_DECLARE_TR_FUNCTIONS(RunRemovalModel)

public:
    /// A removal asked for: the confirmation's text, or the refusal when !allowed.
    struct Removal {
        bool allowed = false;
        QString text;
        engine::RemovalPlan plan;
        engine::RunRemoval kind = engine::RunRemoval::Trash;
    };
    /// What Archive or Delete of `selection`'s runs would do, checked now
    /// (RunMenuModel::removalBlocked, then engine::planRunRemoval). Moves nothing.
    static Removal plan(const RunMenuModel& selection, engine::RunRemoval kind);

    /// Moves what `removal` planned (the user confirmed it); the moves become what Undo puts
    /// back. Returns the run files moved; on a failure, none and the reason in `error`.
    QStringList carryOut(const Removal& removal, QString* error = nullptr);
    /// "Moved 2 runs to the trash", beside Undo; "" when there is nothing to undo.
    QString movedText() const;
    bool canUndo() const { return !m_moves.empty(); }
    /// Forgets moves put back some other way (`lengen restore`): returns whether Undo had
    /// something and now has nothing (the line goes).
    bool forgetRestoredElsewhere();

    struct Undone {
        int back = 0;         ///< runs put back
        QStringList refused;  ///< "a1b2 not put back: …" for each that could not be
    };
    /// Puts back what the last removal moved (those still where it put them).
    Undone undo();

private:
    std::vector<engine::RunMove> m_moves;
    engine::RunRemoval m_kind = engine::RunRemoval::Trash;
};

}  // namespace lengen::ui
