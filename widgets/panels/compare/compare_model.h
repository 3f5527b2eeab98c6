#pragma once
// The Compare tab's state, with no widgets (issue 70): the runs compared, what the user chose
// (method, grouping, keys, band, baselines, log y, legend place, a logged column's smoothing
// and x axis), what it follows (the runs' files on disk: analysis.h5, and run.h5 for a logged
// column) and what the tab would show — the figure or the panels of every method, the line
// above them, the runs left out, the config keys that differ. The view (compare_view) builds
// widgets, forwards choices here and paints what rebuild() returns; tests drive this without a
// window (tst_compare_model).
// GUI thread (it reads run files when asked to rebuild: a few ms per run).

#include <QString>
#include <QStringList>

#include <optional>
#include <string>
#include <vector>

#include "compare_figure.h"
#include "figure_provenance.h"
#include "figure_spec.h"
#include "lengen/engine/config.h"

namespace lengen::ui {

/// What the user chose on the Compare tab.
struct CompareChoices {
    QString method;  ///< "" until the runs offer one; kept while the runs offer it
    CompareGroup group = CompareGroup::Settings;
    QString keys;  ///< CompareGroup::Keys: "pe, model.num_hidden_layers"
    engine::BandKind band = engine::BandKind::Auto;
    bool baselines = false;
    /// Log y forced on or off; unset: the figure's own (a loss or gradient norm is log, an
    /// error is not).
    std::optional<bool> logY;
    /// The legend beside the data: by default, as W&B and TensorBoard keep it off the curves
    /// (inside, it covered the curves and the train-length labels).
    bool legendOutside = true;
    /// A logged column's controls (issue 72, the Train tab's): each run's EMA weight (0 = raw)
    /// and the x axis (step, relative or wall time). An evaluation method has neither.
    double smoothing = 0;
    LoggedX x = LoggedX::Step;
};

/// What the tab shows for the runs and choices.
struct CompareShown {
    plots::FigureSpec spec;                 ///< one method's figure (empty with panels)
    std::optional<plots::GridSpec> panels;  ///< every method at once, a panel each
    QStringList missing;                    ///< runs with no curve (not evaluated with it)
    QString info, infoTip;                  ///< the line above the figure, and its tooltip
    bool offerEvaluate = false;  ///< "Evaluate them": one evaluation method, runs missing
    std::vector<figures::FigureSources> sources;  ///< what the figure drew (its provenance)
    std::vector<std::string> groupedBy;           ///< the keys the figure was grouped by
};

/// The config table under the figure: a column per readable run, a row per key that differs.
struct CompareTable {
    QStringList runNames;  ///< the columns' headers ("NoPE seed 1 (ab12cd34)")
    std::vector<engine::ConfigDifference> rows;
    QString title;  ///< "Config keys that differ … (3):", "… are the same.", or ""
};

class CompareModel {
public:
    /// The method box's last evaluation entry: every method the runs hold, as panels.
    static QString allMethodsText();

    /// Compares these runs (run.h5 files or their folders): the methods offered are read
    /// again; the chosen method stays if offered, else the default (ood_length, the first
    /// evaluation, or "training: loss" when none is stored).
    void setRuns(const QStringList& runs);
    const QStringList& runs() const { return m_runs; }
    /// The evaluation methods the runs hold, sorted, then allMethodsText() when several.
    const QStringList& evaluationMethods() const { return m_methods; }
    /// The logged columns offered after them ("training: loss", …).
    QStringList loggedMethods() const;
    /// Chooses a method offered; false (nothing changes) otherwise.
    bool setMethod(const QString& method);
    QString method() const { return m_choices.method; }
    void setGrouping(CompareGroup group, const QString& keys, engine::BandKind band);
    void setBaselines(bool on) { m_choices.baselines = on; }
    void setView(bool logY, bool legendOutside);
    void setLogY(std::optional<bool> logY) { m_choices.logY = logY; }
    void setLegendOutside(bool outside) { m_choices.legendOutside = outside; }
    /// A logged column's smoothing, clamped to [0, 0.99], and x axis.
    void setSmoothing(double alpha);
    void setLoggedX(LoggedX x) { m_choices.x = x; }
    /// Every choice at once (a saved view, issue 72): the method kept only if offered.
    void setChoices(const CompareChoices& choices);
    const CompareChoices& choices() const { return m_choices; }
    /// The choices a figure is shown with (log y, legend place; hidden curves are the plot's).
    figures::ViewOptions view() const;
    /// Them applied to a figure: log y forced on or off, the legend's place.
    void applyChoices(plots::FigureSpec& spec) const;

    /// Whether the chosen method is a logged column: run.h5 counts as it grows.
    bool followsLogs() const;
    /// Whether the runs' files changed since the last rebuild (an evaluation stored, a
    /// training logged on a logged column): then the view rebuilds, keeping zoom and hidden
    /// curves.
    bool changedOnDisk() const;

    /// Reads the runs again and says what to show now; records the files' stamp.
    const CompareShown& rebuild();
    const CompareShown& shown() const { return m_shown; }
    /// The config table for the runs and the method chosen (reads their stored configs).
    CompareTable table() const;

    /// The grouping and a logged column's controls as compareRuns takes them (keys parsed).
    CompareOptions options() const;

private:
    void rebuildOne();
    void rebuildPanels();

    QStringList m_runs, m_methods;
    CompareChoices m_choices;
    CompareShown m_shown;
    QString m_stamp;  ///< the runs' files when the figure was last rebuilt
};

/// "NoPE seed 1 (ab12cd34)": how the figure's legend names a run (the path when unreadable).
QString compareRunName(const QString& run);

}  // namespace lengen::ui
