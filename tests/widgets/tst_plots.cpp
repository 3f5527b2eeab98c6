// Figure building and export: every format writes a valid file atomically, CSV holds exactly
// the plotted data, the zoom panel and heatmaps lay out as specified. Set LENGEN_FIGURE_DIR to
// keep the example figures for a look.

#include <QImage>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <cmath>
#include "qcp.h"

#include "figure_builder.h"
#include "figure_export.h"

using namespace lengen::plots;

namespace {

FigureSpec regressionFigure()
{
    FigureSpec f;
    f.title = "Linear_regression - n_dim 20\nmax_data_points 40";
    f.x.label = "in-context examples";
    f.y.label = "squared error";
    f.y.min = -0.1;
    f.y.max = 30;
    for (int m = 0; m < 4; ++m) {
        Series s;
        s.name = m == 0 ? "RoPE" : m == 1 ? "Least Squares" : m == 2 ? "3-Nearest, Neighbors" : "Averaging";
        for (int i = 0; i <= 320; ++i) {
            const double base = 20.0 * std::exp(-i / (8.0 + 6 * m));
            const double v = m == 0 ? base + (i > 40 ? 0.05 * (i - 40) : 0) : base + m;
            s.x.push_back(i);
            s.y.push_back(v);
            s.bandLow.push_back(v - 0.8);
            s.bandHigh.push_back(v + 0.8);
        }
        f.series.push_back(s);
    }
    f.hlines.push_back({20, "zero estimator"});
    f.spans.push_back({-1, 40, "#808080", 0.15, ""});
    f.vlines.push_back({40, "train length"});
    return f;
}

QString keep(const QString& tmp, const QString& name)
{
    const QString dir = qEnvironmentVariable("LENGEN_FIGURE_DIR");
    return dir.isEmpty() ? tmp + "/" + name : dir + "/" + name;
}

}  // namespace

class TestPlots final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void formatNames();
    void pngHasTheSizeAndTheColours();
    void svgAndPdfAreValid();
    void csvIsExactlyThePlottedData();
    void zoomPanelShowsTheWindow();
    void heatmapRendersAndExports();
    void unwritablePathsFailCleanly();
    void spansShadeTheirRegion();
};

void TestPlots::formatNames()
{
    QCOMPARE(formatFromName("png"), std::optional<Format>(Format::Png));
    QCOMPARE(formatFromName("SVG"), std::optional<Format>(Format::Svg));
    QCOMPARE(formatFromName("Pdf"), std::optional<Format>(Format::Pdf));
    QCOMPARE(formatFromName("csv"), std::optional<Format>(Format::Csv));
    QVERIFY(!formatFromName("jpeg"));
    QCOMPARE(formatFromPath("/a/b/fig.PNG"), std::optional<Format>(Format::Png));
    QVERIFY(!formatFromPath("/a/b/fig"));
}

void TestPlots::pngHasTheSizeAndTheColours()
{
    QTemporaryDir tmp;
    const auto path = keep(tmp.path(), "regression.png");
    const auto r = exportFigure(regressionFigure(), path, Format::Png, 150);
    QVERIFY2(r.ok, qPrintable(r.error));
    QVERIFY(!QFile::exists(path + ".partial"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.read(8), QByteArray("\x89PNG\r\n\x1a\n", 8));
    QImage img(path);
    QCOMPARE(img.size(), QSize(900, 750));  // 6 x 5 in at 150 dpi
    // The first series' colour (#0173B2) is drawn, and the panel background too.
    int blue = 0, panel = 0;
    for (int y = 0; y < img.height(); y += 2)
        for (int x = 0; x < img.width(); x += 2) {
            const QColor c = img.pixelColor(x, y);
            if (std::abs(c.red() - 0x01) < 20 && std::abs(c.green() - 0x73) < 20 && std::abs(c.blue() - 0xB2) < 20)
                ++blue;
            if (c == QColor("#EAEAF2"))
                ++panel;
        }
    QVERIFY2(blue > 100, qPrintable(QString::number(blue)));
    QVERIFY(panel > 10000);
}

void TestPlots::svgAndPdfAreValid()
{
    QTemporaryDir tmp;
    const auto svg = keep(tmp.path(), "regression.svg");
    QVERIFY(exportFigure(regressionFigure(), svg, Format::Svg).ok);
    QFile s(svg);
    QVERIFY(s.open(QIODevice::ReadOnly));
    const QByteArray text = s.readAll();
    QXmlStreamReader xml(text);
    QString root;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement() && root.isEmpty())
            root = xml.name().toString();
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QCOMPARE(root, QString("svg"));
    QVERIFY(text.contains("Linear_regression"));
    const auto pdf = keep(tmp.path(), "regression.pdf");
    QVERIFY(exportFigure(regressionFigure(), pdf, Format::Pdf).ok);
    QFile p(pdf);
    QVERIFY(p.open(QIODevice::ReadOnly));
    QCOMPARE(p.read(5), QByteArray("%PDF-"));
    QVERIFY(p.size() > 1024);
}

void TestPlots::csvIsExactlyThePlottedData()
{
    QTemporaryDir tmp;
    const auto spec = regressionFigure();
    const auto path = tmp.path() + "/regression.csv";
    QVERIFY(exportFigure(spec, path, Format::Csv).ok);
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly | QIODevice::Text));
    const auto lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.first(), QString("series,x,y,band_low,band_high"));
    QCOMPARE(lines.size(), 1 + 4 * 321);
    // Row 1 + 2 * 321 + 5: the third series (a name with a comma, quoted), point 5.
    const QString row = lines.at(1 + 2 * 321 + 5);
    QVERIFY(row.startsWith("\"3-Nearest, Neighbors\","));
    const auto fields = row.mid(row.lastIndexOf('"') + 2).split(',');
    const auto& s = spec.series[2];
    QCOMPARE(fields.at(0).toDouble(), s.x[5]);
    QCOMPARE(fields.at(1).toDouble(), s.y[5]);
    QCOMPARE(fields.at(2).toDouble(), s.bandLow[5]);
    QCOMPARE(fields.at(3).toDouble(), s.bandHigh[5]);
}

void TestPlots::zoomPanelShowsTheWindow()
{
    auto spec = regressionFigure();
    spec.title = "lost in the middle";
    spec.zoom = ZoomPanel{285, 320, "Zoomed In"};
    spec.spans.push_back({300, 320, "#E74C3C", 0.2, ""});
    spec.widthInches = 8;
    spec.heightInches = 6;
    QCustomPlot plot;
    buildFigure(plot, spec);
    QCOMPARE(plot.axisRects().size(), 2);
    const auto zoomX = plot.axisRects().at(1)->axis(QCPAxis::atBottom)->range();
    QCOMPARE(zoomX.lower, 285.0);
    QCOMPARE(zoomX.upper, 320.0);
    QCOMPARE(plot.axisRects().at(1)->axis(QCPAxis::atLeft)->range(),
             plot.axisRects().at(0)->axis(QCPAxis::atLeft)->range());
    QTemporaryDir tmp;
    QVERIFY(exportFigure(spec, keep(tmp.path(), "lost_in_mid.png"), Format::Png, 100).ok);
}

void TestPlots::heatmapRendersAndExports()
{
    HeatmapSpec h;
    h.title = "layer 2, head 1";
    h.rows = h.cols = 60;
    for (int r = 0; r < 60; ++r)
        for (int c = 0; c < 60; ++c)
            h.values.push_back(c > r ? NAN : 1.0f / float(r + 1));
    h.tickLabel = [](int i) { return (i % 2 ? "y_" : "x_") + std::to_string(i / 2); };
    QTemporaryDir tmp;
    const auto png = keep(tmp.path(), "heatmap.png");
    QVERIFY(exportHeatmap(h, png, Format::Png, 100).ok);
    QCOMPARE(QImage(png).size(), QSize(600, 500));
    const auto csv = tmp.path() + "/heatmap.csv";
    QVERIFY(exportHeatmap(h, csv, Format::Csv).ok);
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly | QIODevice::Text));
    const auto lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 1 + 60 * 61 / 2);  // masked cells are not data
    QCOMPARE(lines.at(1), QString("0,0,1"));
    QCOMPARE(lines.at(3).split(',').at(2).toDouble(), double(0.5f));
}

void TestPlots::unwritablePathsFailCleanly()
{
    for (auto format : {Format::Png, Format::Svg, Format::Pdf, Format::Csv}) {
        const QString path = "/nonexistent-folder/x/fig.out";
        const auto r = exportFigure(regressionFigure(), path, format);
        QVERIFY(!r.ok);
        QVERIFY2(r.error.contains(path), qPrintable(r.error));
        QVERIFY(!QFile::exists(path + ".partial"));
    }
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
    QVERIFY2(left.red() > left.blue() + 40, qPrintable(left.name()));   // red over the grey panel
    QCOMPARE(right, QColor("#EAEAF2"));
}

QTEST_MAIN(TestPlots)
#include "tst_plots.moc"
