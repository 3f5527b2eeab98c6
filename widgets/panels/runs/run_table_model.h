#pragma once
// Table of the runs under one or more folders (the CLI's <task>/dim_a-b/<date>/<id>/run.h5
// layout, or any depth): one row per run.h5 with what a researcher sorts and filters by.
// Lives on the GUI thread; scanning reads each run's header only (SWMR-safe).

#include <QAbstractTableModel>
#include <QHash>
#include <QStringList>

#include <map>
#include <memory>
#include <vector>

#include "latest_only.h"
#include "lengen/engine/run_index.h"
#include "lengen/engine/run_table.h"

namespace lengen::ui {

/// A run's status as every view names it (engine::statusLabel: "stopped" for "cancelled").
QString statusLabel(const QString& status);

/// The one definition of a run's "final loss" the studio shows (a tooltip text).
QString finalLossDefinition();

struct RunRow {
    QString path;  ///< run.h5
    QString task, pe, backbone, status, created, error, runId;
    qint64 seed = -1;  ///< -1 when unknown (a damaged file)
    int dims = 0, points = 0, hidden = 0, layers = 0, heads = 0;
    qint64 steps = 0, totalSteps = 0;
    double finalLoss = 0;
    bool hasAnalysis = false;
    QStringList evalMethods, probes;  ///< what analysis.h5 holds (names only)
    QStringList tags;                 ///< the run's tags (engine::writeRunNotes)
    QString notes;                    ///< its notes, whole
    /// What the row was made from (its stamp, its config for filters), never null: shared and
    /// immutable, so the Hyperparameters tab's worker reads it while the Runs list moves on.
    std::shared_ptr<const engine::RunIndexEntry> entry =
        std::make_shared<const engine::RunIndexEntry>();
    QString folder;  ///< the followed folder that lists it
    /// The model's extra columns' cells (engine::runCell), in its order: made when the row or
    /// the columns change, so a sort by an extra column compares stored values (issue 82 §3).
    std::vector<engine::RunTableCell> extra;
};

class RunTableModel final : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        Task,
        Pe,
        Backbone,
        Seed,
        RunId,
        Size,
        Dims,
        Points,
        Steps,
        FinalLoss,
        Created,
        Status,
        Sweep,  ///< the sweep a run is a cell of (issue 72): sorting by it groups a sweep's runs
        Tags,
        Notes,
        ColumnCount
    };

    explicit RunTableModel(QObject* parent = nullptr);

    /// A fixed column's stable key (engine::runListColumns: "task", "created"), by which the
    /// settings and saved views name it; columnOf takes a key or an older header (-1: none).
    static QString columnKey(int column);
    static int columnOf(const QString& keyOrHeader);
    /// The fixed columns' keys among `names` (keys or headers), in their order; others dropped.
    static QStringList columnKeys(const QStringList& names);

    /// Rescans these folders (recursively) and replaces the rows.
    void setFolders(const QStringList& folders);
    QStringList folders() const { return m_folders; }
    void refresh() { setFolders(m_folders); }
    /// Shows these entries as the rows, following no folder: runs already read (a bench's
    /// 10,000 made in memory, a test's) without their files.
    void showEntries(const std::vector<engine::RunIndexEntry>& entries);
    /// Follows the folders cheaply (the Runs list calls it every few seconds): one
    /// engine::refreshRunIndex per folder says what was added, removed or changed since the rows
    /// were read (a folder created since included; a run a process is writing: its steps as
    /// they land), and only those rows change. Rows keep their place; returns whether any changed.
    bool poll();
    /// The same look off the GUI thread (what the Runs list's timer does): each folder's
    /// refreshRunIndex runs on a worker over the rows' shared entries, and what changed is
    /// applied here when it returns, then polled(changed). At 10,000 runs a look takes a few
    /// hundred ms, which the GUI thread no longer waits for. A look under way is not doubled;
    /// one started before setFolders is dropped.
    void pollInBackground();
    bool polling() const { return m_look.busy(); }
    /// What the studio's own job says of a run it trains ("paused", "stopping"; "" removes it):
    /// shown instead of the file's "running", so a paused run reads "paused" here, in the Train
    /// tab's header and in the Jobs panel alike.
    void setJobState(const QString& runFile, const QString& state);
    /// Repaints the run colour swatches (after a view drew runs for the first time).
    void colorsChanged()
    {
        if (!m_rows.empty())
            Q_EMIT dataChanged(index(0, Task), index(int(m_rows.size()) - 1, Task),
                               {Qt::DecorationRole});
    }

    /// Columns beyond the fixed ones (issue 72): any config key or stored result, named as
    /// `lengen runs --columns` names them ("training.learning_rate", "min_loss",
    /// "ood_length@longest"); numbers sort as numbers. The Runs list keeps the choice.
    void setExtraColumns(const QStringList& keys);
    const QStringList& extraColumns() const { return m_extra; }
    /// Every column the rows offer beyond the fixed ones (engine::runColumnNames).
    QStringList availableColumns() const;

    /// Reads one run's row again now (its notes were just written), keeping its place.
    void rereadRun(const QString& runFile);
    const RunRow& row(int r) const { return m_rows.at(static_cast<size_t>(r)); }
    int rowOfPath(const QString& runFile) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

    /// One row from a run file (errors become a row with status "damaged" and the message).
    static RunRow readRow(const QString& runFile);
    static RunRow rowFromEntry(const engine::RunIndexEntry& entry);
    /// Whether row `row` matches a filter term (engine::runMatches: key=value, key<v, a range).
    bool rowMatches(int row, const engine::RunFilterTerm& term) const;

Q_SIGNALS:
    /// A look of pollInBackground ended; `changed`: rows were added, removed or changed.
    void polled(bool changed, qint64 lookMs);

private:
    struct FolderLook {
        QString folder;
        std::vector<std::shared_ptr<const engine::RunIndexEntry>> sent;  ///< the rows it knew
        engine::RunIndexChanges changes;                                 ///< what it found
    };
    using Looked = std::vector<FolderLook>;
    Looked snapshot() const;             ///< each folder with its rows' entries
    static Looked look(Looked folders);  ///< refreshRunIndex of each (any thread)
    bool applyLooked(const Looked& looked);
    /// Applies one folder's changes against the rows it was sent: a row changed since (by a
    /// look on the other thread meanwhile) stays, and a run added by both is one row. Returns
    /// whether any row changed.
    bool applyChanges(const FolderLook& look);
    /// A look on the worker: what it found, how long it took, the folders' generation it read.
    struct LookResult {
        Looked looked;
        qint64 ms = 0;
        quint64 generation = 0;
    };
    void lookDone(const LookResult& r);
    quint64 m_generation = 0;  ///< setFolders counts up: an older look's result is dropped
    /// Through the one "latest only" helper (latest_only.h): one look at a time, a poll during
    /// one runs once it ended.
    LatestOnly<LookResult> m_look{this, [this](LookResult r, bool) { lookDone(r); }};
    /// The row of `e` under `folder`, its extra cells made.
    RunRow rowFor(const engine::RunIndexEntry& e, const QString& folder) const;
    void fillExtra(RunRow& r) const;  ///< r.extra from its entry and m_extra
    /// A readable run's cell: displayed, or its raw value to sort by.
    QVariant cell(const RunRow& r, int column, bool sort) const;
    QStringList m_folders;
    QStringList m_extra;  ///< the chosen extra columns, after ColumnCount
    std::vector<RunRow> m_rows;
    QHash<QString, QString> m_jobStates;  ///< run file -> the studio job's word
};

}  // namespace lengen::ui
