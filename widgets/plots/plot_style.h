#pragma once
// The shared look of every figure (seaborn "darkgrid" + "colorblind", as in the reference's
// matplotlib figures) and the page frame both builders start from. Internal to lengen_plots.

#include <QColor>
#include <QFont>
#include <QString>
#include <string>

class QCustomPlot;
class QCPAxisRect;
class QCPLayoutGrid;

namespace lengen::plots::style {

// Point sizes for a 6 x 5 in figure; exports keep them physical (a point is 1/72 in at any dpi).
inline constexpr int kTitlePt = 12;
inline constexpr int kLabelPt = 11;
inline constexpr int kTickPt = 10;
inline constexpr int kLegendPt = 10;
inline constexpr int kAnnotationPt = 10;

QFont font(int pointSize, bool bold = false);
QColor panelColor();  ///< #EAEAF2, the grey behind the data
QColor textColor();   ///< #262626, seaborn's near-black

/// `hex` ("#rrggbb") when valid, else palette colour `index`.
QColor colorOf(const std::string& hex, int index);
inline QString qs(const std::string& s) { return QString::fromStdString(s); }

/// Grey panel, white grid, no frame or ticks; only the bottom and left axes shown.
void styleAxisRect(QCPAxisRect* rect);

/// Clears `plot` (plottables, items, layout; the legend object survives, detached) and returns
/// the grid the panels go into, under a title row when `title` is not empty.
QCPLayoutGrid* beginFigure(QCustomPlot& plot, const std::string& title);

}  // namespace lengen::plots::style
