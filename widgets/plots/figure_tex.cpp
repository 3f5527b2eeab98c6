#include "figure_tex.h"

#include <QFileInfo>

#include <cmath>
#include <map>
#include <set>

#include "export_files.h"
#include "figure_builder.h"

namespace lengen::plots {

using files::number;

namespace {

// The colours a figure uses, each defined once (\definecolor{lengenC<i>}) in first-use order.
class Palette {
public:
    QString operator()(const std::string& hex)
    {
        const QString key = QString::fromStdString(hex).toUpper().remove('#');
        const auto [it, added] =
            m_names.emplace(key, QStringLiteral("lengenC%1").arg(m_names.size()));
        if (added)
            m_order.push_back(key);
        return it->second;
    }
    QString definitions() const
    {
        QString out =
            QStringLiteral("%% The palette: change a colour here and every curve of it follows.\n");
        for (const auto& key : m_order)
            out += QStringLiteral("\\definecolor{%1}{HTML}{%2}\n").arg(m_names.at(key), key);
        return out;
    }

private:
    std::map<QString, QString> m_names;
    std::vector<QString> m_order;
};

std::string colourOf(const std::string& given, int index)
{
    return given.empty() ? paletteColor(index).name().toStdString() : given;
}

QString num(double v) { return number(v); }

QString legendPos(LegendPlace p)
{
    switch (p) {
    case LegendPlace::UpperRight: return QStringLiteral("legend pos=north east");
    case LegendPlace::LowerRight: return QStringLiteral("legend pos=south east");
    case LegendPlace::UpperLeft: return QStringLiteral("legend pos=north west");
    case LegendPlace::OutsideRight: return QStringLiteral("legend pos=outer north east");
    case LegendPlace::None: break;
    }
    return QStringLiteral("legend style={draw=none}");
}

// The axis options every line panel has: size, labels, log modes, fixed ranges.
QString axisOptions(const FigureSpec& f, double widthIn, double heightIn)
{
    QStringList o;
    o << QStringLiteral("width=%1in, height=%2in").arg(widthIn).arg(heightIn);
    if (!f.title.empty())
        o << QStringLiteral("title={%1}, title style={align=center, font=\\small}")
                 .arg(texEscape(f.title, true));
    o << QStringLiteral("xlabel={%1}, ylabel={%2}").arg(texEscape(f.x.label), texEscape(f.y.label));
    for (auto [axis, def] : {std::pair{'x', &f.x}, {'y', &f.y}}) {
        if (def->log)
            o << QStringLiteral("%1mode=log").arg(axis);
        for (auto [bound, v] : {std::pair{"min", def->min}, {"max", def->max}})
            if (v && (!def->log || *v > 0))
                o << QStringLiteral("%1%2=%3").arg(axis).arg(bound).arg(num(*v));
    }
    o << QStringLiteral(
        "unbounded coords=jump, grid=major, grid style={gray!20}, legend cell align=left, "
        "legend style={font=\\footnotesize}, tick label style={font=\\footnotesize}");
    return o.join(QStringLiteral(",\n  "));
}

QString seriesData(const Series& s)
{
    const bool band =
        !s.bandLow.empty() && s.bandLow.size() == s.x.size() && s.bandHigh.size() == s.x.size();
    QString out = band ? QStringLiteral("x y band_low band_high\n") : QStringLiteral("x y\n");
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
        out += num(s.x[i]) + ' ' + num(s.y[i]);
        if (band)
            out += ' ' + num(s.bandLow[i]) + ' ' + num(s.bandHigh[i]);
        out += '\n';
    }
    return out;
}

// A band's outline: the upper edge forwards, the lower one back (a polygon TikZ fills).
QString bandOutline(const Series& s)
{
    QString up, down;
    for (size_t i = 0; i < s.x.size(); ++i)
        if (std::isfinite(s.bandLow[i]) && std::isfinite(s.bandHigh[i])) {
            up += num(s.x[i]) + ' ' + num(s.bandHigh[i]) + '\n';
            down.prepend(num(s.x[i]) + ' ' + num(s.bandLow[i]) + '\n');
        }
    return QStringLiteral("x y\n") + up + down;
}

}  // namespace

QString texDataRef(const QString& file)
{
    return QStringLiteral("{\\lengenFigureDir/%1}").arg(file);
}

namespace {
QString dataRef(const QString& file) { return texDataRef(file); }

// A coordinate inside the data's range on one axis, for the lines and spans drawn across the
// panel: they take one axis from the data and the other from `rel axis cs`, and pgfplots still
// transforms the dummy value, which far outside a narrow range (attention weights near 0.018)
// is a TeX "Dimension too large". A log axis needs it positive.
double anchorValue(const FigureSpec& f, bool yAxis)
{
    const auto& axis = yAxis ? f.y : f.x;
    if (axis.min && (!axis.log || *axis.min > 0))
        return *axis.min;
    for (const auto& s : f.series)
        for (const double v : yAxis ? s.y : s.x)
            if (std::isfinite(v) && (!axis.log || v > 0))
                return v;
    return 1;
}

// One line panel's \addplot commands and lines. `legend`: which names get an entry here
// (nullptr: every named series), so a grid lists each name once.
QString panelBody(const FigureSpec& f, const QString& stem, Palette& palette, TexFiles& out,
                  const std::set<std::string>* legend)
{
    QString body;
    const bool anyLegend = f.legend != LegendPlace::None;
    int index = 0;
    for (const auto& s : f.series) {
        const QString colour = palette(colourOf(s.color, index));
        const QString file = QStringLiteral("%1-%2.dat").arg(stem).arg(index++);
        out.data.push_back({file, seriesData(s)});
        if (!s.bandLow.empty() && s.bandLow.size() == s.x.size() &&
            s.bandHigh.size() == s.x.size()) {
            const QString bandFile = QStringLiteral("%1-%2-band.dat").arg(stem).arg(index - 1);
            out.data.push_back({bandFile, bandOutline(s)});
            body += QStringLiteral("\\addplot[draw=none, fill=%1, fill opacity=0.3, forget plot] "
                                   "table[x=x, y=y] %2;\n")
                        .arg(colour, dataRef(bandFile));
        }
        const bool listed =
            anyLegend && s.inLegend && !s.name.empty() && (!legend || legend->count(s.name));
        QStringList style{colour, QStringLiteral("line width=%1pt").arg(num(0.75 * s.width)),
                          s.points ? QStringLiteral("mark=*, mark size=1pt")
                                   : QStringLiteral("mark=none")};
        if (s.dashed)
            style << QStringLiteral("dashed");
        if (s.staircase)
            style << QStringLiteral("const plot");
        if (!listed)
            style << QStringLiteral("forget plot");
        body += QStringLiteral("\\addplot[%1] table[x=x, y=y] %2;\n")
                    .arg(style.join(QStringLiteral(", ")), dataRef(file));
        if (listed)
            body += QStringLiteral("\\addlegendentry{%1}\n").arg(texEscape(s.name));
    }
    const QString ay = num(anchorValue(f, true)), ax = num(anchorValue(f, false));
    for (const auto& sp : f.spans) {
        const QString colour = palette(colourOf(sp.color, 7));
        body += QStringLiteral("\\fill[%1, opacity=%2] ({axis cs:%3,%5}|-{rel axis cs:0,0}) "
                               "rectangle ({axis cs:%4,%5}|-{rel axis cs:0,1});\n")
                    .arg(colour, num(sp.alpha), num(sp.x0), num(sp.x1), ay);
    }
    for (const auto& h : f.hlines) {
        const QString colour = palette(colourOf(h.color, 7));
        const QString style = colour + (h.dashed ? QStringLiteral(", dashed") : QString()) +
                              QStringLiteral(", line width=1.1pt");
        body += QStringLiteral("\\draw[%1] ({rel axis cs:0,0}|-{axis cs:%3,%2}) -- ({rel axis "
                               "cs:1,0}|-{axis cs:%3,%2});\n")
                    .arg(style, num(h.y), ax);
        if (anyLegend && !h.label.empty() && (!legend || legend->count(h.label)))
            body += QStringLiteral("\\addlegendimage{%1}\n\\addlegendentry{%2}\n")
                        .arg(style, texEscape(h.label));
    }
    for (const auto& sp : f.spans)
        if (anyLegend && !sp.label.empty() && (!legend || legend->count(sp.label)))
            body += QStringLiteral("\\addlegendimage{area legend, draw=none, fill=%1, fill "
                                   "opacity=%2}\n\\addlegendentry{%3}\n")
                        .arg(palette(colourOf(sp.color, 7)), num(std::min(1.0, sp.alpha * 2)),
                             texEscape(sp.label));
    int labelled = 0;  // each further label a line lower, as on screen (figure_builder)
    for (const auto& v : f.vlines) {
        const QString colour = palette(colourOf(v.color, 7));
        const double pos = 1 - 0.06 * (v.label.empty() ? 0 : labelled++);
        body +=
            QStringLiteral("\\draw[%1, line width=1.1pt] ({axis cs:%2,%4}|-{rel axis cs:0,0}) "
                           "-- ({axis cs:%2,%4}|-{rel axis cs:0,1}) "
                           "node[pos=%5, anchor=north west, font=\\scriptsize, text=%1] {%3};\n")
                .arg(colour, num(v.x), texEscape(v.label), ay, num(pos));
    }
    for (const auto& m : f.markers)
        body += QStringLiteral("\\node[anchor=south, font=\\scriptsize\\bfseries, text=%1] at "
                               "(axis cs:%2,%3) {%4};\n")
                    .arg(palette(colourOf(m.color, 3)), num(m.x), num(m.y), texEscape(m.text));
    return body;
}

}  // namespace

QString texDocument(const QString& picture, const QString& definitions, double widthIn,
                    double heightIn, bool standalone, const QString& what)
{
    QString head =
        QStringLiteral("%% LenGen Studio: %1, as pgfplots code (docs/figures.md).\n").arg(what);
    if (!standalone)
        head += QStringLiteral(
            "%% Needs \\usepackage{pgfplots} (compat 1.18). Its data files lie beside it: when it "
            "is\n"
            "%% \\input from another folder, \\def\\lengenFigureDir{that/folder} first.\n");
    head += QStringLiteral("\\providecommand{\\lengenFigureDir}{.}\n") + definitions;
    if (!standalone)
        return head + picture;
    return QStringLiteral(
               "\\documentclass{article}\n"
               "\\usepackage[paperwidth=%1in, paperheight=%2in, margin=0.25in]{geometry}\n"
               "\\usepackage{pgfplots}\n\\pgfplotsset{compat=1.18}\n\\pagestyle{empty}\n")
               .arg(num(widthIn + 1.5))
               .arg(num(heightIn + 1.0)) +
           head + QStringLiteral("\\begin{document}\n\\noindent\n") + picture +
           QStringLiteral("\\end{document}\n");
}

namespace {
QString document(const QString& picture, const Palette& palette, double widthIn, double heightIn,
                 bool standalone, const QString& what)
{
    return texDocument(picture, palette.definitions(), widthIn, heightIn, standalone, what);
}
}  // namespace

QString texEscape(const std::string& text, bool lineBreaks)
{
    static const std::map<uint, QString> symbols = {{0x00D7, "$\\times$"},
                                                    {0x039B, "$\\Lambda$"},
                                                    {0x03BB, "$\\lambda$"},
                                                    {0x2264, "$\\leq$"},
                                                    {0x2265, "$\\geq$"},
                                                    {0x00B1, "$\\pm$"},
                                                    {0x03B8, "$\\theta$"},
                                                    {0x2014, "---"},
                                                    {0x2013, "--"},
                                                    {0x00B7, "$\\cdot$"},
                                                    {0x00F7, "$\\div$"},
                                                    {0x03B1, "$\\alpha$"},
                                                    {0x03B2, "$\\beta$"},
                                                    {0x0394, "$\\Delta$"},
                                                    {0x03B4, "$\\delta$"},
                                                    {0x03B5, "$\\epsilon$"},
                                                    {0x03C3, "$\\sigma$"},
                                                    {0x03BC, "$\\mu$"},
                                                    {0x2192, "$\\rightarrow$"},
                                                    {0x2026, "\\ldots{}"},
                                                    {0x2212, "$-$"},
                                                    {0x2248, "$\\approx$"},
                                                    {0x221E, "$\\infty$"},
                                                    {0x00B2, "$^2$"},
                                                    {0x2032, "'"}};
    QString out;
    for (const uint c : QString::fromStdString(text).toUcs4()) {
        switch (c) {
        case '\\': out += QStringLiteral("\\textbackslash{}"); continue;
        case '&':
        case '%':
        case '$':
        case '#':
        case '_':
        case '{':
        case '}': out += '\\' + QChar(c); continue;
        case '~': out += QStringLiteral("\\textasciitilde{}"); continue;
        case '^': out += QStringLiteral("\\textasciicircum{}"); continue;
        case '\n': out += lineBreaks ? QStringLiteral("\\\\") : QStringLiteral(" "); continue;
        default: break;
        }
        if (c < 128)
            out += QChar(c);
        else if (const auto it = symbols.find(c); it != symbols.end())
            out += it->second;
        else
            out += '?';
    }
    return out;
}

TexFiles figureTex(const FigureSpec& spec, const QString& stem, bool standalone)
{
    TexFiles out;
    Palette palette;
    const QString body = panelBody(spec, stem, palette, out, nullptr);
    QString picture =
        QStringLiteral("\\begin{tikzpicture}\n\\begin{axis}[\n  %1,\n  %2]\n")
            .arg(axisOptions(spec, spec.widthInches, spec.heightInches), legendPos(spec.legend));
    picture += body + QStringLiteral("\\end{axis}\n\\end{tikzpicture}\n");
    out.tex = document(picture, palette, spec.widthInches, spec.heightInches, standalone,
                       QStringLiteral("a figure"));
    return out;
}

TexFiles gridTex(const GridSpec& grid, const QString& stem, bool standalone)
{
    TexFiles out;
    Palette palette;
    const int columns = std::max(1, std::min(grid.columns, int(grid.panels.size())));
    const int rows = (int(grid.panels.size()) + columns - 1) / columns;
    const double w = grid.widthInches / columns, h = grid.heightInches / std::max(1, rows);
    // One legend, beside the last panel: every name once, in the colour every panel gives it.
    std::map<std::string, std::string> colours;
    std::set<std::string> listed;
    QString picture = QStringLiteral("\\begin{tikzpicture}\n");
    if (!grid.title.empty())
        picture += QStringLiteral("\\node[anchor=south, font=\\small] at (%1in, 0.3in) {%2};\n")
                       .arg(num(grid.widthInches / 2 - 0.5), texEscape(grid.title));
    for (size_t i = 0; i < grid.panels.size(); ++i) {
        FigureSpec f = grid.panels[i];
        for (auto& s : f.series)
            if (s.color.empty())
                s.color =
                    colours
                        .try_emplace(s.name, paletteColor(int(colours.size())).name().toStdString())
                        .first->second;
        const bool last = i + 1 == grid.panels.size();
        std::set<std::string> names;
        if (last)  // every name of every panel, listed here
            for (const auto& p : grid.panels) {
                for (const auto& s : p.series)
                    if (s.inLegend && !s.name.empty())
                        names.insert(s.name);
                for (const auto& hl : p.hlines)
                    names.insert(hl.label);
            }
        FigureSpec shown = f;
        shown.legend = last ? LegendPlace::OutsideRight : LegendPlace::None;
        QString body =
            panelBody(shown, QStringLiteral("%1-p%2").arg(stem).arg(i), palette, out, &names);
        if (last)  // names only earlier panels hold: a sample line in their colour
            for (const auto& p : grid.panels)
                for (const auto& s : p.series)
                    if (s.inLegend && !s.name.empty() && listed.insert(s.name).second) {
                        bool here = false;
                        for (const auto& own : f.series)
                            here = here || own.name == s.name;
                        if (!here)
                            body += QStringLiteral("\\addlegendimage{%1, line "
                                                   "width=%2pt%3}\n\\addlegendentry{%4}\n")
                                        .arg(palette(colourOf(
                                            s.color.empty() ? colours[s.name] : s.color, 0)))
                                        .arg(num(0.75 * s.width),
                                             s.dashed ? QStringLiteral(", dashed") : QString(),
                                             texEscape(s.name));
                    }
        const double x = double(int(i) % columns) * (w + 0.3),
                     y = -double(int(i) / columns) * (h + 0.3);
        picture +=
            QStringLiteral("\\begin{axis}[\n  at={(%1in,%2in)}, anchor=north west,\n  %3,\n  %4]\n")
                .arg(num(x), num(y), axisOptions(f, w, h), legendPos(shown.legend));
        picture += body + QStringLiteral("\\end{axis}\n");
    }
    picture += QStringLiteral("\\end{tikzpicture}\n");
    out.tex = document(picture, palette, grid.widthInches + 2.5, grid.heightInches, standalone,
                       QStringLiteral("a grid of figures"));
    return out;
}

TexFiles heatmapTex(const HeatmapSpec& h, const QString& stem, bool standalone)
{
    TexFiles out;
    Palette palette;
    const QString file = stem + QStringLiteral("-cells.dat");
    // Every cell, masked ones as nan (pgfplots leaves them blank); the colour is log10 of the
    // value on a log scale, so the colour bar reads in powers of ten.
    QString data = QStringLiteral("col row value meta\n");
    double lo = INFINITY, hi = -INFINITY;
    for (int r = 0; r < h.rows; ++r)
        for (int c = 0; c < h.cols; ++c) {
            const size_t at = size_t(r) * size_t(h.cols) + size_t(c);
            const double v = at < h.values.size() ? double(h.values[at]) : NAN;
            const bool shown = std::isfinite(v) && (!h.logScale || v > 0);
            const double meta = !shown ? NAN : h.logScale ? std::log10(v) : v;
            if (shown) {
                lo = std::min(lo, meta);
                hi = std::max(hi, meta);
            }
            data += QString::number(h.firstCol + c) + ' ' + QString::number(h.firstRow + r) + ' ' +
                    number(h.values.size() > at ? h.values[at] : NAN) + ' ' + num(meta) + '\n';
        }
    out.data.push_back({file, data});
    const auto scaled = [&](double v) { return h.logScale ? std::log10(v) : v; };
    if (h.zMin && (!h.logScale || *h.zMin > 0))
        lo = scaled(*h.zMin);
    if (h.zMax && (!h.logScale || *h.zMax > 0))
        hi = scaled(*h.zMax);
    if (!std::isfinite(lo) || !std::isfinite(hi)) {  // no cell shown: any finite range compiles
        lo = 0;
        hi = 1;
    }
    if (!(lo < hi))
        hi = lo + 1;
    QStringList o;
    o << QStringLiteral("width=%1in, height=%2in")
             .arg(num(h.widthInches - 1))
             .arg(num(h.heightInches - 0.5));
    if (!h.title.empty())
        o << QStringLiteral("title={%1}, title style={align=center, font=\\small}")
                 .arg(texEscape(h.title, true));
    o << QStringLiteral("xlabel={%1}, ylabel={%2}").arg(texEscape(h.xLabel), texEscape(h.yLabel));
    o << QStringLiteral(
        "enlargelimits=false, axis on top, y dir=reverse, colormap/viridis, colorbar");
    o << QStringLiteral("point meta min=%1, point meta max=%2").arg(num(lo), num(hi));
    o << QStringLiteral("colorbar style={ylabel={%1}%2}")
             .arg(texEscape(h.colorLabel),
                  h.logScale ? QStringLiteral(", yticklabel={$10^{\\pgfmathprintnumber{\\tick}}$}")
                             : QString());
    o << QStringLiteral("tick label style={font=\\footnotesize}");
    QString picture = QStringLiteral("\\begin{tikzpicture}\n\\begin{axis}[\n  %1]\n")
                          .arg(o.join(QStringLiteral(",\n  ")));
    picture +=
        QStringLiteral("\\addplot[matrix plot*, mesh/cols=%1, mesh/rows=%2, point meta=explicit] "
                       "table[x=col, y=row, meta=meta] %3;\n")
            .arg(h.cols)
            .arg(h.rows)
            .arg(dataRef(file));
    if (h.boundary) {
        const QString red = palette("#B00020");
        const QString b = num(*h.boundary - 0.5);
        picture += QStringLiteral(
                       "\\draw[%1, dashed, line width=1pt] ({axis cs:%2,0}|-{rel axis cs:0,0}) -- "
                       "({axis cs:%2,0}|-{rel axis cs:0,1}) node[pos=0, anchor=south west, "
                       "font=\\scriptsize, text=%1] {%3};\n"
                       "\\draw[%1, dashed, line width=1pt] ({rel axis cs:0,0}|-{axis cs:0,%2}) -- "
                       "({rel axis cs:1,0}|-{axis cs:0,%2});\n")
                       .arg(red, b, texEscape(h.boundaryLabel));
    }
    picture += QStringLiteral("\\end{axis}\n\\end{tikzpicture}\n");
    out.tex = document(picture, palette, h.widthInches, h.heightInches, standalone,
                       QStringLiteral("a heatmap"));
    return out;
}

ExportResult writeTex(const QString& path, const std::function<TexFiles(const QString& stem)>& make)
{
    const QFileInfo target(path);
    const TexFiles files = make(target.completeBaseName());
    for (const auto& [name, text] : files.data) {
        const auto r = files::atomically(target.dir().filePath(name), [&](const QString& f) {
            return files::writeText(f, text);
        });
        if (!r.ok)
            return r;
    }
    return files::atomically(path,
                             [&](const QString& f) { return files::writeText(f, files.tex); });
}

}  // namespace lengen::plots
