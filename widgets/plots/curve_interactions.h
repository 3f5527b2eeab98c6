#pragma once
// The curve-plot interactions researchers know from TensorBoard and W&B, on any plot built by
// buildFigure: click a legend entry to hide or show its series (with its band), and a hover
// read-out of the nearest point of every visible series. Exports rebuild the figure from its
// spec: hiddenSeries() says what to leave out. No engine, no windows.

#include <QString>
#include <QStringList>

#include <functional>

#include "figure_spec.h"

class QCustomPlot;

namespace lengen::plots {

/// Wires both interactions onto `plot` (call once; they survive rebuilds of the figure).
/// `readout` receives the hover text ("" when the cursor leaves the data).
void enableCurveInteractions(QCustomPlot& plot, std::function<void(const QString&)> readout);

/// Shows or hides every graph named `name` (the curve and its band) and greys its legend entry.
void setSeriesVisible(QCustomPlot& plot, const QString& name, bool visible);
/// Names of the series hidden now.
QStringList hiddenSeries(const QCustomPlot& plot);
/// `spec` as `plot` shows it: without the series hidden there (what exports write).
FigureSpec shownSpec(const FigureSpec& spec, const QCustomPlot& plot);
/// Hides `names` again (after the same figure was rebuilt).
void hideSeries(QCustomPlot& plot, const QStringList& names);

/// "x = 12: RoPE 0.031 · NoPE 0.45": each visible, named series' point nearest to `x` on the
/// first axis rect.
QString nearestPoints(const QCustomPlot& plot, double x);

}  // namespace lengen::plots
