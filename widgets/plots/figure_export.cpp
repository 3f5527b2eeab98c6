#include "figure_export.h"

#include "qcp.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QSvgGenerator>

#include <cmath>

#include "figure_builder.h"

namespace lengen::plots {

namespace {

constexpr double kPointsPerInch = 72.0;

QString number(double v) { return std::isfinite(v) ? QString::number(v, 'g', 17) : QString(); }  // round-trips

QString csvField(const std::string& s)
{
    QString q = QString::fromStdString(s);
    if (q.contains(',') || q.contains('"') || q.contains('\n'))
        q = '"' + q.replace('"', "\"\"") + '"';
    return q;
}

ExportResult writeText(const QString& path, const QString& text)
{
    QSaveFile f(path);  // writes a temporary file and renames it on commit
    if (!f.open(QIODevice::WriteOnly | QIODevice::Text))
        return {false, QStringLiteral("cannot write %1: %2").arg(path, f.errorString())};
    f.write(text.toUtf8());
    if (!f.commit())
        return {false, QStringLiteral("cannot write %1: %2").arg(path, f.errorString())};
    return {true, {}};
}

// Graphics formats go through `<path>.partial` and a rename, so a failed export leaves
// nothing behind and an existing file is replaced only by a complete one.
template <typename Save>
ExportResult atomically(const QString& path, Save save)
{
    const QString partial = path + QStringLiteral(".partial");
    const QFileInfo dir(QFileInfo(path).absolutePath());
    if (!dir.isDir() || !dir.isWritable())
        return {false, QStringLiteral("cannot write %1: folder missing or read-only").arg(path)};
    if (!save(partial) || !QFileInfo(partial).exists() || QFileInfo(partial).size() == 0) {
        QFile::remove(partial);
        return {false, QStringLiteral("cannot write %1").arg(path)};
    }
    QFile::remove(path);
    if (!QFile::rename(partial, path)) {
        QFile::remove(partial);
        return {false, QStringLiteral("cannot replace %1").arg(path)};
    }
    return {true, {}};
}

}  // namespace

std::optional<Format> formatFromName(const std::string& name)
{
    const QString n = QString::fromStdString(name).toLower();
    if (n == "png")
        return Format::Png;
    if (n == "svg")
        return Format::Svg;
    if (n == "pdf")
        return Format::Pdf;
    if (n == "csv")
        return Format::Csv;
    return std::nullopt;
}

std::optional<Format> formatFromPath(const QString& path)
{
    return formatFromName(QFileInfo(path).suffix().toStdString());
}

ExportResult savePlot(QCustomPlot& plot, const QString& path, Format format, double widthInches,
                      double heightInches, int dpi, const QString& title)
{
    // Lay out at 96 logical dpi and scale the raster: fonts keep their size relative to the
    // figure whatever the dpi.
    const int w = static_cast<int>(std::lround(widthInches * 96)),
              h = static_cast<int>(std::lround(heightInches * 96));
    plot.resize(w, h);
    plot.replot(QCustomPlot::rpImmediateRefresh);
    switch (format) {
    case Format::Png:
        return atomically(path, [&](const QString& p) {
            return plot.savePng(p, w, h, dpi / 96.0, -1, dpi, QCP::ruDotsPerInch);
        });
    case Format::Pdf:
        return atomically(path, [&](const QString& p) {
            return plot.savePdf(p, w, h, QCP::epNoCosmetic, QStringLiteral("LenGen Studio"), title);
        });
    case Format::Svg:
        return atomically(path, [&](const QString& p) {
            QSvgGenerator svg;
            svg.setFileName(p);
            svg.setSize(QSize(w, h));
            svg.setViewBox(QRect(0, 0, w, h));
            svg.setResolution(96);
            svg.setTitle(title);
            svg.setDescription(QStringLiteral("LenGen Studio figure"));
            QCPPainter painter;
            if (!painter.begin(&svg))
                return false;
            plot.toPainter(&painter, w, h);
            return painter.end();
        });
    case Format::Csv:
        break;
    }
    return {false, QStringLiteral("CSV needs the figure's data, not a plot: %1").arg(path)};
}

QString figureCsv(const FigureSpec& spec)
{
    QString out = QStringLiteral("series,x,y,band_low,band_high\n");
    for (const auto& s : spec.series) {
        const bool band = s.bandLow.size() == s.x.size() && s.bandHigh.size() == s.x.size();
        for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
            out += csvField(s.name) + ',' + number(s.x[i]) + ',' + number(s.y[i]) + ',' +
                   (band ? number(s.bandLow[i]) + ',' + number(s.bandHigh[i]) : QStringLiteral(",")) +
                   '\n';
    }
    return out;
}

QString heatmapCsv(const HeatmapSpec& spec)
{
    QString out = QStringLiteral("row,col,value\n");
    for (int r = 0; r < spec.rows; ++r)
        for (int c = 0; c < spec.cols; ++c) {
            const double v = spec.values[static_cast<size_t>(r) * spec.cols + c];
            if (std::isfinite(v))
                out += QString::number(spec.firstRow + r) + ',' + QString::number(spec.firstCol + c) +
                       ',' + number(v) + '\n';
        }
    return out;
}

ExportResult exportFigure(const FigureSpec& spec, const QString& path, Format format, int dpi)
{
    if (format == Format::Csv)
        return writeText(path, figureCsv(spec));
    QCustomPlot plot;
    buildFigure(plot, spec);
    return savePlot(plot, path, format, spec.widthInches, spec.heightInches, dpi,
                    QString::fromStdString(spec.title));
}

ExportResult exportHeatmap(const HeatmapSpec& spec, const QString& path, Format format, int dpi)
{
    if (format == Format::Csv)
        return writeText(path, heatmapCsv(spec));
    QCustomPlot plot;
    buildHeatmap(plot, spec);
    return savePlot(plot, path, format, spec.widthInches, spec.heightInches, dpi,
                    QString::fromStdString(spec.title));
}

}  // namespace lengen::plots
