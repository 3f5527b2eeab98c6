#pragma once
// The Hyperparameters tab (issue 55; TensorBoard's HParams, W&B's parallel coordinates): the
// runs the Runs list shows as a table of their varied keys and results (engine::runTable, the
// same table `lengen runs --columns` prints) and as parallel coordinates over chosen columns,
// coloured by one. Brushing an axis keeps the runs inside the range: the table lists them, the
// Runs list selects them when the drag ends, and "Compare" sends them to Compare. Exports as
// every figure (PNG/SVG/PDF/CSV/TeX with its provenance). GUI thread.

#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <QHash>

#include <memory>
#include <optional>
#include <vector>

#include "hparams_figure.h"
#include "hparams_model.h"
#include "hparams_runs.h"
#include "latest_only.h"
#include "lengen/engine/run_index.h"

class QAbstractProxyModel;
class QComboBox;
class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;
class QToolButton;

namespace lengen::ui {

/// The runs table and its figure, as the worker builds them from the Runs list's entries.
struct HParamsBuild {
    std::vector<std::string> paths;  ///< run file of each table row
    engine::RunTable table;
    plots::ParallelSpec spec;
    unsigned revision = 0;  ///< HParamsModel::revision of the choices it drew
};

class ParallelView;
class RunTableModel;
class HParamsTableModel;

class HParamsView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(HParamsView)

public:
    explicit HParamsView(QWidget* parent = nullptr);
    ~HParamsView() override;

    /// The runs to show (their files and results); keeps the chosen axes, colour and brushes.
    void setRuns(std::vector<engine::RunIndexEntry> runs);
    /// What the worker does with the Runs list's entries (any thread): the table and its figure,
    /// drawn as `choices` says for that table.
    static HParamsBuild build(const std::vector<std::shared_ptr<const engine::RunIndexEntry>>& runs,
                              const HParamsModel& choices);
    /// Shows what build made (the GUI thread's part), keeping the brushes drawn meanwhile.
    void apply(HParamsBuild built);
    /// Follows the Runs list's rows, those its filter shows (`shown`: its proxy over `model`):
    /// a change is picked up within a second while the tab is shown, or when it is shown next;
    /// the table is built off the GUI thread.
    void followRuns(const RunTableModel& model, const QAbstractProxyModel* shown = nullptr);

    /// The axes, colour and brushes shown; setChoice draws them (columns not in the table are
    /// left out now, and drawn when a later table has them).
    figures::HParamsChoice choice() const;
    void setChoice(const figures::HParamsChoice& choice);
    /// What the user chose, kept across the runs shown (the tab's state without its widgets).
    const HParamsModel& choices() const { return m_choices; }
    /// The run files inside every brush (every run without a brush), in the table's order.
    QStringList insideRuns() const;
    const engine::RunTable& table() const { return m_runs.table(); }
    /// The runs shown, their table and what the Runs list was asked to select (no widgets).
    const HParamsRuns& runs() const { return m_runs; }
    ParallelView* plot() const { return m_plot; }
    QTableView* tableView() const { return m_tableView; }
    QString summaryText() const;

    /// Writes the figure in the format of `path`'s extension and its provenance beside it.
    bool exportTo(const QString& path, int dpi, QString* error = nullptr);
    void exportWithDialog();

Q_SIGNALS:
    /// A brush was drawn or removed: these runs are the ones inside (the Runs list selects them).
    void selectRequested(QStringList runFiles);
    void compareRequested(QStringList runFiles);
    void statusMessage(QString message);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void redraw();       ///< keepBrushes, then draw
    void draw();         ///< the figure again from the table and the choices
    void keepBrushes();  ///< the model takes the figure's brushes
    struct TableState {  // what the user set on the table, by column name
        QHash<QString, int> widths;
        QString sortedBy;
        Qt::SortOrder order = Qt::AscendingOrder;
    };
    TableState tableState() const;
    void showTable(std::optional<TableState> kept = std::nullopt);
    void selectInside(bool always);
    void updateAxesMenu();
    std::vector<int> columnOrder() const;  ///< the table's columns: run, axes, the rest
    void setUpTable();
    void updateSummary();
    void pullRuns();

    const RunTableModel* m_source = nullptr;
    const QAbstractProxyModel* m_shown = nullptr;  // the Runs list's filter
    HParamsModel m_choices;            // what the user chose; the defaults follow the runs
    HParamsRuns m_runs;                // the runs shown and their table
    QTimer m_pull;                     // coalesces the Runs list's changes
    LatestOnly<HParamsBuild> m_build;  // the table built from them off the GUI thread
    ParallelView* m_plot;
    HParamsTableModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QTableView* m_tableView;
    QToolButton* m_axes;
    QComboBox* m_color;
    QLabel* m_summary;
    QPushButton *m_clear, *m_compare, *m_export;
};

}  // namespace lengen::ui
