// Saved views in the window (issue 72): the Runs list's filter and columns, Compare's choices
// and the Hyperparameters axes, colour and brushes gathered into one value, saved under a name
// (ui::SavedViewsModel: the settings, and the runs folder's lengen-views.json when shared) and
// applied back from the View menu's Saved views.

#include <QFileInfo>
#include <QMenu>
#include <QStatusBar>

#include "ask.h"
#include "compare_view.h"
#include "hparams_view.h"
#include "lengen/engine/run_file.h"
#include "main_window.h"
#include "run_browser.h"
#include "save_view_dialog.h"

namespace lengen::studio {

ui::StudioView MainWindow::currentView(const QString& name) const
{
    ui::StudioView v;
    v.name = name;
    v.filter = m_browser->filterText();
    v.hiddenColumns = m_browser->hiddenColumnNames();
    v.extraColumns = m_browser->extraColumns();
    std::tie(v.sortColumn, v.sortDescending) = m_browser->sortKey();
    v.compare = m_compare->model().choices();
    for (const auto& run : m_compare->runs())  // as absolute run files: the folder's file rebases
        try {
            v.compareRuns << QFileInfo(
                                 QString::fromStdString(engine::locateRunFile(run.toStdString())))
                                 .absoluteFilePath();
        } catch (const std::exception&) {
            // gone since it was compared: not part of the view
        }
    // What the user chose (kept while a filter hides its columns); what the tab draws for
    // what they left to the runs.
    auto hparams = m_hparams->choices().saved(m_hparams->choice());
    if (!hparams.axes.empty() || !hparams.color.empty())
        v.hparams = std::move(hparams);
    return v;
}

bool MainWindow::applyView(const QString& name)
{
    m_views.setFolders(m_browser->folders());
    QStringList problems;
    const auto view = m_views.view(name, &problems);
    if (!view) {
        statusBar()->showMessage(tr("No saved view “%1”").arg(name));
        return false;
    }
    m_browser->setFilterText(view->filter);
    m_browser->setHiddenColumnNames(view->hiddenColumns);
    m_browser->setExtraColumns(view->extraColumns);
    if (!view->sortColumn.isEmpty())
        m_browser->sortBy(view->sortColumn, view->sortDescending);
    QStringList gone;
    if (!view->compareRuns.isEmpty()) {  // the comparison it was saved with, where its runs are
        QStringList runs;
        for (const auto& run : view->compareRuns)
            (QFileInfo::exists(run) ? runs : gone) << run;
        m_compare->setRuns(runs);
    }
    if (view->compare)
        m_compare->setChoices(*view->compare);
    if (!gone.isEmpty())
        problems << tr("%n of its compared runs are gone (moved or deleted)", nullptr,
                       int(gone.size()));
    if (view->hparams)
        m_hparams->setChoice(*view->hparams);
    statusBar()->showMessage(problems.isEmpty()
                                 ? tr("View “%1” applied").arg(name)
                                 : tr("View “%1” applied; %2").arg(name, problems.join("; ")));
    return true;
}

void MainWindow::saveViewAs()
{
    m_views.setFolders(m_browser->folders());
    QStringList names;
    for (const auto& e : m_views.entries())
        names << e.name;
    ui::askSaveView(this, names, m_views.sharedFile(), [this](const QString& name, bool shared) {
        QString error;
        if (!m_views.save(currentView(name), shared, &error))
            return showProblem(tr("Save view"), tr("The view was not saved: %1").arg(error));
        statusBar()->showMessage(
            shared ? tr("View “%1” saved and shared in %2").arg(name, m_views.sharedFile())
                   : tr("View “%1” saved").arg(name));
    });
}

// The menu as the views are now (read again each time it opens: a colleague's file may have
// changed): one entry per view, a shared one marked, then Save and Delete.
void MainWindow::fillViewsMenu(QMenu* menu)
{
    menu->clear();
    m_views.setFolders(m_browser->folders());
    for (const auto& e : m_views.entries()) {
        auto* apply = menu->addAction(e.shared ? tr("%1 (shared)").arg(e.name) : e.name, this,
                                      [this, name = e.name] { applyView(name); });
        apply->setToolTip(e.shared ? e.file : tr("in this studio's settings"));
    }
    if (m_views.entries().empty())
        menu->addAction(tr("No saved views yet"))->setEnabled(false);
    if (!m_views.problem().isEmpty())
        menu->addAction(tr("Unreadable: %1").arg(m_views.problem()))->setEnabled(false);
    menu->addSeparator();
    menu->addAction(tr("&Save current view…"), this, &MainWindow::saveViewAs);
    auto* remove = menu->addMenu(tr("&Delete saved view"));
    for (const auto& e : m_views.entries())
        remove->addAction(
            e.shared ? tr("Delete “%1” (shared)…").arg(e.name) : tr("Delete “%1”").arg(e.name),
            this, [this, name = e.name, shared = e.shared, file = e.file] {
                const auto removeIt = [this, name] {
                    QString error;
                    if (!m_views.remove(name, &error))
                        return showProblem(tr("Delete view"), error);
                    statusBar()->showMessage(tr("View “%1” deleted").arg(name), 8000);
                };
                if (!shared)
                    return removeIt();
                // Everyone who follows the folder loses it: asked, naming it
                // (issue 80, defect 8: gone with no question and no undo).
                ui::ask::confirm(this, tr("Delete shared view"),
                                 tr("“%1” is shared in %2: deleting it removes it for everyone "
                                    "who opens this runs folder. Delete it?")
                                     .arg(name, file),
                                 removeIt);
            });
    remove->setEnabled(!m_views.entries().empty());
}

}  // namespace lengen::studio
