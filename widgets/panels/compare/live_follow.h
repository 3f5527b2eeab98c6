#pragma once
// Live Compare (issue 55): what a view needs to redraw when the runs it shows gain results on
// disk (an evaluation stored by `lengen eval` in another process, or by the studio) while
// keeping what the user did to the figure (its zoom, the curves hidden by a legend click).
// GUI thread; one stat() per run and poll, no file is opened.

#include <QString>
#include <QStringList>

#include <optional>

#include "qcp.h"

namespace lengen::ui {

/// What changes when a run gains results: the size and modification time of each run's
/// analysis.h5 ("" while it has none), and with `logs` its run.h5 too. Equal stamps: nothing
/// to redraw. run.h5 counts only for a figure of a logged column ("training: loss"): a
/// training logs into it every few steps, which an evaluation's figure does not draw.
QString runFilesStamp(const QStringList& runs, bool logs = false);

/// The figure's zoom and hidden curves, taken before a redraw and put back after it.
class FigureState {
public:
    /// Follows `plot`: a wheel turn or a drag on it marks the view as zoomed by the user.
    explicit FigureState(QCustomPlot& plot);
    ~FigureState();  ///< disconnects: the plot may outlive it (a child widget dies later)
    FigureState(const FigureState&) = delete;
    FigureState& operator=(const FigureState&) = delete;
    /// Takes the state of the figure now shown.
    void take();
    /// Puts it back on the rebuilt figure: the hidden curves, and the first panel's ranges
    /// where the user had zoomed or dragged.
    void restore();
    /// A figure of other data (other runs, method or grouping): the user's zoom is forgotten.
    void forget() { m_zoomed = false; }
    bool zoomed() const { return m_zoomed; }

private:
    QCustomPlot& m_plot;
    bool m_zoomed = false;
    QStringList m_hidden;
    std::optional<QCPRange> m_x, m_y;
    QMetaObject::Connection m_wheel, m_drag;
};

}  // namespace lengen::ui
