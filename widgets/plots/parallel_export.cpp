// Parallel coordinates to files: PNG, SVG and PDF through paintParallel (what the studio shows),
// CSV (the rows and whether each lies inside the brushes), TeX (pgfplots: a data file per
// colour step, the axes and their ticks as nodes).

#include <QImage>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>

#include <array>
#include <cmath>

#include "export_files.h"
#include "figure_builder.h"
#include "figure_tex.h"
#include "parallel_coords.h"

namespace lengen::plots {

namespace {

constexpr int kTexBins = 8;  // colour steps in TeX (a \addplot each)

QString cellText(const ParallelAxis& axis, double v)
{
    if (!std::isfinite(v))
        return {};
    if (axis.categorical) {
        const auto i = static_cast<size_t>(std::lround(v));
        return i < axis.categories.size() ? files::csvField(axis.categories[i]) : QString();
    }
    return files::number(v);
}

QString paintInto(QPaintDevice& device, const ParallelSpec& spec, double scale, double w, double h)
{
    QPainter p;
    if (!p.begin(&device))
        return QStringLiteral("cannot open the file");
    p.scale(scale, scale);
    paintParallel(p, QRectF(0, 0, w, h), spec, rowsInside(spec));
    return p.end() ? QString() : QStringLiteral("output failed");
}

QString writeImage(const ParallelSpec& spec, const QString& file, Format format, int dpi)
{
    const double w = spec.widthInches * files::kLayoutDpi,
                 h = spec.heightInches * files::kLayoutDpi;
    if (format == Format::Png) {
        const double scale = dpi / files::kLayoutDpi;
        QImage image(int(std::lround(w * scale)), int(std::lround(h * scale)),
                     QImage::Format_ARGB32_Premultiplied);
        image.setDotsPerMeterX(int(std::lround(files::kLayoutDpi / 0.0254)));  // points as laid out
        image.setDotsPerMeterY(image.dotsPerMeterX());
        image.fill(Qt::white);
        const QString why = paintInto(image, spec, scale, w, h);
        return !why.isEmpty()            ? why
               : image.save(file, "PNG") ? QString()
                                         : QStringLiteral("PNG output failed");
    }
    if (format == Format::Svg) {
        QSvgGenerator svg;
        files::setUpSvg(svg, file, int(w), int(h), QString::fromStdString(spec.title));
        return paintInto(svg, spec, 1, w, h);
    }
    QPdfWriter pdf(file);
    const QString why = files::setUpPdf(pdf, spec.widthInches, spec.heightInches,
                                        QString::fromStdString(spec.title));
    if (!why.isEmpty())
        return why;
    return paintInto(pdf, spec, 1, w, h);
}

// Each axis: its line, its name over it (a result on two lines at its '@', as on screen), the
// categories or its two ends beside it.
QString texAxes(const ParallelSpec& s)
{
    QString out;
    for (int a = 0; a < int(s.axes.size()); ++a) {
        const auto& axis = s.axes[size_t(a)];
        const std::string label = axisLabel(s, a);
        const auto at = label.rfind('@');
        const QString name = at != std::string::npos && at > 0
                                 ? texEscape(label.substr(0, at)) + QStringLiteral("\\\\") +
                                       texEscape(label.substr(at))
                                 : texEscape(label);
        out +=
            QStringLiteral("\\draw[black] (axis cs:%1,0) -- (axis cs:%1,1);\n"
                           "\\node[anchor=south, font=\\footnotesize\\bfseries, align=center] at "
                           "(axis cs:%1,1) {%2};\n")
                .arg(a)
                .arg(name);
        std::vector<std::pair<double, std::string>> ticks;
        if (axis.categorical)
            for (size_t c = 0; c < axis.categories.size(); ++c)
                ticks.push_back({double(c), axis.categories[c]});
        else {
            const auto texts = parallelTickTexts({axis.min, axis.max});
            ticks.push_back({axis.min, texts[0].toStdString()});
            ticks.push_back({axis.max, texts[1].toStdString()});
        }
        for (const auto& [v, text] : ticks)
            out += QStringLiteral("\\node[anchor=east, font=\\scriptsize, fill=white, "
                                  "fill opacity=0.7, text opacity=1, inner sep=1pt] at "
                                  "(axis cs:%1,%2) {%3};\n")
                       .arg(a)
                       .arg(files::number(axisFraction(axis, v)), texEscape(text));
    }
    return out;
}

// The brushes as boxes on their axes, and the colour scale right of the last axis: one box per
// colour step (the steps the rows are drawn in), the column's ends and its name.
QString texBrushesAndScale(const ParallelSpec& s)
{
    QString out;
    for (const auto& b : s.brushes) {
        if (b.axis < 0 || b.axis >= int(s.axes.size()))
            continue;
        const auto& axis = s.axes[size_t(b.axis)];
        const double lo = std::clamp(axisFraction(axis, b.low), 0.0, 1.0);
        const double hi = std::clamp(axisFraction(axis, b.high), 0.0, 1.0);
        out += QStringLiteral("\\filldraw[draw=black, fill=lengenBrush, fill opacity=0.45] "
                              "(axis cs:%1,%2) rectangle (axis cs:%3,%4);\n")
                   .arg(files::number(b.axis - 0.035), files::number(lo),
                        files::number(b.axis + 0.035), files::number(hi));
    }
    if (s.colorAxis < 0 || s.colorAxis >= int(s.axes.size()))
        return out;
    const auto& axis = s.axes[size_t(s.colorAxis)];
    const double x0 = double(s.axes.size() - 1) + 0.3, x1 = x0 + 0.07;
    if (axis.categorical) {  // a swatch and a name per category, top down
        for (size_t i = 0; i < axis.categories.size() && i < size_t(kTexBins); ++i) {
            const double y = 1 - 0.08 * double(i);
            out +=
                QStringLiteral("\\fill[lengenV%1] (axis cs:%2,%3) rectangle (axis cs:%4,%5);\n"
                               "\\node[anchor=west, font=\\scriptsize] at (axis cs:%4,%6) "
                               "{%7};\n")
                    .arg(i)
                    .arg(files::number(x0), files::number(y - 0.05), files::number(x1),
                         files::number(y), files::number(y - 0.025), texEscape(axis.categories[i]));
        }
        return out;
    }
    for (int b = 0; b < kTexBins; ++b)
        out += QStringLiteral("\\fill[lengenV%1] (axis cs:%2,%3) rectangle (axis cs:%4,%5);\n")
                   .arg(b)
                   .arg(files::number(x0), files::number(double(b) / kTexBins), files::number(x1),
                        files::number(double(b + 1) / kTexBins));
    out += QStringLiteral("\\node[anchor=west, font=\\scriptsize] at (axis cs:%1,1) {%2};\n"
                          "\\node[anchor=west, font=\\scriptsize] at (axis cs:%1,0) {%3};\n"
                          "\\node[rotate=90, anchor=south, font=\\scriptsize] at (axis cs:%4,0.5) "
                          "{%5};\n")
               .arg(files::number(x1), parallelTickTexts({axis.max, axis.min})[0],
                    parallelTickTexts({axis.max, axis.min})[1], files::number(x0),
                    texEscape(axisLabel(s, s.colorAxis)));
    return out;
}

// The picture: an axis from 0 to k-1 (one unit between axes) by 0 to 1 with nothing of its own
// drawn; the rows as polylines broken by "nan nan" rows (unbounded coords=jump), outside the
// brushes in grey first; each axis a line with its name and tick labels as nodes.
TexFiles parallelTex(const ParallelSpec& s, const QString& stem, bool standalone)
{
    TexFiles out;
    const auto inside = rowsInside(s);
    const int n = s.rows(), k = int(s.axes.size());
    std::array<QString, kTexBins + 2> data;  // colour steps, one colour, outside
    const bool categoricalColor =
        s.colorAxis >= 0 && s.colorAxis < k && s.axes[size_t(s.colorAxis)].categorical;
    for (int r = 0; r < n; ++r) {
        size_t bin = kTexBins + 1;
        if (inside[size_t(r)]) {
            bin = kTexBins;
            if (s.colorAxis >= 0) {  // a category: its palette colour, cycled as on screen
                const auto& axis = s.axes[size_t(s.colorAxis)];
                const double v = s.value(r, s.colorAxis);
                const double c = axis.categorical ? std::round(v) : axisFraction(axis, v);
                if (std::isfinite(c))
                    bin = size_t(axis.categorical ? int(c) % kTexBins
                                                  : std::clamp(int(c * kTexBins), 0, kTexBins - 1));
            }
        }
        for (int a = 0; a < k; ++a) {
            const double f = axisFraction(s.axes[size_t(a)], s.value(r, a));
            data[bin] += QString::number(a) + ' ' + files::number(f) + '\n';
        }
        data[bin] += QStringLiteral("nan nan\n");
    }
    QString defs = QStringLiteral("\\definecolor{lengenOut}{HTML}{C4C4CC}\n"
                                  "\\definecolor{lengenOne}{HTML}{4C72B0}\n"
                                  "\\definecolor{lengenBrush}{HTML}{DD8452}\n");
    for (int b = 0; b < kTexBins; ++b)
        defs +=
            QStringLiteral("\\definecolor{lengenV%1}{HTML}{%2}\n")
                .arg(b)
                .arg((categoricalColor ? paletteColor(b).name() : scaleColor((b + 0.5) / kTexBins))
                         .mid(1)
                         .toUpper());
    const double opacity = std::clamp(600.0 / std::max(n, 1), 0.12, 1.0);
    QString picture =
        QStringLiteral("\\begin{tikzpicture}\n\\begin{axis}[width=%1in, height=%2in, "
                       "xmin=-0.15, xmax=%3, ymin=0, ymax=1, hide axis, clip=false, "
                       "unbounded coords=jump%4]\n")
            .arg(files::number(s.widthInches - 1.2), files::number(s.heightInches - 0.6),
                 files::number(std::max(k - 1, 1) + (s.colorAxis >= 0 ? 0.6 : 0.15)),
                 s.title.empty() ? QString()
                                 : QStringLiteral(", title={%1}, title style={yshift=2.4em}")
                                       .arg(texEscape(s.title, true)));
    const std::array<const char*, 2> fixed = {"lengenOne", "lengenOut"};
    for (size_t bin : {size_t(kTexBins + 1), size_t(kTexBins)}) {
        if (data[bin].isEmpty())
            continue;
        const QString file =
            stem + (bin == kTexBins ? QStringLiteral("-rows.dat") : QStringLiteral("-outside.dat"));
        out.data.push_back({file, QStringLiteral("x y\n") + data[bin]});
        picture += QStringLiteral("\\addplot[no markers, color=%1, opacity=%2] table %3;\n")
                       .arg(fixed[bin - kTexBins], files::number(opacity), texDataRef(file));
    }
    for (int b = 0; b < kTexBins; ++b) {
        if (data[size_t(b)].isEmpty())
            continue;
        const QString file = stem + QStringLiteral("-color%1.dat").arg(b);
        out.data.push_back({file, QStringLiteral("x y\n") + data[size_t(b)]});
        picture += QStringLiteral("\\addplot[no markers, color=lengenV%1, opacity=%2] table %3;\n")
                       .arg(b)
                       .arg(files::number(opacity), texDataRef(file));
    }
    picture += texAxes(s) + texBrushesAndScale(s);
    picture += QStringLiteral("\\end{axis}\n\\end{tikzpicture}\n");
    out.tex = texDocument(picture, defs, s.widthInches, s.heightInches, standalone,
                          QStringLiteral("parallel coordinates"));
    return out;
}

}  // namespace

QString parallelCsv(const ParallelSpec& spec)
{
    QString out = files::csvField(spec.rowHeader);
    for (const auto& a : spec.axes)
        out += ',' + files::csvField(a.name);
    out += QStringLiteral(",inside\n");
    const auto inside = rowsInside(spec);
    for (int r = 0; r < spec.rows(); ++r) {
        out += size_t(r) < spec.rowNames.size() ? files::csvField(spec.rowNames[size_t(r)])
                                                : QString::number(r);
        for (size_t a = 0; a < spec.axes.size(); ++a)
            out += ',' + cellText(spec.axes[a], spec.value(r, int(a)));
        out += inside[size_t(r)] ? QStringLiteral(",1\n") : QStringLiteral(",0\n");
    }
    return out;
}

ExportResult exportParallel(const ParallelSpec& spec, const QString& path, Format format, int dpi,
                            bool texStandalone)
{
    switch (format) {
    case Format::Csv:
        return files::atomically(
            path, [&](const QString& f) { return files::writeText(f, parallelCsv(spec)); });
    case Format::Tex:
        return writeTex(
            path, [&](const QString& stem) { return parallelTex(spec, stem, texStandalone); });
    default:
        return files::atomically(
            path, [&](const QString& f) { return writeImage(spec, f, format, dpi); });
    }
}

}  // namespace lengen::plots
