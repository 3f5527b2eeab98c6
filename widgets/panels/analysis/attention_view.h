#pragma once
// Attention heatmap of the open run's stored full maps: setting, prompt, layer and head (or
// the mean over heads) selectors, all counted from 0; log colour scale fitted to the visible
// cells, zoom/pan, a hover read-out of query, key and weight, the chosen query's row as a line
// plot under the map (click a row to choose it), and a layers x heads thumbnail grid. Only the
// visible tile is read from the analysis file (at most kMaxTile x kMaxTile cells), so a
// 1,600-token map stays responsive. GUI thread only.

#include <QWidget>

#include <optional>
#include <vector>

#include "figure_spec.h"
#include "run_figures.h"

#include "lengen/engine/probes.h"

class QCheckBox;
class QStackedLayout;
class QToolButton;
class QComboBox;
class QHBoxLayout;
class QCustomPlot;
class QCPRange;
class QLabel;
class QSpinBox;
class QSplitter;
class QTimer;

namespace lengen::ui {

class OpenRunModel;

class AttentionGrid;

class AttentionView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AttentionView)

public:
    static constexpr int kMaxTile = 640;

    explicit AttentionView(QWidget* parent = nullptr);
    void setRun(const QString& runFile);
    /// Follows the studio's open run (re-read when an analysis stored results).
    void followOpenRun(const OpenRunModel& model);
    QString run() const { return m_run; }
    QCustomPlot* plot() const { return m_plot; }
    /// The window of the map currently loaded: rows [r0, r1) x columns [c0, c1).
    QRect loadedTile() const { return m_tile; }
    /// The hover read-out line (query, key and weight under the cursor, or a hint).
    QString readout() const;
    /// The loaded tile as drawn (colour range, training-length boundary): for tests.
    const std::optional<plots::HeatmapSpec>& heatmap() const { return m_heatmap; }
    /// Shows rows/columns [first, first + size) of the current map (loads that tile).
    void showWindow(int firstRow, int firstCol, int size);
    /// Writes the loaded tile as drawn (PNG/SVG/PDF) or its cells (CSV `row,col,value`).
    bool exportTo(const QString& path, int dpi, QString* error = nullptr);
    /// Chooses the map: prompt, layer, head (-1 = mean over heads), all from 0.
    void select(int prompt, int layer, int head);
    int layer() const;
    int head() const;
    /// The query whose attention row is plotted under the map; setQuery redraws it.
    int query() const;
    void setQuery(int query);
    /// The row plot as drawn (empty when no map is shown).
    const std::optional<plots::FigureSpec>& rowFigure() const { return m_rowSpec; }
    /// Shows the layers x heads thumbnails instead of the map (and back).
    void showGrid(bool on);
    bool gridShown() const;
    AttentionGrid* grid() const { return m_grid; }
    /// Interventions with stored maps ("" first: none); choosing one shows its map of the same
    /// tile beside the untouched one (docs/interventions.md).
    QStringList interventions() const;
    void setIntervention(const QString& spec);
    QString intervention() const;
    /// The intervention's tile as drawn beside the map (empty when none is chosen or stored).
    const std::optional<plots::HeatmapSpec>& interventionHeatmap() const { return m_editHeatmap; }
    QCustomPlot* interventionPlot() const { return m_editPlot; }

Q_SIGNALS:
    void statusMessage(QString message);

private:
    // The constructor's steps.
    QHBoxLayout* createSelectionBar();
    void createPages();
    void wireSelection();
    void onSelection();
    void loadVisibleTile();
    void drawRow();
    void refreshGrid();

    std::optional<plots::HeatmapSpec> interventionTile(const figures::MapSelection& m);
    void shareColourRange(plots::HeatmapSpec& a, plots::HeatmapSpec& b) const;
    void drawInterventionTile(const std::optional<plots::HeatmapSpec>& tile, const QCPRange& xr,
                              const QCPRange& yr);
    void addInterventionRow(plots::FigureSpec& row, const figures::MapSelection& m);
    void hoverOn(QCustomPlot* plot, QMouseEvent* event);
    QString m_run;
    QComboBox* m_intervention = nullptr;
    QCustomPlot* m_editPlot = nullptr;
    QSplitter* m_maps = nullptr;  ///< the two maps side by side
    std::optional<plots::HeatmapSpec> m_editHeatmap;
    std::vector<engine::AttentionSetting> m_settings;
    QComboBox* m_setting;
    QSpinBox *m_prompt, *m_layer, *m_head, *m_query;
    QCheckBox *m_log, *m_fit;
    QToolButton* m_gridButton;
    QStackedLayout* m_stack;
    AttentionGrid* m_grid;
    QCustomPlot *m_plot, *m_row;
    QPoint m_pressAt;
    std::optional<plots::FigureSpec> m_rowSpec;
    QLabel *m_readout, *m_empty;
    QTimer* m_reload;
    QRect m_tile;
    std::optional<plots::HeatmapSpec> m_heatmap;  ///< the loaded tile
    int m_tokens = 0;
};

}  // namespace lengen::ui
