#include "figure_export.h"

#include "export_files.h"
#include "figure_builder.h"
#include "figure_tex.h"
#include "qcp.h"
#include "vector_clip.h"

#include <QFile>
#include <QFileInfo>
#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace lengen::plots {

using files::atomically;
using files::csvField;
using files::failure;
using files::number;
using files::writeText;

namespace {

QString writePdf(QCustomPlot& plot, const QString& file, int w, int h, double widthInches,
                 double heightInches, const QString& title)
{
    QPdfWriter pdf(file);
    if (const QString why = files::setUpPdf(pdf, widthInches, heightInches, title); !why.isEmpty())
        return why;
    QCPPainter painter;
    if (!painter.begin(&pdf))
        return QStringLiteral("cannot open the file");
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNonCosmetic);  // hairlines stay visible when zoomed
    plot.toPainter(&painter, w, h);
    return painter.end() ? QString() : QStringLiteral("PDF output failed");
}

QString writeSvg(QCustomPlot& plot, const QString& file, int w, int h, const QString& title)
{
    QSvgGenerator svg;
    files::setUpSvg(svg, file, w, h, title);
    QCPPainter painter;
    if (!painter.begin(&svg))
        return QStringLiteral("cannot open the file");
    painter.setMode(QCPPainter::pmVectorized);
    plot.toPainter(&painter, w, h);
    return painter.end() ? QString() : QStringLiteral("SVG output failed");
}

}  // namespace

std::optional<Format> formatFromName(const std::string& name)
{
    const QString n = QString::fromStdString(name).toLower();
    if (n == QLatin1String("png"))
        return Format::Png;
    if (n == QLatin1String("svg"))
        return Format::Svg;
    if (n == QLatin1String("pdf"))
        return Format::Pdf;
    if (n == QLatin1String("csv"))
        return Format::Csv;
    if (n == QLatin1String("tex"))
        return Format::Tex;
    return std::nullopt;
}

std::optional<Format> formatFromPath(const QString& path)
{
    return formatFromName(QFileInfo(path).suffix().toStdString());
}

ExportResult savePlot(QCustomPlot& plot, const QString& path, Format format, double widthInches,
                      double heightInches, int dpi, const QString& title)
{
    if (format == Format::Csv || format == Format::Tex)
        return {false,
                failure(path, QStringLiteral("CSV and TeX need the figure's data, not a plot"))};
    if (dpi <= 0 || !(widthInches > 0) || !(heightInches > 0))
        return {false, failure(path, QStringLiteral("size and dpi must be positive"))};
    const int w = static_cast<int>(std::lround(widthInches * files::kLayoutDpi));
    const int h = static_cast<int>(std::lround(heightInches * files::kLayoutDpi));
    plot.resize(w, h);  // lays the plot out at the page size, even when it is never shown
    plot.replot(QCustomPlot::rpImmediateRefresh);
    return atomically(path, [&](const QString& file) -> QString {
        switch (format) {
        case Format::Png:  // w * dpi / 96 = widthInches * dpi pixels (to rounding)
            return plot.savePng(file, w, h, dpi / files::kLayoutDpi, -1, dpi, QCP::ruDotsPerInch)
                       ? QString()
                       : QStringLiteral("PNG output failed");
        case Format::Pdf: return writePdf(plot, file, w, h, widthInches, heightInches, title);
        case Format::Svg: {
            const VectorClip clip(plot);  // SVG keeps no clip rects: cut the geometry instead
            return writeSvg(plot, file, w, h, title);
        }
        case Format::Csv:
        case Format::Tex: break;
        }
        return QStringLiteral("unknown format");
    });
}

QString figureCsv(const FigureSpec& spec)
{
    QString out = QStringLiteral("series,x,y,band_low,band_high\n");
    for (const auto& s : spec.series) {
        const QString name = csvField(s.name);
        const bool band =
            !s.bandLow.empty() && s.bandLow.size() == s.x.size() && s.bandHigh.size() == s.x.size();
        for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            out += name + ',' + number(s.x[i]) + ',' + number(s.y[i]) + ',';
            if (band)
                out += number(s.bandLow[i]) + ',' + number(s.bandHigh[i]);
            else
                out += ',';
            out += '\n';
        }
    }
    // A labelled horizontal line (the zero estimator) is a drawn curve too (issue 41, defect
    // 10): one row per x of the longest series, so it lines up with the curves' rows.
    const Series* longest = nullptr;
    for (const auto& s : spec.series)
        if (!longest || s.x.size() > longest->x.size())
            longest = &s;
    for (const auto& h : spec.hlines) {
        if (h.label.empty() || !longest)
            continue;
        for (const double x : longest->x)
            out += csvField(h.label) + ',' + number(x) + ',' + number(h.y) + ",,\n";
    }
    return out;
}

QString gridCsv(const GridSpec& spec)
{
    QString out = QStringLiteral("panel,series,x,y,band_low,band_high\n");
    for (const auto& panel : spec.panels) {
        const QString csv = figureCsv(panel);
        const QString prefix = csvField(panel.title) + ',';
        for (const auto& line : csv.mid(csv.indexOf('\n') + 1).split('\n', Qt::SkipEmptyParts))
            out += prefix + line + '\n';
    }
    return out;
}

QString heatmapCsv(const HeatmapSpec& spec)
{
    QString out = QStringLiteral("row,col,value\n");
    for (int r = 0; r < spec.rows; ++r)
        for (int c = 0; c < spec.cols; ++c) {
            const size_t at =
                static_cast<size_t>(r) * static_cast<size_t>(spec.cols) + static_cast<size_t>(c);
            if (at >= spec.values.size() || !std::isfinite(spec.values[at]))
                continue;  // masked cells are not drawn, so they are not data either
            out += QString::number(spec.firstRow + r) + ',' + QString::number(spec.firstCol + c) +
                   ',' + number(spec.values[at]) + '\n';
        }
    return out;
}

ExportResult exportFigure(const FigureSpec& spec, const QString& path, Format format, int dpi,
                          bool texStandalone)
{
    if (format == Format::Tex)
        return writeTex(path,
                        [&](const QString& stem) { return figureTex(spec, stem, texStandalone); });
    if (format == Format::Csv)
        return atomically(path,
                          [&](const QString& file) { return writeText(file, figureCsv(spec)); });
    QCustomPlot plot;
    buildFigure(plot, spec);
    // A legend beside the data widens the page by its own width: within the figure's width it
    // squeezed the plot to a sliver (Compare's long group names, found under Xvfb).
    double width = spec.widthInches;
    if (spec.legend == LegendPlace::OutsideRight && plot.legend->visible())
        width += plot.legend->minimumOuterSizeHint().width() / files::kLayoutDpi;
    return savePlot(plot, path, format, width, spec.heightInches, dpi,
                    QString::fromStdString(spec.title));
}

ExportResult exportHeatmap(const HeatmapSpec& spec, const QString& path, Format format, int dpi,
                           bool texStandalone)
{
    if (format == Format::Tex)
        return writeTex(path,
                        [&](const QString& stem) { return heatmapTex(spec, stem, texStandalone); });
    if (format == Format::Csv)
        return atomically(path,
                          [&](const QString& file) { return writeText(file, heatmapCsv(spec)); });
    QCustomPlot plot;
    buildHeatmap(plot, spec);
    return savePlot(plot, path, format, spec.widthInches, spec.heightInches, dpi,
                    QString::fromStdString(spec.title));
}

ExportResult exportGrid(const GridSpec& spec, const QString& path, Format format, int dpi,
                        bool texStandalone)
{
    if (format == Format::Tex)
        return writeTex(path,
                        [&](const QString& stem) { return gridTex(spec, stem, texStandalone); });
    if (format == Format::Csv)
        return atomically(path,
                          [&](const QString& file) { return writeText(file, gridCsv(spec)); });
    QCustomPlot plot;
    buildGrid(plot, spec);
    return savePlot(plot, path, format, spec.widthInches, spec.heightInches, dpi,
                    QString::fromStdString(spec.title));
}

}  // namespace lengen::plots
