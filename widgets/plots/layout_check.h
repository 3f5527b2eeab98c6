#pragma once
// The layout check (issue 80 §3): what a person would find wrong with a plot as last drawn —
// a data area too small to read, texts written over each other or over the curves, text cut by
// the widget's edge, a legend hiding the data. Every rectangle comes from QCustomPlot itself
// (the axes' own label boxes, the layout's rects, the items' anchors), so the check sees what
// was painted, at the widget's size. The studio's layout test runs it over every plot of every
// tab at 1280x800; a plot added later joins by being listed there.

#include <QRectF>
#include <QString>
#include <QStringList>
#include <vector>

class QCustomPlot;
class QCPAxisRect;
class QCPItemText;

namespace lengen::plots {

/// The least size of a plot widget whose one panel keeps LayoutLimits' data area beside a title,
/// tick labels and an axis label at the studio's fonts: views give their plots this (and scroll
/// where the page cannot), so no window size squeezes a panel below what can be read.
inline constexpr int kPlotMinWidth = 400;
inline constexpr int kPlotMinHeight = 300;
/// One panel row of a grid figure (panel title, ticks, x label) and its title above the rows.
inline constexpr int kPanelRowHeight = 290;
inline constexpr int kGridTitleHeight = 70;
/// A grid figure of this many columns or more lists its shared legend below the panels, in
/// rows: beside them it pushed three panels past 1280 px, so the legend was reached only by
/// scrolling sideways (issue 80).
inline constexpr int kLegendBelowColumns = 3;
inline constexpr int kLegendBelowHeight = 70;
/// The least size of a grid figure's widget (Compare's panels, the Sweeps grid): each panel a
/// readable data area (300 px beside its tick labels), the shared legend beside or below them,
/// a row per kPanelRowHeight. Four panels in a row need more than 1280 px, and scroll sideways
/// there (the Xvfb walk found three panels 265 px wide at 1280 x 800 before this).
inline constexpr int gridMinimumWidth(int columns)
{
    return columns * 370 + (columns >= kLegendBelowColumns ? 60 : 220);
}
inline constexpr int gridMinimumHeight(int rows, int columns = 1)
{
    return rows * kPanelRowHeight + kGridTitleHeight +
           (columns >= kLegendBelowColumns ? kLegendBelowHeight : 0);
}

struct LayoutLimits {
    int minDataWidth = 300;        ///< px: a main panel's data area
    int minDataHeight = 200;       ///< px: every panel's data area
    int minInsetWidth = 120;       ///< px: a panel marked an inset (the zoom beside the main panel)
    double maxLegendCover = 0.10;  ///< of a panel's data points an inset legend may hide
};

/// One text as painted: what it is ("left tick label 0.5", "title") and its box in the
/// plot's pixels.
struct PaintedText {
    QString what;
    QRectF box;
    bool insideData = false;  ///< an annotation inside a data area (a train-length label)
};

/// Every text of `plot` as last replotted: tick labels, axis labels, titles, legend entries,
/// annotations (QCPItemText).
std::vector<PaintedText> paintedTexts(QCustomPlot& plot);

/// What is wrong with `plot` as last replotted, one sentence each naming the texts or panel;
/// empty when nothing is. `visible`: the part of the plot a person can see (its rect, or less
/// when a parent clips it without scrolling); texts outside it are cut.
QStringList layoutProblems(QCustomPlot& plot, const QRectF& visible,
                           const LayoutLimits& limits = {});

/// Keeps what the builder puts inside data areas off the data, each time the plot is laid out
/// (QCustomPlot::afterLayout, so a resize or a zoom places them again): a train-length label
/// (markLineLabel) moves down its line, then to the line's left, to the first slot where it
/// meets no curve, reference line or other text, else to a strip taken above the data area
/// (hidden where that is taken too); an inset legend
/// goes to the corner of its panel that hides the fewest data points. Connected once per plot.
void keepAnnotationsOffTheData(QCustomPlot& plot);
/// Marks a label of a vertical line for keepAnnotationsOffTheData: `row` is its place in the
/// stack of labels the line's panel starts with.
void markLineLabel(QCPItemText* label, int row);

/// Marks a panel as an inset beside the main one (the evaluation figure's zoom): narrower is
/// fine (LayoutLimits::minInsetWidth).
void markInsetPanel(QCPAxisRect* rect);

}  // namespace lengen::plots
