// Archive and Delete, plan → move → undo (run_removal_model.h).

#include "run_removal_model.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>

#include "run_menu_model.h"

namespace lengen::ui {

namespace {

// The texts keep the menu's translation context: they are what the Runs list's menu says.
QString removalTr(const char* text) { return QCoreApplication::translate("RunMenu", text); }

QString confirmation(const QStringList& runs, const engine::RemovalPlan& plan,
                     engine::RunRemoval kind)
{
    const bool one = plan.moves.size() == 1;
    const QString what = runsNamed(runs) + " (" + QString::fromStdString(plan.sizeText) + ")";
    if (kind == engine::RunRemoval::Trash)
        return (one ? removalTr("Move %1 to the trash, .lengen-trash/ beside its folder? "
                                "Nothing is deleted: Undo, or `lengen restore`, puts it back.")
                    : removalTr("Move %1 to the trash, .lengen-trash/ beside their folders? "
                                "Nothing is deleted: Undo, or `lengen restore`, puts them "
                                "back."))
            .arg(what);
    return (one ? removalTr("Move %1 to the archive, .lengen-archive/ beside its folder? "
                            "It leaves the Runs list; Undo, or `lengen restore`, puts it "
                            "back.")
                : removalTr("Move %1 to the archive, .lengen-archive/ beside their "
                            "folders? They leave the Runs list; Undo, or `lengen "
                            "restore`, puts them back."))
        .arg(what);
}

}  // namespace

RunRemovalModel::Removal RunRemovalModel::plan(const RunMenuModel& selection,
                                               engine::RunRemoval kind)
{
    Removal r;
    r.kind = kind;
    if (const QString why = selection.removalBlocked(); !why.isEmpty()) {
        r.text = why;
        return r;
    }
    std::vector<std::string> runs;
    for (const auto& run : selection.runs())
        runs.push_back(run.toStdString());
    try {
        r.plan = engine::planRunRemoval(runs, kind);
    } catch (const std::exception& e) {  // a run another process holds, a run gone
        r.text = QString::fromStdString(e.what());
        return r;
    }
    r.allowed = true;
    r.text = confirmation(selection.runs(), r.plan, kind);
    return r;
}

QStringList RunRemovalModel::carryOut(const Removal& removal, QString* error)
{
    m_moves.clear();
    m_kind = removal.kind;
    if (!removal.allowed)
        return {};
    try {
        m_moves = engine::carryOutRemoval(removal.plan);
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        m_moves.clear();
    }
    QStringList moved;
    for (const auto& m : m_moves)
        moved << QString::fromStdString(m.from) + QStringLiteral("/run.h5");
    return moved;
}

QString RunRemovalModel::movedText() const
{
    if (m_moves.empty())
        return {};
    const QString n = m_moves.size() == 1
                          ? QFileInfo(QString::fromStdString(m_moves.front().from)).fileName()
                          : removalTr("%1 runs").arg(m_moves.size());
    return m_kind == engine::RunRemoval::Trash ? removalTr("Moved %1 to the trash").arg(n)
                                               : removalTr("Moved %1 to the archive").arg(n);
}

bool RunRemovalModel::forgetRestoredElsewhere()
{
    const bool pending = std::any_of(m_moves.begin(), m_moves.end(), [](const auto& m) {
        return QFileInfo::exists(QString::fromStdString(m.to));
    });
    if (m_moves.empty() || pending)
        return false;
    m_moves.clear();
    return true;
}

RunRemovalModel::Undone RunRemovalModel::undo()
{
    Undone u;
    for (const auto& m : m_moves) {
        const QString name = QFileInfo(QString::fromStdString(m.from)).fileName();
        if (!QFileInfo::exists(QString::fromStdString(m.to)))
            continue;  // put back already (`lengen restore`): nothing to undo
        try {
            engine::restoreRuns(m.to);
            ++u.back;
        } catch (const std::exception& e) {
            u.refused << tr("%1 not put back: %2").arg(name, QString::fromStdString(e.what()));
        }
    }
    m_moves.clear();
    return u;
}

}  // namespace lengen::ui
