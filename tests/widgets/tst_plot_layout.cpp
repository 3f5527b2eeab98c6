// How figures lay out what they say (issue 70): ticks inside a short log decade without
// crowding, train-length labels a text line apart, a legend beside the data widening the
// export instead of squeezing the plot, parallel-axis ticks and names that read as meant.

#include <QFontMetricsF>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <vector>

#include "figure_builder.h"
#include "figure_export.h"
#include "layout_check.h"
#include "parallel_coords.h"
#include "plots_test_support.h"
#include "qcp.h"

using namespace lengen::plots;
using lengen::plots::testing::keep;
using lengen::plots::testing::regressionFigure;

class TestPlotLayout final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void parallelTicksReadAsNumbers();
    void parallelAxisNamesSayWhatTheyAre();
    void shortLogAxesTickInsideTheDecade();
    void trainLengthLabelsDoNotOverlap();
    void outsideLegendWidensTheExportNotTheData();
    void annotationsKeepOffTheData();
    void aLabelWithNoRoomBesideTheCurvesGoesAboveThem();
};

// Found under Xvfb (issue 70): the curriculum's axes read "end", "increment", "start".
void TestPlotLayout::parallelAxisNamesSayWhatTheyAre()
{
    ParallelSpec s;
    for (const char* name : {"curriculum.points.end", "curriculum.points.start",
                             "training.learning_rate", "model.num_hidden_layers", "pe"})
        s.axes.push_back(ParallelAxis{name, false, {}});
    QCOMPARE(axisLabel(s, 0), std::string("points.end"));
    QCOMPARE(axisLabel(s, 1), std::string("points.start"));
    QCOMPARE(axisLabel(s, 2), std::string("learning_rate"));
    QCOMPARE(axisLabel(s, 4), std::string("pe"));
    s.axes.push_back(
        ParallelAxis{"curriculum.dims.end", false, {}});  // two "end"s: still told apart
    QCOMPARE(axisLabel(s, 5), std::string("dims.end"));
}

// Issue 70, defect 8: a log y axis over 2..30 labelled only 10, 20, 30, so the data between 2
// and 10 had no tick. It labels 1-2-5 steps of each decade in range.
void TestPlotLayout::shortLogAxesTickInsideTheDecade()
{
    FigureSpec f;
    f.y.log = true;
    Series s;
    s.x = {0, 1, 2, 3};
    s.y = {2.2, 4, 12, 28};
    f.series.push_back(s);
    QCustomPlot plot;
    plot.resize(600, 400);
    buildFigure(plot, f);
    plot.replot();
    auto* y = plot.axisRect()->axis(QCPAxis::atLeft);
    const auto ticks = y->tickVector();
    QVERIFY2(ticks.contains(5) && ticks.contains(10) && ticks.contains(20),
             qPrintable(QStringList(y->tickVectorLabels()).join(", ")));
    QVERIFY(y->tickVectorLabels().contains("5"));  // plain numbers, not 5·10^0
    // Under a decade with every digit: no two labels crowd each other (0.9 over 1).
    f.series.front().y = {0.88, 1.0, 1.3, 1.9};
    buildFigure(plot, f);
    plot.replot();
    const auto close = plot.axisRect()->axis(QCPAxis::atLeft)->tickVector();
    QVERIFY2(
        !(close.contains(0.9) && close.contains(1.0)),
        qPrintable(
            QStringList(plot.axisRect()->axis(QCPAxis::atLeft)->tickVectorLabels()).join(", ")));
    // Inside one step of the digits: three labels at least (issue 80, defect 15: a loss over
    // 1.9..2.9 was labelled "2" alone).
    f.series.front().y = {1.95, 2.2, 2.5, 2.85};
    buildFigure(plot, f);
    plot.replot();
    const auto narrow = plot.axisRect()->axis(QCPAxis::atLeft)->tickVectorLabels();
    QVERIFY2(narrow.size() >= 3, qPrintable(QStringList(narrow).join(", ")));
    // Over many decades: the decades alone, as before.
    f.series.front().y = {1e-4, 1e-2, 1, 100};
    buildFigure(plot, f);
    plot.replot();
    for (double t : plot.axisRect()->axis(QCPAxis::atLeft)->tickVector())
        QVERIFY2(std::abs(std::log10(t) - std::round(std::log10(t))) < 1e-9,
                 qPrintable(QString::number(t)));
}

// Issue 70, defect 7: runs trained on 5 and 7 points drew "train length 5 points" over
// "train length 7 points" (lines 4 prompts apart). Each label sits a text line below the last.
void TestPlotLayout::trainLengthLabelsDoNotOverlap()
{
    auto f = regressionFigure();
    f.vlines = {{40, "train length 5 points"}, {44, "train length 7 points"}};
    QCustomPlot plot;
    plot.resize(600, 260);  // a short panel, as in Compare's at 1280 x 800
    buildFigure(plot, f);
    plot.replot();
    std::vector<QCPItemText*> labels;
    for (int i = 0; i < plot.itemCount(); ++i)
        if (auto* t = qobject_cast<QCPItemText*>(plot.item(i));
            t && t->text().startsWith("train length"))
            labels.push_back(t);
    QCOMPARE(int(labels.size()), 2);
    // Where each text starts: its box's top and the padding above the text.
    const auto textTop = [](QCPItemText* t) {
        return t->topLeft->pixelPosition().y() + t->padding().top();
    };
    const double gap = std::abs(textTop(labels[0]) - textTop(labels[1]));
    const double height = QFontMetricsF(labels[0]->font()).height();
    QVERIFY2(gap >= height,
             qPrintable(QStringLiteral("%1 px apart, text %2 px tall").arg(gap).arg(height)));
}

// Found under Xvfb (issue 70): Compare's export with its legend beside the data (long group
// names) squeezed the plot into a sliver of the 6-inch page. The page widens by the legend.
void TestPlotLayout::outsideLegendWidensTheExportNotTheData()
{
    auto f = regressionFigure();
    f.legend = LegendPlace::OutsideRight;
    f.series[0].name = "RoPE, end=5, start=5, interval=800, end=9, interval=800 (N=1, no band)";
    QTemporaryDir tmp;
    const QString path = keep(tmp.path(), "outside_legend.png");
    QVERIFY(exportFigure(f, path, Format::Png, 100).ok);
    const QImage img(path);
    QVERIFY(img.width() > 6 * 100);  // wider than the figure's 6 inches
    int panel = 0;                   // the columns the data's background (#EAEAF2) reaches
    for (int x = 0; x < img.width(); ++x)
        for (int y = 0; y < img.height(); y += 2)
            if ((img.pixel(x, y) & 0xFFFFFFu) == 0xEAEAF2u) {
                ++panel;
                break;
            }
    QVERIFY2(panel >= 6 * 100 * 0.6, qPrintable(QString::number(panel)));
}

// Issue 70, defect 15: the Hyperparameters axes read "1.5e+03" for 1500 steps.
void TestPlotLayout::parallelTicksReadAsNumbers()
{
    QCOMPARE(lengen::plots::parallelTickText(1500), QStringLiteral("1500"));
    QCOMPARE(lengen::plots::parallelTickText(50000), QStringLiteral("50000"));
    QCOMPARE(lengen::plots::parallelTickText(12345.6), QStringLiteral("12346"));
    QCOMPARE(lengen::plots::parallelTickText(0.25), QStringLiteral("0.25"));
    QCOMPARE(lengen::plots::parallelTickText(2.0298507), QStringLiteral("2.03"));
    QCOMPARE(lengen::plots::parallelTickText(-3), QStringLiteral("-3"));
    QCOMPARE(lengen::plots::parallelTickText(1e-5), QStringLiteral("1e-05"));  // a learning rate
    QCOMPARE(lengen::plots::parallelTickText(3e-4), QStringLiteral("0.0003"));
    // One notation an axis (issue 80, defect 15: a seed axis mixed "1e+09" with "1000000").
    QCOMPARE(lengen::plots::parallelTickTexts({1e6, 5e8, 1e9}),
             (QStringList{"1e+06", "5e+08", "1e+09"}));
    QCOMPARE(lengen::plots::parallelTickTexts({0, 1500, 3000}), (QStringList{"0", "1500", "3000"}));
}

// Issue 80 §3 (defects 10, 12): the legend went to the upper right over the curves there, and a
// train-length label sat on a curve. A legend goes to the corner that hides the fewest points,
// and a label down its line to a slot no curve crosses (or left of the line); the layout check
// finds nothing then.
void TestPlotLayout::annotationsKeepOffTheData()
{
    FigureSpec f;
    f.x.label = "x";
    f.y.label = "y";
    for (int m = 0; m < 3; ++m) {  // rising curves: dense in the upper right, empty lower right
        Series s;
        s.name = "curve " + std::to_string(m);
        for (int i = 0; i <= 60; ++i) {
            s.x.push_back(i);
            s.y.push_back(i < 30 ? 0.1 * i + m : 3 + 0.5 * (i - 30) + m);
        }
        f.series.push_back(s);
    }
    f.vlines.push_back({50, "train length 50 points"});  // at the top: across the curves
    f.legend = LegendPlace::UpperRight;                  // over the curves' rise
    QCustomPlot plot;
    plot.resize(600, 400);
    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    buildFigure(plot, f);  // laid out and drawn once
    // The legend's entries moved with it in that one pass (found in the Xvfb walk: an empty box
    // where it went, its entries drawn where it was, until something replotted).
    for (int i = 0; i < plot.legend->itemCount(); ++i)
        QVERIFY2(plot.legend->outerRect().contains(plot.legend->item(i)->rect()),
                 qPrintable(QString("entry %1 outside its legend").arg(i)));
    plot.replot(QCustomPlot::rpImmediateRefresh);
    const auto problems = layoutProblems(plot, QRectF(plot.rect()));
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
    auto* rect = plot.axisRect();
    const QRectF legend = plot.legend->outerRect();
    QVERIFY2(legend.center().x() < rect->rect().center().x(),  // moved left, off the curves
             qPrintable(QString("legend at %1,%2").arg(legend.x()).arg(legend.y())));
    QCPItemText* label = nullptr;
    for (int i = 0; i < plot.itemCount(); ++i)
        if (auto* t = qobject_cast<QCPItemText*>(plot.item(i)))
            label = t;
    QVERIFY(label && label->visible());
    QVERIFY(label->padding().top() > 0 ||
            label->positionAlignment() & Qt::AlignRight);  // not the top right slot it had
}

// Issue 80, defect 10 (the Xvfb pass): in Compare's ood_length panel a jagged curve crossed its
// train-length line from top to bottom, so the label had no free slot and was hidden; with two
// train lengths one line was unlabelled. It goes to a strip just above the data area instead,
// beside its line's top end, in a grid panel under the panel's title as in a single figure.
void TestPlotLayout::aLabelWithNoRoomBesideTheCurvesGoesAboveThem()
{
    FigureSpec f;
    f.x.label = "in-context examples";
    f.y.label = "squared error";
    for (int m = 0; m < 3; ++m) {  // up and down across the whole height, every example
        Series s;
        s.name = "run " + std::to_string(m);
        for (int i = 0; i <= 60; ++i) {
            s.x.push_back(i);
            s.y.push_back((i + m) % 2 ? 4.5 - 0.1 * m : 0.1 * m);
        }
        f.series.push_back(s);
    }
    f.vlines = {{6, "train length 7 points"}, {40, "train length 41 points"}};
    for (const bool grid : {false, true}) {
        QCustomPlot plot;
        plot.resize(grid ? 900 : 600, 320);
        plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        if (grid) {
            GridSpec g;
            g.columns = 2;
            g.panels = {f, f};
            g.panels[0].title = "ood_length";
            g.panels[1].title = "standard";
            buildGrid(plot, g);
        } else {
            buildFigure(plot, f);
        }
        plot.replot(QCustomPlot::rpImmediateRefresh);
        int shown = 0;
        for (int i = 0; i < plot.itemCount(); ++i)
            if (auto* t = qobject_cast<QCPItemText*>(plot.item(i));
                t && t->text().startsWith("train length")) {
                QVERIFY2(t->visible(), qPrintable(t->text() + (grid ? " (grid)" : "")));
                const double bottom = t->bottomRight->pixelPosition().y() - t->padding().bottom();
                QVERIFY2(bottom <= t->clipAxisRect()->rect().top(),
                         qPrintable(QString("%1 ends at y %2, the data starts at %3")
                                        .arg(t->text())
                                        .arg(bottom)
                                        .arg(t->clipAxisRect()->rect().top())));
                ++shown;
            }
        QCOMPARE(shown, grid ? 4 : 2);
        const auto problems = layoutProblems(plot, QRectF(plot.rect()));
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
    }
}

QTEST_MAIN(TestPlotLayout)
#include "tst_plot_layout.moc"
