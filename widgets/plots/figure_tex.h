#pragma once
// Figures as pgfplots code a paper typesets with its own fonts (issue 42): a .tex file holding
// one tikzpicture, and its data beside it in whitespace-separated .dat files that pgfplots
// reads (the same numbers as the CSV export, written the same way). The colours are defined
// once at the top of the .tex (lengenC0, lengenC1, …), so a paper can change the palette.
//
// Used as `\input{fig.tex}` in a document that loads pgfplots (compat 1.18, TeX Live 2022);
// the data are read from \lengenFigureDir (default ".": the folder pdflatex runs in): a paper
// that keeps its figures elsewhere says `\def\lengenFigureDir{figures}` before the \input.
// Standalone, the .tex is a whole document that `pdflatex fig.tex` compiles in its folder.
//
// What is drawn: curves (dashed, staircase, gaps at NaN), bands as filled polygons, shaded
// spans, labelled horizontal and vertical lines, markers, log axes, fixed ranges, the legend
// and its place; a grid's panels with one legend; a heatmap's cells (masked ones blank), its
// colour range and log scale, and its boundary. Not drawn: a ZoomPanel, custom tick labels.

#include <QString>

#include <functional>
#include <utility>
#include <vector>

#include "figure_export.h"
#include "figure_spec.h"

namespace lengen::plots {

/// The text of a .tex file and of its data files (names relative to the .tex's folder).
struct TexFiles {
    QString tex;
    std::vector<std::pair<QString, QString>> data;  ///< file name, content
};

/// `stem` names the data files: "<stem>-<series>.dat" (and "-band" for a band's outline).
TexFiles figureTex(const FigureSpec& spec, const QString& stem, bool standalone);
TexFiles gridTex(const GridSpec& spec, const QString& stem, bool standalone);
TexFiles heatmapTex(const HeatmapSpec& spec, const QString& stem, bool standalone);

/// Writes the data files, then the .tex at `path` (each atomically); the stem is the .tex's
/// base name.
ExportResult writeTex(const QString& path,
                      const std::function<TexFiles(const QString& stem)>& make);

/// A .tex file around one tikzpicture: the header comment naming `what`, \lengenFigureDir, the
/// colour `definitions` (\definecolor lines); standalone, a whole document with a page of
/// widthIn x heightIn plus room for the labels. For figures drawn outside these builders.
QString texDocument(const QString& picture, const QString& definitions, double widthIn,
                    double heightIn, bool standalone, const QString& what);
/// How a picture names its data file `file` (read from \lengenFigureDir).
QString texDataRef(const QString& file);

/// Text for LaTeX: its special characters escaped, the symbols figures use (×, Λ, ≤, ±, θ, —,
/// ·, ÷, Greek letters) as math or dashes, other characters outside ASCII as '?'. A line break
/// becomes \\ where `lineBreaks` (titles, which are set centred), else a space.
QString texEscape(const std::string& text, bool lineBreaks = false);

}  // namespace lengen::plots
