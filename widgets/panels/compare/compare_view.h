#pragma once
// Several runs on one figure: the transformer's curve of one evaluation method from each run
// (e.g. ood_length of RoPE vs NoPE vs ALiBi on one task), named by PE, with bands and the
// training length; or every method at once, a panel each with one shared legend. GUI thread.

#include <QWidget>

#include <memory>
#include <optional>

#include "compare_figure.h"
#include "compare_model.h"
#include "figure_spec.h"

class QComboBox;
class QCheckBox;
class QHBoxLayout;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QScrollArea;
class QSlider;
class QTableWidget;
class QPushButton;
class QTimer;

namespace lengen::ui {

class FigureState;

class CompareView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CompareView)

public:
    explicit CompareView(QWidget* parent = nullptr);
    ~CompareView() override;
    void setRuns(const QStringList& runFiles);
    QStringList runs() const { return m_model.runs(); }
    const plots::FigureSpec& spec() const { return m_model.shown().spec; }
    /// The tab's state (compare_model.h): runs, choices and what is shown.
    const CompareModel& model() const { return m_model; }
    /// The method box's last entry: every method the runs hold, side by side as panels.
    static QString allMethodsText();
    /// Shows this method ("standard", "ood_length") or allMethodsText(); false if not offered.
    bool setMethod(const QString& method);
    /// How the curves are grouped (compare_figure.h): a group kind, the keys for
    /// CompareGroup::Keys ("pe, model.n_layer"), the band. Redraws.
    void setGrouping(CompareGroup group, const QString& keys = {},
                     engine::BandKind band = engine::BandKind::Auto);
    /// The view switches (the Evaluation tab's): log y, the legend beside the data. Redraws.
    void setView(bool logY, bool legendOutside);
    /// Every choice at once, the controls set to them (a saved view, issue 72). Redraws.
    void setChoices(const CompareChoices& choices);
    /// A logged column's controls (the row under the bar, shown for "training: …" methods):
    /// the EMA weight (0..0.99) and the x axis. Redraws.
    void setLoggedControls(double smoothing, LoggedX x);
    /// The panels shown for allMethodsText() (one per method); empty for one method.
    const std::optional<plots::GridSpec>& panels() const { return m_model.shown().panels; }
    QCustomPlot* plot() const { return m_plot; }
    /// Writes the comparison figure (PNG/SVG/PDF/CSV by the extension); false + error on failure.
    bool exportTo(const QString& path, int dpi, QString* error = nullptr);
    /// The selected runs the figure leaves out (no evaluation of the chosen method).
    QStringList missingRuns() const { return m_model.shown().missing; }
    /// The line above the figure: how many runs, and which are left out and why.
    QString infoText() const;
    QString infoToolTip() const;  ///< what the line above the figure leaves to its tooltip
    /// The table under the figure: one row per config key whose value differs between the
    /// runs (a column per run); empty for a single run or identical configs.
    QTableWidget* differences() const { return m_diff; }
    /// Live Compare: redraws when a compared run's results changed since the figure was drawn
    /// (an evaluation stored from another process or the studio), keeping the user's zoom and
    /// hidden curves. A timer calls it every second; true if it redrew.
    bool followFiles();

Q_SIGNALS:
    /// "Evaluate them": the runs the comparison left out for want of an evaluation (run.h5
    /// paths, however they were selected) and the one method the comparison needs.
    void evaluateRequested(QStringList runFiles, QString method);
    /// A figure was drawn: the runs' colours (plots::shownRunColor) may be others now, and
    /// the views that show runs follow (the Runs list's swatches, the Train tab's overlay).
    void colorsChanged();
    /// What Copy and Export did, or why they did nothing.
    void statusMessage(QString message);

protected:
    /// The wheel over the panels of every method scrolls them (Ctrl + wheel zooms), as over
    /// any scrolling page; over one figure it zooms (issue 80, defect 10).
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void createControls();
    QHBoxLayout* buildBar();
    QWidget* buildLoggedRow();
    void showChoices();
    QWidget* buildPlotAndConfig();
    void connectControls();
    void draw();
    void fillDifferences();
    bool drawsSomething() const;
    QString nothingText() const;

    CompareModel m_model;
    QPushButton* m_evaluate;
    QComboBox* m_method;
    QCheckBox *m_baselines, *m_logY, *m_legendOutside;
    QComboBox* m_group;
    QLineEdit* m_keys;
    QComboBox* m_band;
    QWidget* m_loggedRow;  ///< smoothing and x axis: shown for a logged column
    QSlider* m_smoothing;
    QLabel* m_smoothingValue;
    QComboBox* m_loggedX;
    QCustomPlot* m_plot;
    QScrollArea* m_scroll;
    QLabel *m_info, *m_hover;
    QTableWidget* m_diff;
    QLabel* m_diffTitle;
    QTimer* m_follow;
    std::unique_ptr<FigureState> m_state;
    bool m_live = false;  ///< redrawing for followFiles: the user's zoom stays
};

/// A value of Compare's config-difference table as shown: long decimals at 6 significant digits
/// (11.555555555555555 -> 11.5556; the exact text is the cell's tooltip), "—" where the run's
/// config has no such key, anything else as stored.
QString shownConfigValue(const std::string& stored);

}  // namespace lengen::ui
