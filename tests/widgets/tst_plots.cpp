// Figure building and export: every format writes a valid file atomically, CSV holds exactly
// the plotted data, SVG is clipped to the axes, the zoom panel and heatmaps lay out as
// specified. Set LENGEN_FIGURE_DIR to keep the example figures for a look.

#include "curve_interactions.h"
#include "figure_builder.h"
#include "figure_export.h"
#include "parallel_coords.h"
#include "plots_test_support.h"
#include "qcp.h"

#include <QDir>
#include <QFile>
#include <QFontMetricsF>
#include <QImage>
#include <QPainter>
#include <QRegularExpression>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>

#include <QXmlStreamReader>
#include <cmath>
#include <cstdlib>
#include <set>

using namespace lengen::plots;
using lengen::plots::testing::keep;
using lengen::plots::testing::regressionFigure;

namespace {

HeatmapSpec triangleHeatmap()
{
    HeatmapSpec h;
    h.title = "layer 2, head 1";
    h.rows = h.cols = 60;
    for (int r = 0; r < 60; ++r)
        for (int c = 0; c < 60; ++c)
            h.values.push_back(c > r ? NAN : 1.0f / float(r + 1) + 0.001f * float(c));
    h.tickLabel = [](int i) { return (i % 2 ? "y_" : "x_") + std::to_string(i / 2); };
    return h;
}

QStringList readLines(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
}

// RFC 4180 fields of one line (no embedded newlines in these tests).
QStringList csvFields(const QString& line)
{
    QStringList out{QString()};
    bool quoted = false;
    for (int i = 0; i < line.size(); ++i) {
        const QChar c = line[i];
        if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"')
            out.last() += c, ++i;
        else if (c == '"')
            quoted = !quoted;
        else if (c == ',' && !quoted)
            out << QString();
        else
            out.last() += c;
    }
    return out;
}

double toDouble(const QString& s) { return std::strtod(s.toStdString().c_str(), nullptr); }

bool near(const QColor& a, const QColor& b, int tolerance = 24)
{
    return std::abs(a.red() - b.red()) < tolerance && std::abs(a.green() - b.green()) < tolerance &&
           std::abs(a.blue() - b.blue()) < tolerance;
}

}  // namespace

class TestPlots final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void twentyRunsTakeTwentyColours();
    void parallelAxesScaleBothWays();
    void formatNames_data();
    void formatNames();
    void pngHasTheSizeAndTheColours_data();
    void pngHasTheSizeAndTheColours();
    void svgIsValidAndTitled();
    void svgIsClippedToTheAxes();
    void pdfIsAPageOfTheFigureSize();
    void csvIsExactlyThePlottedData();
    void bandsAreFillsOutsideTheLegend();
    void zoomPanelShowsTheWindow();
    void heatmapRendersAndExports();
    void unwritablePathsFailCleanly_data();
    void unwritablePathsFailCleanly();
    void exportReplacesAnExistingFile();
    void spansShadeTheirRegion();
    void logAxesIgnoreNonPositiveValues();
    void rebuildingReusesThePlot();
    void legendClickHidesACurveAndHoverReadsValues();
};

void TestPlots::formatNames_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("format");  // -1 = not a format
    QTest::newRow("png") << "png" << int(Format::Png);
    QTest::newRow("SVG") << "SVG" << int(Format::Svg);
    QTest::newRow("Pdf") << "Pdf" << int(Format::Pdf);
    QTest::newRow("csv") << "csv" << int(Format::Csv);
    QTest::newRow("jpeg") << "jpeg" << -1;
    QTest::newRow("empty") << "" << -1;
    QTest::newRow("dotted") << ".png" << -1;
}

void TestPlots::formatNames()
{
    QFETCH(QString, name);
    QFETCH(int, format);
    const auto f = formatFromName(name.toStdString());
    QCOMPARE(f ? int(*f) : -1, format);
    QCOMPARE(formatFromPath("/a/b/fig.PNG"), std::optional<Format>(Format::Png));
    QVERIFY(!formatFromPath("/a/b/fig"));
}

void TestPlots::pngHasTheSizeAndTheColours_data()
{
    QTest::addColumn<int>("dpi");
    QTest::addColumn<QSize>("size");
    QTest::newRow("150 dpi") << 150 << QSize(900, 750);  // 6 x 5 in
    QTest::newRow("72 dpi") << 72 << QSize(432, 360);
    QTest::newRow("300 dpi") << 300 << QSize(1800, 1500);
}

void TestPlots::pngHasTheSizeAndTheColours()
{
    QFETCH(int, dpi);
    QFETCH(QSize, size);
    QTemporaryDir tmp;
    const auto path = keep(tmp.path(), QStringLiteral("regression_%1.png").arg(dpi));
    const auto r = exportFigure(regressionFigure(), path, Format::Png, dpi);
    QVERIFY2(r.ok, qPrintable(r.error));
    QVERIFY(!QFile::exists(path + ".partial"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.read(8), QByteArray("\x89PNG\r\n\x1a\n", 8));
    const QImage img(path);
    QCOMPARE(img.size(), size);
    int blue = 0, panel = 0, white = 0;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) {
            const QColor c = img.pixelColor(x, y);
            blue += near(c, QColor("#0173B2"));  // the first series' colour
            panel += c == QColor("#EAEAF2");
            white += c == Qt::white;
        }
    const int pixels = img.width() * img.height();
    QVERIFY2(blue > pixels / 1000, qPrintable(QString::number(blue)));
    QVERIFY(panel > pixels / 5);
    QVERIFY(white > pixels / 20);
}

void TestPlots::svgIsValidAndTitled()
{
    QTemporaryDir tmp;
    const auto svg = keep(tmp.path(), "regression.svg");
    const auto r = exportFigure(regressionFigure(), svg, Format::Svg);
    QVERIFY2(r.ok, qPrintable(r.error));
    QVERIFY(!QFile::exists(svg + ".partial"));
    QFile s(svg);
    QVERIFY(s.open(QIODevice::ReadOnly));
    const QByteArray text = s.readAll();
    QXmlStreamReader xml(text);
    QString root, title;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement() && root.isEmpty())
            root = xml.name().toString();
        if (xml.isStartElement() && xml.name() == QLatin1String("title"))
            title = xml.readElementText();
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QCOMPARE(root, QString("svg"));
    QVERIFY(title.startsWith("Linear_regression - n_dim 20"));
    QVERIFY(text.contains(">squared error<"));                     // axis label as text
    QVERIFY(text.contains("width=\"152.4mm\" height=\"127mm\""));  // 6 x 5 in
}

void TestPlots::svgIsClippedToTheAxes()
{
    // A curve far above a fixed y range: QSvgGenerator keeps no clip rect, so unless the
    // export cuts the geometry the curve would run over the title and out of the page.
    FigureSpec f;
    f.legend = LegendPlace::None;
    f.y.min = 0;
    f.y.max = 10;
    Series s;
    s.color = "#FF0000";
    for (int i = 0; i <= 100; ++i) {
        s.x.push_back(i);
        s.y.push_back(i);
        s.bandLow.push_back(i - 5.0);
        s.bandHigh.push_back(i + 5.0);
    }
    f.series.push_back(s);
    f.spans.push_back({50, 500, "#0000FF", 0.5, ""});  // past the x range
    QTemporaryDir tmp;
    const auto path = keep(tmp.path(), "clipped.svg");
    QVERIFY(exportFigure(f, path, Format::Svg).ok);
    QSvgRenderer renderer(path);
    QVERIFY(renderer.isValid());
    QImage img(576, 480, QImage::Format_ARGB32);
    img.fill(Qt::white);
    QPainter painter(&img);
    renderer.render(&painter);
    painter.end();
    QCustomPlot plot;  // where the axis rect lies at this size
    buildFigure(plot, f);
    plot.resize(576, 480);
    plot.replot(QCustomPlot::rpImmediateRefresh);
    const QRect inside = plot.axisRect()->rect().adjusted(-3, -3, 3, 3);  // pen width, antialiasing
    int reddishInside = 0, colouredOutside = 0;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) {
            const QColor c = img.pixelColor(x, y);
            const bool coloured = c.red() > c.green() + 60 || c.blue() > c.green() + 60;
            if (inside.contains(x, y))
                reddishInside += c.red() > c.green() + 60;
            else
                colouredOutside += coloured;
        }
    QVERIFY(reddishInside > 200);
    QCOMPARE(colouredOutside, 0);
    // The export puts the plot's own data back (the studio saves what it shows).
    QVERIFY(savePlot(plot, tmp.path() + "/again.svg", Format::Svg, 6, 5, 96, "t").ok);
    for (int i = 0; i < 3; ++i)
        QCOMPARE(plot.graph(i)->dataCount(), 101);
    QCOMPARE(plot.graph(2)->data()->at(100)->value, 100.0);
}

void TestPlots::pdfIsAPageOfTheFigureSize()
{
    QTemporaryDir tmp;
    const auto pdf = keep(tmp.path(), "regression.pdf");
    const auto r = exportFigure(regressionFigure(), pdf, Format::Pdf);
    QVERIFY2(r.ok, qPrintable(r.error));
    QVERIFY(!QFile::exists(pdf + ".partial"));
    QFile p(pdf);
    QVERIFY(p.open(QIODevice::ReadOnly));
    QCOMPARE(p.read(5), QByteArray("%PDF-"));
    QVERIFY(p.size() > 1024);
    p.seek(0);
    const auto box = QRegularExpression(R"(/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+))")
                         .match(QString::fromLatin1(p.readAll()));
    QVERIFY(box.hasMatch());
    QCOMPARE(qRound(box.captured(1).toDouble()), 432);  // 6 in x 72 pt
    QCOMPARE(qRound(box.captured(2).toDouble()), 360);
}

void TestPlots::csvIsExactlyThePlottedData()
{
    QTemporaryDir tmp;
    auto spec = regressionFigure();
    spec.series[1].y[7] = NAN;  // a gap in a curve is data too
    const auto path = tmp.path() + "/regression.csv";
    QVERIFY(exportFigure(spec, path, Format::Csv).ok);
    QVERIFY(!QFile::exists(path + ".partial"));
    const auto lines = readLines(path);
    QCOMPARE(lines.first(), QString("series,x,y,band_low,band_high"));
    size_t points = 0, longest = 0;
    for (const auto& s : spec.series) {
        points += s.x.size();
        longest = std::max(longest, s.x.size());
    }
    size_t lines_ = 0;  // labelled horizontal lines: one row per x of the longest series
    for (const auto& h : spec.hlines)
        lines_ += h.label.empty() ? 0 : longest;
    QVERIFY(lines_ > 0);  // the regression figure draws its zero estimator
    QCOMPARE(size_t(lines.size()), 1 + points + lines_);
    QVERIFY(lines.last().startsWith(QString::fromStdString(spec.hlines.back().label) + ","));
    int row = 1;
    for (const auto& s : spec.series)
        for (size_t i = 0; i < s.x.size(); ++i, ++row) {
            const auto fields = csvFields(lines.at(row));
            QCOMPARE(fields.size(), 5);
            QCOMPARE(fields[0], QString::fromStdString(s.name));
            QCOMPARE(toDouble(fields[1]), s.x[i]);
            if (std::isnan(s.y[i]))
                QVERIFY(std::isnan(toDouble(fields[2])));
            else
                QCOMPARE(toDouble(fields[2]), s.y[i]);  // exact: the text round-trips
            if (s.bandLow.empty()) {
                QVERIFY(fields[3].isEmpty() && fields[4].isEmpty());
            } else {
                QCOMPARE(toDouble(fields[3]), s.bandLow[i]);
                QCOMPARE(toDouble(fields[4]), s.bandHigh[i]);
            }
        }
    QVERIFY(lines.at(1 + 2 * 321).startsWith("\"3-Nearest, Neighbors\","));
    QVERIFY(lines.at(1 + 3 * 321).startsWith("\"the \"\"mean\"\"\","));
    QVERIFY(csvFields(lines.at(1)).at(1) == "0");  // short numbers stay short
}

void TestPlots::bandsAreFillsOutsideTheLegend()
{
    QCustomPlot plot;
    auto spec = regressionFigure();
    spec.spans.push_back({300, 320, "#E74C3C", 0.2, "target block"});
    buildFigure(plot, spec);
    // 4 curves + the zero estimator + the labelled span; no band edges.
    QCOMPARE(plot.legend->itemCount(), 6);
    QStringList names;
    for (int i = 0; i < plot.legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot.legend->item(i)))
            names << item->plottable()->name();
    QCOMPARE(names, QStringList({"RoPE", "Least Squares", "3-Nearest, Neighbors", "the \"mean\"",
                                 "zero estimator", "target block"}));
    int bands = 0;
    for (int i = 0; i < plot.graphCount(); ++i) {
        auto* g = plot.graph(i);
        if (!g->channelFillGraph())
            continue;
        ++bands;
        QVERIFY(!plot.legend->hasItemWithPlottable(g));
        QVERIFY(!plot.legend->hasItemWithPlottable(g->channelFillGraph()));
        const QColor fill = g->brush().color();
        QVERIFY(std::abs(fill.alphaF() - 0.3) < 0.01);
        QVERIFY(near(fill, paletteColor(bands - 1), 2));  // the series' own colour
    }
    QCOMPARE(bands, 3);
}

void TestPlots::zoomPanelShowsTheWindow()
{
    auto spec = regressionFigure();
    spec.title = "lost in the middle";
    spec.zoom = ZoomPanel{284.5, 320, "Zoomed In"};
    spec.spans.push_back({300, 320, "#E74C3C", 0.2, "target block"});
    spec.widthInches = 8;
    spec.heightInches = 5;
    QCustomPlot plot;
    buildFigure(plot, spec);
    QCOMPARE(plot.axisRects().size(), 2);
    auto* zoom = plot.axisRects().at(1);
    QCOMPARE(zoom->axis(QCPAxis::atBottom)->range().lower, 284.5);
    QCOMPARE(zoom->axis(QCPAxis::atBottom)->range().upper, 320.0);
    QCOMPARE(zoom->axis(QCPAxis::atLeft)->range(),
             plot.axisRects().at(0)->axis(QCPAxis::atLeft)->range());
    QCOMPARE(zoom->axis(QCPAxis::atTop)->label(), QString("Zoomed In"));
    // The window's points and the one just before it, so the curves reach the panel's edge.
    int curves = 0;
    for (auto* g : zoom->graphs()) {
        QCOMPARE(g->dataCount(), 37);
        QCOMPARE(g->data()->constBegin()->key, 284.0);
        QCOMPARE((g->data()->constEnd() - 1)->key, 320.0);
        curves += g->brush().style() == Qt::NoBrush && !g->channelFillGraph();
    }
    QCOMPARE(curves, 4 + 3);  // curves and the bands' lower edges
    QTemporaryDir tmp;
    const auto png = keep(tmp.path(), "lost_in_mid.png");
    QVERIFY(exportFigure(spec, png, Format::Png, 100).ok);
    QCOMPARE(QImage(png).size(), QSize(800, 500));
}

void TestPlots::heatmapRendersAndExports()
{
    const auto h = triangleHeatmap();
    QTemporaryDir tmp;
    const auto png = keep(tmp.path(), "heatmap.png");
    QVERIFY(exportHeatmap(h, png, Format::Png, 100).ok);
    const QImage img(png);
    QCOMPARE(img.size(), QSize(600, 500));
    // Masked cells (above the diagonal) are blank, the others coloured.
    QCustomPlot plot;
    buildHeatmap(plot, h);
    plot.resize(576, 480);
    plot.replot(QCustomPlot::rpImmediateRefresh);
    auto* x = plot.axisRect()->axis(QCPAxis::atBottom);
    auto* y = plot.axisRect()->axis(QCPAxis::atLeft);
    const double s = 100.0 / 96.0;
    auto at = [&](double col, double row) {
        return img.pixelColor(int(x->coordToPixel(col) * s), int(y->coordToPixel(row) * s));
    };
    QCOMPARE(at(50, 5), QColor(Qt::white));  // above the diagonal, near the top: row 0 is up
    QVERIFY(at(5, 50) != QColor(Qt::white));
    QVERIFY(y->rangeReversed());

    const auto csv = tmp.path() + "/heatmap.csv";
    QVERIFY(exportHeatmap(h, csv, Format::Csv).ok);
    const auto lines = readLines(csv);
    QCOMPARE(lines.first(), QString("row,col,value"));
    QCOMPARE(lines.size(), 1 + 60 * 61 / 2);  // masked cells are not data
    int line = 1;
    for (int r = 0; r < 60; ++r)
        for (int c = 0; c <= r; ++c, ++line) {
            const auto f = lines.at(line).split(',');
            QCOMPARE(f.size(), 3);
            QCOMPARE(f[0].toInt(), r);
            QCOMPARE(f[1].toInt(), c);
            QCOMPARE(std::strtof(f[2].toStdString().c_str(), nullptr),
                     h.values[size_t(r * 60 + c)]);
        }
    QCOMPARE(lines.at(1), QString("0,0,1"));

    HeatmapSpec ragged = h;  // fewer values than cells: the rest count as masked
    ragged.values.resize(100);
    ragged.logScale = true;
    buildHeatmap(plot, ragged);
    QVERIFY(exportHeatmap(ragged, tmp.path() + "/ragged.png", Format::Png, 50).ok);
    QVERIFY(exportHeatmap(ragged, tmp.path() + "/ragged.csv", Format::Csv).ok);
    QCOMPARE(readLines(tmp.path() + "/ragged.csv").size(), 1 + 3);  // (0,0), (1,0), (1,1)
}

void TestPlots::unwritablePathsFailCleanly_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("format");
    for (auto [name, format] : {std::pair{"png", Format::Png}, std::pair{"svg", Format::Svg},
                                std::pair{"pdf", Format::Pdf}, std::pair{"csv", Format::Csv}}) {
        QTest::addRow("missing folder, %s", name)
            << QStringLiteral("/nonexistent-folder/x/fig.%1").arg(name) << int(format);
        QTest::addRow("/proc, %s", name)
            << QStringLiteral("/proc/lengen-fig.%1").arg(name) << int(format);
    }
}

void TestPlots::unwritablePathsFailCleanly()
{
    QFETCH(QString, path);
    QFETCH(int, format);
    for (bool heatmap : {false, true}) {
        const auto r = heatmap ? exportHeatmap(triangleHeatmap(), path, Format(format))
                               : exportFigure(regressionFigure(), path, Format(format));
        QVERIFY(!r.ok);
        QVERIFY2(r.error.contains(path), qPrintable(r.error));
        QVERIFY(!QFile::exists(path));
        QVERIFY(!QFile::exists(path + ".partial"));
    }
}

void TestPlots::exportReplacesAnExistingFile()
{
    QTemporaryDir tmp;
    for (auto format : {Format::Png, Format::Svg, Format::Pdf, Format::Csv}) {
        const QString path = tmp.path() + "/fig.out";
        QFile old(path);
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write("old contents");
        old.close();
        QVERIFY(exportFigure(regressionFigure(), path, format).ok);
        QVERIFY(QFileInfo(path).size() > 100);
        QVERIFY(!QFile::exists(path + ".partial"));
    }
    QCOMPARE(QDir(tmp.path()).entryList(QDir::Files), QStringList{"fig.out"});
}

void TestPlots::spansShadeTheirRegion()
{
    FigureSpec f;
    Series s;
    s.x = {0, 100};
    s.y = {0, 1};
    f.series.push_back(s);
    f.x.min = 0;
    f.x.max = 100;
    f.spans.push_back({0, 50, "#FF0000", 0.5, ""});
    f.legend = LegendPlace::None;
    QCustomPlot plot;
    buildFigure(plot, f);
    plot.resize(400, 300);
    plot.replot(QCustomPlot::rpImmediateRefresh);
    const QImage img = plot.toPixmap(400, 300).toImage();
    const QRect r = plot.axisRect()->rect();
    const QColor left = img.pixelColor(r.left() + r.width() / 4, r.top() + r.height() / 3);
    const QColor right = img.pixelColor(r.left() + 3 * r.width() / 4, r.top() + r.height() / 3);
    QVERIFY2(left.red() > left.blue() + 40, qPrintable(left.name()));  // red over the grey panel
    QCOMPARE(right, QColor("#EAEAF2"));
    QVERIFY(!plot.legend->visible());
}

void TestPlots::logAxesIgnoreNonPositiveValues()
{
    FigureSpec f;
    f.y.log = true;
    f.y.min = -0.1;  // meaningless on a log axis: ignored
    Series s;
    s.x = {0, 1, 2, 3};
    s.y = {0, 1e-3, 1e-1, 10};
    f.series.push_back(s);
    QCustomPlot plot;
    buildFigure(plot, f);
    const auto range = plot.axisRect()->axis(QCPAxis::atLeft)->range();
    QVERIFY(range.lower > 0 && range.lower < 1e-3);
    QVERIFY(range.upper > 10 && range.upper < 20);
    QCOMPARE(plot.axisRect()->axis(QCPAxis::atLeft)->scaleType(), QCPAxis::stLogarithmic);
}

void TestPlots::rebuildingReusesThePlot()
{
    // The studio rebuilds one embedded plot per figure: nothing of the last one may remain.
    QCustomPlot plot;
    auto zoomed = regressionFigure();
    zoomed.zoom = ZoomPanel{285, 320, "Zoomed In"};
    zoomed.legend = LegendPlace::OutsideRight;
    buildFigure(plot, zoomed);
    buildHeatmap(plot, triangleHeatmap());
    QCOMPARE(plot.axisRects().size(), 1);
    QVERIFY(!plot.legend->visible());
    buildFigure(plot, regressionFigure());
    QCOMPARE(plot.axisRects().size(), 1);
    QCOMPARE(plot.plottableCount(), 4 + 2 * 3 + 1);  // curves, band edges, zero-estimator entry
    QCOMPARE(plot.legend->itemCount(), 5);
    QVERIFY(plot.legend->visible());
    QCOMPARE(plot.legend->layout(), static_cast<QCPLayout*>(plot.axisRect()->insetLayout()));
    QCOMPARE(plot.findChildren<QCPMarginGroup*>().size(), 0);  // the zoom panel's is gone
    // A wide grid lists its legend below the panels in rows; the next figure's legend is one
    // entry under another again (Compare's loss after its panels drew one three wide).
    GridSpec grid;
    grid.panels = {regressionFigure(), regressionFigure(), regressionFigure()};
    buildGrid(plot, grid);
    QVERIFY(plot.legend->columnCount() > 1);
    buildFigure(plot, zoomed);
    QCOMPARE(plot.legend->columnCount(), 1);
    QCOMPARE(plot.legend->rowCount(), plot.legend->itemCount());
}

// Issue 13's interactions: a click on a legend entry hides the curve and its band (again:
// shows them); the hover read-out gives each visible curve's nearest point.
void TestPlots::legendClickHidesACurveAndHoverReadsValues()
{
    QCustomPlot plot;
    plot.resize(800, 600);
    QString hover;
    enableCurveInteractions(plot, [&](const QString& t) { hover = t; });
    buildFigure(plot, regressionFigure());
    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    plot.replot(QCustomPlot::rpImmediateRefresh);
    QCPGraph* rope = nullptr;
    for (int i = 0; i < plot.graphCount(); ++i)
        if (plot.graph(i)->name() == "RoPE" && plot.legend->hasItemWithPlottable(plot.graph(i)))
            rope = plot.graph(i);
    QVERIFY(rope);
    const QPoint entry = plot.legend->itemWithPlottable(rope)->rect().center();
    QTest::mouseClick(&plot, Qt::LeftButton, {}, entry);
    QCOMPARE(hiddenSeries(plot), QStringList{"RoPE"});
    int hiddenGraphs = 0;
    for (int i = 0; i < plot.graphCount(); ++i)
        hiddenGraphs += plot.graph(i)->name() == "RoPE" && !plot.graph(i)->visible();
    QCOMPARE(hiddenGraphs, 3);  // the curve and the two edges of its band
    const QString text = nearestPoints(plot, 10.2);
    QVERIFY2(text.startsWith("x = 10:") && !text.contains("RoPE") && text.contains("Least Squares"),
             qPrintable(text));
    QTest::mouseClick(&plot, Qt::LeftButton, {}, entry);
    QVERIFY(hiddenSeries(plot).isEmpty());
    QVERIFY(nearestPoints(plot, 10.2).contains("RoPE 5.73"));  // 20 exp(-10 / 8)
}

// Issue 80, defect 23 (the Xvfb walk): past ten runs or groups the palette repeated, so two
// encodings of a 19-run comparison shared a colour. Twenty take twenty colours, none a
// baseline's tone, before any repeats.
void TestPlots::twentyRunsTakeTwentyColours()
{
    std::set<std::string> colours;
    for (int i = 0; i < 20; ++i)
        colours.insert(runColor("twenty-" + std::to_string(i)));
    QCOMPARE(colours.size(), size_t(20));
    for (int i = 0; i < 4; ++i)
        QVERIFY(!colours.count(baselineColor(i)));
}

// A parallel-coordinates axis maps values to fractions and back, by decades on a log axis and
// by place on a categorical one (moved here from tst_hparams).
void TestPlots::parallelAxesScaleBothWays()
{
    ParallelAxis lr{"lr", false, {}, 1e-5, 1e-2, true};
    QCOMPARE(axisFraction(lr, 1e-5), 0.0);
    QVERIFY(std::fabs(axisFraction(lr, 1e-4) - 1.0 / 3) < 1e-12);  // decades, not values
    QVERIFY(std::fabs(axisValue(lr, 2.0 / 3) - 1e-3) < 1e-15);
    QVERIFY(std::isnan(axisFraction(lr, NAN)));
    ParallelAxis pe{"pe", true, {"alibi", "nope", "rope"}};
    QCOMPARE(axisFraction(pe, 2), 1.0);
    QCOMPARE(axisFraction(pe, 1), 0.5);
    // A drag to the end of a log axis keeps the end's run: 10^log10(max) can fall short of max.
    ParallelAxis lr2{"lr", false, {}, 1e-5, 5e-4, true};
    QCOMPARE(axisValue(lr2, 1.0), 5e-4);
    QCOMPARE(axisValue(lr2, 0.0), 1e-5);
    // One category sits at the middle, and a drag around it holds it.
    ParallelAxis one{"status", true, {"finished"}};
    QVERIFY(axisValue(one, 0.3) <= 0 && axisValue(one, 0.7) >= 0);
}

QTEST_MAIN(TestPlots)
#include "tst_plots.moc"
