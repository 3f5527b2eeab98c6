#pragma once
// One figure of the open run at a time, chosen from the figures the run can draw (filtered by
// category), in an interactive QCustomPlot (drag to pan, wheel to zoom) with export and copy.
// GUI thread only.

#include <QWidget>

#include <functional>
#include <optional>

#include "run_figures.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QHBoxLayout;
class QLabel;
class QPushButton;
class QSlider;
class QStackedLayout;

namespace lengen::ui {

class OpenRunModel;

class FigureView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(FigureView)

public:
    using Filter = std::function<bool(const figures::FigureInfo&)>;
    FigureView(Filter filter, QString emptyText, QWidget* parent = nullptr);

    /// Lists the run's figures (keeps the current choice when it still exists).
    void setRun(const QString& runFile);
    /// What the view says while no run is open (issue 41, defect 9).
    static QString noRunText();
    void refresh() { setRun(m_run); }
    QString run() const { return m_run; }
    /// Follows the studio's open run: another run is listed at once; the same run's figures
    /// are re-read when an analysis stored results (not for its training log).
    void followOpenRun(const OpenRunModel& model);
    QStringList figureNames() const;
    bool showFigure(const QString& name);
    QCustomPlot* plot() const { return m_plot; }
    const std::optional<plots::FigureSpec>& currentSpec() const { return m_spec; }

    /// One line of what made the figure (run, stored results): Copy puts it beside the image.
    QString provenanceLine() const;
    /// Writes the current figure: PNG/SVG/PDF as shown (zoom kept), CSV = its data; beside it
    /// <figure>.provenance.json, as `lengen export` writes it.
    bool exportTo(const QString& path, int dpi, QString* error = nullptr);
    /// The hover read-out under the figure (tests).
    QString hoverText() const;
    /// The figure as shown: the spec without the series hidden by a legend click.
    std::optional<plots::FigureSpec> shownSpec() const;
    /// Asks for a file name and format, then exports.
    void exportWithDialog();
    /// Adds a button to the bar (e.g. "Evaluate this run") that emits computeRequested; the
    /// window queues the job. Disabled while no run is open.
    void setComputeAction(const QString& label, const QString& toolTip);
    /// One more such button (e.g. "Evaluate with interventions…"), after the first; the caller
    /// connects its clicked(). Disabled while no run is open.
    QPushButton* addRunButton(const QString& label, const QString& toolTip);

Q_SIGNALS:
    void statusMessage(QString message);
    void computeRequested();

private:
    void onCopy();
    /// Why Copy and Export have nothing to give ("" when a figure is shown).
    QString nothingShown() const;
    void draw();

    Filter m_filter;
    QString m_emptyText, m_run;
    QString m_drawn;  // the figure on the plot now
    QComboBox* m_choice;
    QCheckBox *m_logY, *m_legendOutside;  // view options; exports follow them
    QCustomPlot* m_plot;
    QLabel* m_empty;
    QLabel* m_hover;  // nearest point of each visible curve under the cursor
    QStackedLayout* m_stack;
    QWidget* m_sweepRow;
    QSlider* m_sweep;
    QLabel* m_sweepLabel;
    QStringList m_sweepNames;
    QHBoxLayout* m_bar;
    QPushButton* m_compute = nullptr;
    QList<QPushButton*> m_runButtons;
    std::optional<plots::FigureSpec> m_spec;
    std::optional<figures::FigureSources> m_sources;  ///< what m_spec drew (its provenance)
};

}  // namespace lengen::ui
