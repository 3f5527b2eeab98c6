// The Runs list's context menu on runs (issue 72): RunMenuModel says what it offers; this builds
// the menu, opens it with popup() (it deletes itself on close: no nested event loop) and does
// what the chosen entry names. Archive and Delete move runs by rename (engine/run_archive.h),
// after asking; Undo beside the filter puts them back.

#include <QApplication>
#include <QClipboard>
#include <QDesktopServices>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QTableView>
#include <QUrl>

#include <algorithm>

#include "ask.h"
#include "run_browser.h"
#include "run_filter_model.h"
#include "run_table_model.h"
#include "stay_open_menu.h"

namespace lengen::ui {

QLayout* RunBrowser::createRemovalBar()
{
    m_moved = new QLabel;
    m_moved->setObjectName(QStringLiteral("runsMoved"));
    m_undo = new QPushButton(tr("Undo"));
    m_undo->setObjectName(QStringLiteral("runsUndo"));
    m_undo->setToolTip(tr("Put the runs back where they were"));
    connect(m_undo, &QPushButton::clicked, this, &RunBrowser::undoRemoval);
    auto* row = new QHBoxLayout;
    row->addWidget(m_moved, 1);
    row->addWidget(m_undo);
    m_moved->setVisible(false);
    m_undo->setVisible(false);
    return row;
}

void RunBrowser::updateRemovalBar()
{
    // Runs put back some other way (`lengen restore`): the Undo line has nothing left to undo.
    if (m_removal.forgetRestoredElsewhere()) {
        m_moved->setVisible(false);
        m_undo->setVisible(false);
    }
}

QMenu* RunBrowser::showColumnMenu(const QPoint& globalPos)
{
    // popup(), not exec(): no nested event loop; the menu deletes itself on close and stays
    // open while columns are ticked (issue 73).
    auto* menu = new StayOpenMenu(this);
    menu->setObjectName(QStringLiteral("columnMenu"));
    menu->setAttribute(Qt::WA_DeleteOnClose);
    for (int c = 0; c < RunTableModel::ColumnCount; ++c) {
        auto* action =
            menu->addAction(m_model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString());
        action->setCheckable(true);
        action->setChecked(columnShown(c));
        connect(action, &QAction::toggled, this, [this, c](bool on) { setColumnShown(c, on); });
    }
    // Any config key or stored result, as `lengen runs --columns` names it (issue 72).
    auto* more = new StayOpenMenu(tr("More columns"), menu);
    more->setObjectName(QStringLiteral("moreColumns"));
    menu->addSeparator();
    menu->addMenu(more);
    for (const auto& key : m_model->availableColumns()) {
        auto* action = more->addAction(key);
        action->setCheckable(true);
        action->setChecked(m_model->extraColumns().contains(key));
        connect(action, &QAction::toggled, this,
                [this, key](bool on) { setExtraColumnShown(key, on); });
    }
    more->setEnabled(!more->actions().isEmpty());
    menu->popup(globalPos);
    return menu;
}

void RunBrowser::setExtraColumnShown(const QString& key, bool shown)
{
    QStringList keys = m_model->extraColumns();
    keys.removeAll(key);
    if (shown)
        keys << key;
    setExtraColumns(keys);
}

// The selected rows' files, sweeps and this studio's jobs on them, in one pass (a look-up by
// path per run compared canonical paths against every row: slow on a select-all of thousands).
RunMenuModel RunBrowser::selection() const
{
    QStringList runs, sweeps, busy;
    for (const auto& index : m_table->selectionModel()->selectedRows()) {
        const auto& row = m_model->row(m_proxy->mapToSource(index).row());
        runs << row.path;
        sweeps << QString::fromStdString(row.entry->info.sweepName);
        busy << (m_busyHere ? m_busyHere(row.path) : QString());
    }
    return RunMenuModel(runs, sweeps, busy);
}

QMenu* RunBrowser::showRunMenu(const QPoint& globalPos)
{
    const RunMenuModel model = selection();
    auto* menu = new QMenu(this);
    menu->setObjectName(QStringLiteral("runMenu"));
    menu->setToolTipsVisible(true);  // a disabled entry's tooltip says why
    menu->setAttribute(Qt::WA_DeleteOnClose);
    using A = RunMenuModel::Action;
    for (const auto& e : model.entries()) {
        if (e.action == A::Evaluate || e.action == A::Notes || e.action == A::Archive)
            menu->addSeparator();  // open and compare | analyse | look after | remove
        auto* action = menu->addAction(e.text);
        action->setEnabled(e.enabled);
        action->setToolTip(e.why);
        action->setData(int(e.action));
        connect(action, &QAction::triggered, this, [this, a = e.action] { runMenuAction(a); });
    }
    menu->popup(globalPos);
    return menu;
}

void RunBrowser::runMenuAction(RunMenuModel::Action action)
{
    const QStringList runs = selectedRuns();
    if (runs.isEmpty())
        return;
    using A = RunMenuModel::Action;
    switch (action) {
    case A::Open: Q_EMIT openRequested(runs.front()); break;
    case A::Compare: Q_EMIT compareRequested(runs); break;
    case A::Evaluate: Q_EMIT evaluateRequested(runs); break;
    case A::Probe: Q_EMIT probeRequested(runs); break;
    case A::Notes:
        if (runs.size() == 1)
            editNotes();
        else
            editTagsOfSelected();
        break;
    case A::OpenFolder:
        QDesktopServices::openUrl(QUrl::fromLocalFile(QFileInfo(runs.front()).absolutePath()));
        break;
    case A::CopyPaths: {
        QStringList paths;  // absolute: pasted anywhere, they still name the runs
        for (const auto& run : runs)
            paths << QFileInfo(run).absoluteFilePath();
        QApplication::clipboard()->setText(paths.join('\n'));
        Q_EMIT statusMessage(
            paths.size() == 1 ? tr("Copied the path %1").arg(paths.front())
                              : tr("Copied %n paths to the clipboard", nullptr, int(paths.size())));
        break;
    }
    case A::ExportFigures: Q_EMIT exportFiguresRequested(runs); break;
    case A::Archive: removeRuns(engine::RunRemoval::Archive); break;
    case A::Delete: removeRuns(engine::RunRemoval::Trash); break;
    }
}

// Asks (naming how many runs and their size), then moves them; a run a process holds is said
// instead, and nothing moves. The removal model plans, moves and keeps what Undo puts back.
void RunBrowser::removeRuns(engine::RunRemoval kind)
{
    const auto removal = RunRemovalModel::plan(selection(), kind);
    const QString title =
        kind == engine::RunRemoval::Trash ? tr("Delete runs") : tr("Archive runs");
    if (!removal.allowed) {
        ask::tell(this, title, removal.text, true);
        return;
    }
    ask::confirm(this, title, removal.text, [this, removal] {
        QString error;
        const QStringList moved = m_removal.carryOut(removal, &error);
        if (!error.isEmpty())
            ask::tell(this, tr("Runs not moved"), error, true);
        m_moved->setText(m_removal.movedText());
        m_moved->setVisible(m_removal.canUndo());
        m_undo->setVisible(m_removal.canUndo());
        if (!moved.isEmpty())
            Q_EMIT runsMoved(moved);
        follow();
    });
}

void RunBrowser::undoRemoval()
{
    const auto undone = m_removal.undo();
    m_moved->setVisible(!undone.refused.isEmpty());
    m_moved->setText(undone.refused.join('\n'));
    m_undo->setVisible(false);
    if (undone.back > 0)  // said where the removal was said (the walk found Undo silent)
        Q_EMIT statusMessage(tr("Put %n run(s) back where they were", nullptr, undone.back));
    follow();
}

}  // namespace lengen::ui
