#pragma once
// The run browser: the runs under the chosen folders in a sortable, filterable table (the filter
// matches every column, tags and notes included). Double-click opens a run; selecting several
// and pressing Compare overlays them; Notes edits the selected run's notes and tags. GUI thread.

#include <QSet>
#include <QTimer>
#include <QWidget>

#include <functional>
#include <vector>

#include "lengen/engine/run_archive.h"
#include "run_menu_model.h"
#include "run_removal_model.h"

class QLabel;
class QLayout;
class QMenu;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace lengen::ui {

class RunTableModel;
class RunFilterModel;

class RunBrowser final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunBrowser)

public:
    explicit RunBrowser(QWidget* parent = nullptr);
    RunTableModel* model() const { return m_model; }
    /// The runs the filter shows, as a proxy over model() (the Hyperparameters tab follows it).
    const QSortFilterProxyModel* shownRuns() const;
    /// The filter's state (run_filter_model.h): its terms, the runs it shows, its hint.
    const RunFilterModel& filter() const { return *m_proxy; }
    /// Adds a runs folder. A folder holding runs of the reference's Python code (config.yaml +
    /// state.pt, no run.h5) is not listed as such: referenceRunsFound() offers their import.
    void addFolder(const QString& folder);
    void setFolders(const QStringList& folders);
    QStringList folders() const;
    void refresh();
    /// What this studio's own jobs do with a run ("evaluating", "" for nothing): the run menu
    /// offers Archive and Delete disabled for such a run, naming the job (the window asks its
    /// controller).
    void setBusyHere(std::function<QString(const QString& runFile)> busy)
    {
        m_busyHere = std::move(busy);
    }
    /// Picks up what changed since the last look (new, gone and changed runs) without
    /// re-reading the others: what the 3 s timer does, now.
    void follow();
    void setFilterText(const QString& text);
    /// What the filter's key=value terms cannot match ("no run has the key …; did you mean …?"),
    /// shown under the filter; "" when every key exists.
    QString filterHint() const;
    /// The columns shown (the header's context menu chooses them; kept in QSettings). By
    /// default Backbone and Created are hidden, so that Tags and Notes have room at 1280 px.
    void setColumnShown(int column, bool shown);
    /// The filter as typed, and the columns by name (a saved view, issue 72): the fixed columns
    /// hidden, by key, and the keys and results added after them. Kept in the settings.
    QString filterText() const;
    /// The fixed columns hidden, by key (engine::runListColumns: "backbone", "created"); a
    /// header of older settings or views is taken as its key.
    QStringList hiddenColumnNames() const;
    void setHiddenColumnNames(const QStringList& keys);
    /// The column sorted by (a fixed column's key or an extra column's name) and whether
    /// descending; sortBy sorts so, where the list has that column (false where not).
    std::pair<QString, bool> sortKey() const;
    bool sortBy(const QString& column, bool descending);
    QStringList extraColumns() const;
    void setExtraColumns(const QStringList& keys);
    bool columnShown(int column) const;
    /// A config key or stored result as a column after the fixed ones (issue 72), or not; kept
    /// in QSettings. The header's menu offers every one the runs have under "More columns".
    void setExtraColumnShown(const QString& key, bool shown);
    /// The header's menu: the fixed columns, then "More columns" (popup(); returned for tests).
    class QMenu* showColumnMenu(const QPoint& globalPos);
    int visibleRows() const;
    QStringList selectedRuns() const;
    /// Selects (and scrolls to) the row of a run file.
    void selectRun(const QString& runFile);
    /// Selects exactly these runs (those the filter shows), scrolled to the first: what the
    /// Hyperparameters tab's brushes keep.
    void selectRuns(const QStringList& runFiles);
    /// Opens the Notes dialog of the one selected run (the button "Notes of <run id>…").
    class RunNotesDialog* editNotes();
    /// With several runs selected: the dialog that adds and removes tags on all of them (opened
    /// with open(); nullptr with fewer than two). The Notes button opens it then.
    class RunTagsDialog* editTagsOfSelected();
    /// The selected runs' context menu (run_menu_model.h), opened with popup() at `globalPos`;
    /// it deletes itself on close. Returned for tests.
    class QMenu* showRunMenu(const QPoint& globalPos);
    /// What a menu entry does, for the selected runs: Archive and Delete ask first (naming how
    /// many runs and their size), or say why they cannot.
    void runMenuAction(RunMenuModel::Action action);
    /// Puts back the runs the last Archive or Delete moved (the Undo beside the filter).
    void undoRemoval();

Q_SIGNALS:
    void openRequested(QString runFile);
    void compareRequested(QStringList runFiles);
    /// "Overlay training": draw the selected runs' loss curves on the Train tab.
    void overlayRequested(QStringList runFiles);
    /// `folder` (added by the user) holds reference runs: `runDirs`, none imported yet.
    void referenceRunsFound(QString folder, QStringList runDirs);
    /// An added folder holds no run.h5 (nor runs of the Python code) yet.
    void folderHoldsNoRuns(QString folder);
    /// The run menu's Evaluate and Probe: one queued job per run.
    void evaluateRequested(QStringList runFiles);
    void probeRequested(QStringList runFiles);
    /// The run menu's Export figures: every figure of each run, asked where (issue 72).
    void exportFiguresRequested(QStringList runFiles);
    /// Archive or Delete moved these runs (their run.h5 where they were): the open run, when
    /// one of them, closes (OpenRunModel::movedAway).
    void runsMoved(QStringList runFiles);
    /// What an action did, for the status bar ("Copied 3 paths").
    void statusMessage(QString message);

private:
    /// The bar's buttons that no member keeps: createBar makes them, wireControls wires them.
    struct BarButtons {
        QPushButton *add, *refresh, *compare, *overlay;
    };
    void createTable();
    BarButtons createBar();
    QLabel* layOut(const BarButtons& buttons);
    void wireControls(const BarButtons& buttons);
    RunTableModel* m_model;
    QTimer m_poll;
    std::function<QString(const QString&)> m_busyHere;
    RunFilterModel* m_proxy;  ///< the filter and the runs it shows (run_filter_model.h)
    QTableView* m_table;
    QSet<int> m_userSized;   ///< columns the user resized: no longer fitted to their contents
    bool m_fitting = false;  ///< the columns are being fitted (not the user's resize)
    QLineEdit* m_filter;
    QPushButton* m_notes;
    QLabel* m_filterHint;
    QLabel* m_moved = nullptr;  ///< "Moved 2 runs to the trash", beside Undo
    QPushButton* m_undo = nullptr;
    RunRemovalModel m_removal;  ///< Archive and Delete: plan, move, what Undo puts back
    void updateNotesButton();
    void updateFilterHint();
    void removeRuns(engine::RunRemoval kind);
    RunMenuModel selection() const;  ///< the selected runs, their sweeps and this studio's jobs
    void updateRemovalBar();
    QLayout* createRemovalBar();
};

}  // namespace lengen::ui
