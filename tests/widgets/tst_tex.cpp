// pgfplots export (issue 42): every kind of figure compiles with TeX Live, standalone and
// \input from another folder; its data files hold exactly the numbers of the CSV export; the
// palette is defined once; text is escaped. Without pdflatex the compile tests skip, naming the
// packages, unless LENGEN_REQUIRE_TEX=1 (.ci/test sets it: CI must not skip them).

#include "figure_export.h"
#include "figure_tex.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace lengen::plots;

namespace {

FigureSpec lineFigure()
{
    FigureSpec f;
    f.title = "linear_regression - RoPE × 8\nΛ-mask 50% & {braces} #2";
    f.x.label = "in-context examples k";
    f.y.label = "squared error";
    f.y.log = true;
    const char* names[] = {"RoPE seed 1 (ab12_cd34)", "Least Squares", "curriculum"};
    for (int m = 0; m < 3; ++m) {
        Series s;
        s.name = names[m];
        for (int i = 0; i <= 40; ++i) {
            const double v = 10.0 * std::exp(-i / (4.0 + 3 * m)) + 0.01 * (m + 1);
            s.x.push_back(i);
            s.y.push_back(m == 0 && i == 20 ? NAN : v);  // a gap
            if (m == 0) {
                s.bandLow.push_back(v * 0.8);
                s.bandHigh.push_back(v * 1.25);
            }
        }
        s.dashed = m == 1;
        s.staircase = m == 2;
        f.series.push_back(s);
    }
    f.hlines.push_back({4, "zero estimator"});
    f.spans.push_back({-1, 8, "#808080", 0.15, "training prompts"});
    f.vlines.push_back({8, "train length"});
    f.markers.push_back({30, 0.5, "x_15", ""});
    return f;
}

GridSpec grid()
{
    GridSpec g;
    g.title = "sweep - ood_length";
    for (int p = 0; p < 3; ++p) {
        FigureSpec f = lineFigure();
        f.title = "task " + std::to_string(p);
        f.y.log = p == 1;
        if (p == 2)
            f.series.push_back({"only in the last panel",
                                {0, 10, 20},
                                {1, 2, 3},
                                {},
                                {},
                                "",
                                2,
                                false,
                                true,
                                false});
        g.panels.push_back(f);
    }
    return g;
}

HeatmapSpec heatmap(bool log)
{
    HeatmapSpec h;
    h.title = "RoPE - layer 1, head 0";
    h.rows = h.cols = 24;
    for (int r = 0; r < 24; ++r)
        for (int c = 0; c < 24; ++c)
            h.values.push_back(
                c > r || (log && c < r - 6) ? NAN : 1.0f / float(r + 1) + 0.001f * float(c));
    h.logScale = log;
    h.boundary = 18;
    h.boundaryLabel = "train length";
    h.firstRow = 2;
    h.firstCol = 2;
    return h;
}

QString read(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

QStringList rowsOf(const QString& text)
{
    auto rows = text.split('\n', Qt::SkipEmptyParts);
    if (!rows.isEmpty())
        rows.removeFirst();  // the header
    return rows;
}

// pdflatex on `tex` in its folder: "" when it compiled into a PDF, else the log's tail.
QString compile(const QString& tex)
{
    QProcess p;
    p.setWorkingDirectory(QFileInfo(tex).absolutePath());
    p.start(QStringLiteral("pdflatex"),
            {"-interaction=nonstopmode", "-halt-on-error", QFileInfo(tex).fileName()});
    if (!p.waitForFinished(120000))
        return QStringLiteral("pdflatex timed out");
    const QString pdf =
        QFileInfo(tex).absolutePath() + "/" + QFileInfo(tex).completeBaseName() + ".pdf";
    if (p.exitCode() == 0 && QFileInfo(pdf).size() > 1000)
        return {};
    return QString::fromUtf8(p.readAllStandardOutput()).right(1500);
}

}  // namespace

class TestTex final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void everyKindCompiles_data();
    void everyKindCompiles();
    void dataFilesHoldTheCsvNumbers();
    void paletteIsDefinedOnce();
    void textIsEscaped();

private:
    void requireTex();
    QTemporaryDir m_tmp;
};

void TestTex::requireTex()
{
    if (!QStandardPaths::findExecutable(QStringLiteral("pdflatex")).isEmpty())
        return;
    if (qEnvironmentVariable("LENGEN_REQUIRE_TEX") == QLatin1String("1"))
        QFAIL("pdflatex is missing but LENGEN_REQUIRE_TEX=1 (.ci/install-deps installs TeX Live)");
    QSKIP("TeX Live is not installed (apt-get install texlive-latex-base texlive-latex-recommended "
          "texlive-pictures)");
}

void TestTex::everyKindCompiles_data()
{
    QTest::addColumn<QString>("kind");
    for (const char* k : {"figure", "grid", "heatmap", "log heatmap", "masked heatmap"})
        QTest::newRow(k) << QString(k);
}

void TestTex::everyKindCompiles()
{
    requireTex();
    QFETCH(QString, kind);
    // LENGEN_FIGURE_DIR keeps the files to look at (as tst_plots does).
    const QString keep = qEnvironmentVariable("LENGEN_FIGURE_DIR");
    const QString dir =
        (keep.isEmpty() ? m_tmp.path() : keep) + "/" + QString(kind).replace(' ', '_');
    QVERIFY(QDir().mkpath(dir + "/figures"));
    for (const bool standalone : {true, false}) {
        const QString tex = standalone ? dir + "/alone.tex" : dir + "/figures/fig.tex";
        ExportResult r;
        if (kind == "figure")
            r = exportFigure(lineFigure(), tex, Format::Tex, 150, standalone);
        else if (kind == "grid")
            r = exportGrid(grid(), tex, Format::Tex, 150, standalone);
        else if (kind == "masked heatmap") {  // no cell shown: the colour range is still finite
            auto h = heatmap(true);
            for (auto& v : h.values)
                v = NAN;
            r = exportHeatmap(h, tex, Format::Tex, 150, standalone);
        } else
            r = exportHeatmap(heatmap(kind.startsWith("log")), tex, Format::Tex, 150, standalone);
        QVERIFY2(r.ok, qPrintable(r.error));
        if (standalone) {
            const QString failed = compile(tex);
            QVERIFY2(failed.isEmpty(), qPrintable(failed));
        } else {
            // A paper's document, one folder up, that \input's it: the data come from the folder
            // it names.
            QFile paper(dir + "/paper.tex");
            QVERIFY(paper.open(QIODevice::WriteOnly));
            paper.write(
                "\\documentclass{article}\n\\usepackage{pgfplots}\n\\pgfplotsset{compat=1.18}\n"
                "\\usepackage[margin=0.5in, paperwidth=17in, paperheight=11in]{geometry}\n"
                "\\begin{document}\n\\def\\lengenFigureDir{figures}\n\\input{figures/"
                "fig.tex}\n\\end{document}\n");
            paper.close();
            const QString failed = compile(dir + "/paper.tex");
            QVERIFY2(failed.isEmpty(), qPrintable(failed));
        }
    }
}

void TestTex::dataFilesHoldTheCsvNumbers()
{
    const QString dir = m_tmp.filePath("data");
    QVERIFY(QDir().mkpath(dir));
    const auto f = lineFigure();
    QVERIFY(exportFigure(f, dir + "/f.tex", Format::Tex).ok);
    QVERIFY(exportFigure(f, dir + "/f.csv", Format::Csv).ok);
    // CSV rows "series,x,y,band_low,band_high": the series' rows, in order, equal the .dat rows.
    const auto csv = rowsOf(read(dir + "/f.csv"));
    int row = 0;
    for (size_t i = 0; i < f.series.size(); ++i) {
        const auto dat = rowsOf(read(dir + QStringLiteral("/f-%1.dat").arg(i)));
        QCOMPARE(dat.size(), int(f.series[i].x.size()));
        for (const auto& line : dat) {
            auto fields = csv.at(row++).split(',');
            fields.removeFirst();  // the series name (no commas in these)
            while (!fields.isEmpty() && fields.last().isEmpty())
                fields.removeLast();
            QCOMPARE(line.split(' '), fields);
        }
    }
    // The grid: each panel's series, as its CSV rows (after the panel and series columns).
    const auto g = grid();
    QVERIFY(exportGrid(g, dir + "/g.tex", Format::Tex).ok);
    QVERIFY(exportGrid(g, dir + "/g.csv", Format::Csv).ok);
    const auto gridCsvRows = rowsOf(read(dir + "/g.csv"));
    row = 0;
    for (size_t p = 0; p < g.panels.size(); ++p) {
        for (size_t i = 0; i < g.panels[p].series.size(); ++i)
            for (const auto& line :
                 rowsOf(read(dir + QStringLiteral("/g-p%1-%2.dat").arg(p).arg(i)))) {
                auto fields = gridCsvRows.at(row++).split(',').mid(2);
                while (!fields.isEmpty() && fields.last().isEmpty())
                    fields.removeLast();
                QCOMPARE(line.split(' '), fields);
            }
        row += int(f.series.front().x.size());  // the panel's zero-estimator rows (an hline)
    }
    // The heatmap: the finite cells' values, as "row,col,value" in the CSV.
    const auto h = heatmap(false);
    QVERIFY(exportHeatmap(h, dir + "/h.tex", Format::Tex).ok);
    QVERIFY(exportHeatmap(h, dir + "/h.csv", Format::Csv).ok);
    QStringList fromDat;
    for (const auto& line : rowsOf(read(dir + "/h-cells.dat"))) {
        const auto c = line.split(' ');  // col row value meta
        if (c[2] != "nan")
            fromDat << c[1] + ',' + c[0] + ',' + c[2];
    }
    QCOMPARE(fromDat, rowsOf(read(dir + "/h.csv")));
}

void TestTex::paletteIsDefinedOnce()
{
    const auto files = figureTex(lineFigure(), "f", false);
    QCOMPARE(files.tex.count("\\definecolor{lengenC0}{HTML}{"), 1);
    // Every colour a curve uses is a palette name, and every palette name is used.
    for (int i = 0; files.tex.contains(QStringLiteral("lengenC%1}").arg(i)); ++i)
        QVERIFY2(files.tex.count(QStringLiteral("lengenC%1").arg(i)) >= 2, qPrintable(files.tex));
    QVERIFY(!files.tex.contains("{HTML}{#"));
    QCOMPARE(files.data.size(), size_t(4));  // 3 curves, 1 band outline
}

void TestTex::textIsEscaped()
{
    QCOMPARE(texEscape("50% & x_1 {a} #2 ~ ^ \\"),
             QString("50\\% \\& x\\_1 \\{a\\} \\#2 \\textasciitilde{} \\textasciicircum{} "
                     "\\textbackslash{}"));
    QCOMPARE(texEscape("Λ × 8 — ≤"), QString("$\\Lambda$ $\\times$ 8 --- $\\leq$"));
    QCOMPARE(texEscape("a\nb"), QString("a b"));
    QCOMPARE(texEscape("a\nb", true), QString("a\\\\b"));
    QCOMPARE(texEscape("日本"), QString("??"));
}

QTEST_MAIN(TestTex)
#include "tst_tex.moc"
