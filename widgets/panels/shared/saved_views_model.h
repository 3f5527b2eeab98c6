#pragma once
// The studio's saved views (issue 72), with no widgets: a view is the Runs filter and columns,
// Compare's choices and the Hyperparameters axes, colour and brushes, under a name. Views are
// kept in the settings (QSettings savedViews: each view's JSON, engine/saved_views.h) and, when
// shared, in <folder>/lengen-views.json beside the followed runs, where a colleague who opens
// the folder finds them and `lengen runs --view NAME` reads them. The window gathers the
// panels' state into a StudioView and applies one back; tests drive this without a window
// (tst_saved_views). GUI thread.

#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

#include "compare_model.h"
#include "hparams_figure.h"
#include "lengen/engine/saved_views.h"

namespace lengen::ui {

/// What a saved view holds, as the panels take it.
struct StudioView {
    QString name;
    QString filter;
    QStringList hiddenColumns;  ///< the Runs list's fixed columns hidden, by key ("created")
    QStringList extraColumns;   ///< config keys and results added after them
    QString sortColumn;         ///< a fixed column's key or an extra column ("" the default)
    bool sortDescending = false;
    std::optional<CompareChoices> compare;
    QStringList compareRuns;  ///< the runs Compare shows (run.h5 paths, absolute)
    std::optional<figures::HParamsChoice> hparams;
};

/// Between the panels' values and the stored form. `problems` collects what a stored view says
/// that this studio cannot apply (an unknown grouping or x axis): said, and left as it is.
engine::SavedView storedView(const StudioView& view);
StudioView studioView(const engine::SavedView& stored, QStringList* problems = nullptr);

class SavedViewsModel {
public:
    struct Entry {
        QString name;
        bool shared = false;  ///< in a followed folder's lengen-views.json
        QString file;         ///< that file ("" for the settings)
    };

    /// The followed folders: their lengen-views.json are read beside the settings; a shared
    /// view is written into the first one's.
    void setFolders(const QStringList& folders);
    const QStringList& folders() const { return m_folders; }
    /// Reads the settings and the folders' files again (the menu does before it opens).
    void reload();
    /// Every view by name; a name both in the settings and in a folder is listed once, shared
    /// (the folder's copy is the one a colleague sees, and the one applied).
    const std::vector<Entry>& entries() const { return m_entries; }
    /// What could not be read ("…/lengen-views.json: key 'views' must be a list"), "" if all.
    const QString& problem() const { return m_problem; }

    /// The view of that name, or nullopt; `problems` as studioView's.
    std::optional<StudioView> view(const QString& name, QStringList* problems = nullptr) const;
    /// Saves `view` under its name in the settings and, when `shared`, in the first folder's
    /// lengen-views.json (replacing one of the same name). False and `error` for a bad name, no
    /// folder to share with, or a file that cannot be written (named).
    bool save(const StudioView& view, bool shared, QString* error = nullptr);
    /// Takes the view out of the settings and of the folders' files that hold it.
    bool remove(const QString& name, QString* error = nullptr);
    /// The file a shared view goes to ("" without a followed folder).
    QString sharedFile() const;

private:
    std::vector<engine::SavedView> settingsViews() const;
    void writeSettings(const std::vector<engine::SavedView>& views) const;

    QStringList m_folders;
    std::vector<Entry> m_entries;
    std::vector<engine::SavedView> m_stored;  ///< m_entries' views, in their order
    QString m_problem;
};

}  // namespace lengen::ui
