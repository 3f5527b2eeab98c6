#pragma once
// Saved views in the window (issue 72; a class of its own by issue 82 §5): the Runs list's
// filter, columns and sort, Compare's choices and runs, and the Hyperparameters axes, colour and
// brushes gathered into one value, saved under a name (ui::SavedViewsModel: the settings, and
// the runs folder's lengen-views.json when shared) and applied back from View ▸ Saved views.
// It reads the three panels and writes them; MainWindow only builds it and the menu. GUI thread.

#include <QObject>
#include <QString>

#include "saved_views_model.h"

class QMenu;
class QWidget;

namespace lengen::ui {
class CompareView;
class HParamsView;
class RunBrowser;
}  // namespace lengen::ui

namespace lengen::studio {

class SavedViewsController final : public QObject {
    Q_OBJECT

public:
    /// `window`: the parent of its dialogs; the panels it gathers from and applies to.
    SavedViewsController(QWidget* window, ui::RunBrowser* runs, ui::CompareView* compare,
                         ui::HParamsView* hparams);

    ui::SavedViewsModel& model() { return m_views; }
    /// What the panels show now, under `name`.
    ui::StudioView currentView(const QString& name) const;
    /// Applies the saved view of that name; false (said) when there is none.
    bool applyView(const QString& name);
    /// Asks for a name and whether to share, then saves the current view.
    void saveViewAs();
    /// The menu as the views are now (read again each time it opens: a colleague's file may
    /// have changed): one entry per view, a shared one marked, then Save and Delete.
    void fillMenu(QMenu* menu);

Q_SIGNALS:
    /// What to say in the status bar (`timeoutMs` 0: until the next message).
    void statusMessage(QString message, int timeoutMs);
    /// A failure that needs reading (the window shows it in a box).
    void problem(QString title, QString message);

private:
    void removeView(const QString& name, bool shared, const QString& file);

    QWidget* m_window;
    ui::RunBrowser* m_runs;
    ui::CompareView* m_compare;
    ui::HParamsView* m_hparams;
    ui::SavedViewsModel m_views;
};

}  // namespace lengen::studio
