// Saved views in the window (saved_views_controller.h).

#include "saved_views_controller.h"

#include <QFileInfo>
#include <QMenu>

#include "ask.h"
#include "compare_view.h"
#include "hparams_view.h"
#include "lengen/engine/run_file.h"
#include "run_browser.h"
#include "save_view_dialog.h"

namespace lengen::studio {

SavedViewsController::SavedViewsController(QWidget* window, ui::RunBrowser* runs,
                                           ui::CompareView* compare, ui::HParamsView* hparams)
    : QObject(window), m_window(window), m_runs(runs), m_compare(compare), m_hparams(hparams)
{}

ui::StudioView SavedViewsController::currentView(const QString& name) const
{
    ui::StudioView v;
    v.name = name;
    v.filter = m_runs->filterText();
    v.hiddenColumns = m_runs->hiddenColumnNames();
    v.extraColumns = m_runs->extraColumns();
    std::tie(v.sortColumn, v.sortDescending) = m_runs->sortKey();
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

bool SavedViewsController::applyView(const QString& name)
{
    m_views.setFolders(m_runs->folders());
    QStringList problems;
    const auto view = m_views.view(name, &problems);
    if (!view) {
        Q_EMIT statusMessage(tr("No saved view “%1”").arg(name), 0);
        return false;
    }
    m_runs->setFilterText(view->filter);
    m_runs->setHiddenColumnNames(view->hiddenColumns);
    m_runs->setExtraColumns(view->extraColumns);
    if (!view->sortColumn.isEmpty())
        m_runs->sortBy(view->sortColumn, view->sortDescending);
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
    Q_EMIT statusMessage(problems.isEmpty()
                             ? tr("View “%1” applied").arg(name)
                             : tr("View “%1” applied; %2").arg(name, problems.join("; ")),
                         0);
    return true;
}

void SavedViewsController::saveViewAs()
{
    m_views.setFolders(m_runs->folders());
    QStringList names;
    for (const auto& e : m_views.entries())
        names << e.name;
    ui::askSaveView(
        m_window, names, m_views.sharedFile(), [this](const QString& name, bool shared) {
            QString error;
            if (!m_views.save(currentView(name), shared, &error))
                return Q_EMIT problem(tr("Save view"), tr("The view was not saved: %1").arg(error));
            Q_EMIT statusMessage(
                shared ? tr("View “%1” saved and shared in %2").arg(name, m_views.sharedFile())
                       : tr("View “%1” saved").arg(name),
                0);
        });
}

void SavedViewsController::fillMenu(QMenu* menu)
{
    menu->clear();
    m_views.setFolders(m_runs->folders());
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
    menu->addAction(tr("&Save current view…"), this, &SavedViewsController::saveViewAs);
    auto* remove = menu->addMenu(tr("&Delete saved view"));
    for (const auto& e : m_views.entries())
        remove->addAction(e.shared ? tr("Delete “%1” (shared)…").arg(e.name)
                                   : tr("Delete “%1”").arg(e.name),
                          this, [this, name = e.name, shared = e.shared, file = e.file] {
                              removeView(name, shared, file);
                          });
    remove->setEnabled(!m_views.entries().empty());
}

void SavedViewsController::removeView(const QString& name, bool shared, const QString& file)
{
    const auto removeIt = [this, name] {
        QString error;
        if (!m_views.remove(name, &error))
            return Q_EMIT problem(tr("Delete view"), error);
        Q_EMIT statusMessage(tr("View “%1” deleted").arg(name), 8000);
    };
    if (!shared)
        return removeIt();
    // Everyone who follows the folder loses it: asked, naming it (issue 80, defect 8: gone
    // with no question and no undo).
    ui::ask::confirm(m_window, tr("Delete shared view"),
                     tr("“%1” is shared in %2: deleting it removes it for everyone who opens "
                        "this runs folder. Delete it?")
                         .arg(name, file),
                     removeIt);
}

}  // namespace lengen::studio
