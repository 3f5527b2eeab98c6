// The Train tab's overlay of other runs' loss curves, and one colour per run across the views
// (issue 70, defect 17): the comparison, the overlay, the run table and their exports agree,
// whichever view drew a run first. Offscreen, on runs trained here.

#include <QComboBox>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include "compare_figure.h"
#include "compare_view.h"
#include "figure_builder.h"
#include "lengen/engine/run_file.h"
#include "parallel_view.h"
#include "qcp.h"
#include "run_controller.h"
#include "run_table_model.h"
#include "test_support.h"
#include "training_view.h"

using namespace lengen;

namespace {
std::string runId(const std::string& run) { return engine::readRunInfo(run).runId; }
}  // namespace

class TestRunColours final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void trainingOverlayDrawsOtherRuns();
    void aRunKeepsItsColourAcrossViews();
    void overlayShowsRunsInTheirSwatchColours();  // after it: Compare groups the runs here
    void overlayWithNoRunShownNamesEveryCurve();
    void oneColourPerValueAndSwatchesFollowWhatIsDrawn();
    void aClosedRunLeavesNoCurveAxesOrLegend();
    void theTrainTabDrawsARunInItsColour();

private:
    std::string m_runs, m_rope, m_nope, m_ropeSeed2;
};

void TestRunColours::initTestCase()
{
    m_runs = test::scratchDir("run-colours");
    m_rope = test::trainTiny(m_runs, "rope", 1);
    m_nope = test::trainTiny(m_runs, "nope", 1);
    m_ropeSeed2 = test::trainTiny(m_runs, "rope", 2);
    for (const auto& run : {m_rope, m_nope, m_ropeSeed2})
        test::evaluateSmall(run, {"standard"});
}

void TestRunColours::trainingOverlayDrawsOtherRuns()
{
    ui::RunController controller;
    ui::TrainingView view(controller);
    view.showRunLog(QString::fromStdString(m_rope));
    QCOMPARE(view.lossFigure().series.size(), size_t(2));  // raw + EMA of the shown run
    const auto failed =
        view.setOverlays({QString::fromStdString(m_rope), QString::fromStdString(m_nope),
                          QFileInfo(QString::fromStdString(m_ropeSeed2)).path(),
                          QStringLiteral("/nonexistent/run.h5")});
    QCOMPARE(failed.size(), 1);
    QVERIFY(failed.front().startsWith("/nonexistent/run.h5"));
    QCOMPARE(view.overlays().size(), 2);  // the shown run is not drawn twice; a folder is a run
    const auto f = view.lossFigure();
    QCOMPARE(f.series.size(), size_t(3));  // each run's smoothed curve
    QVERIFY(QString::fromStdString(f.series[1].name).startsWith("NoPE seed 1"));
    QVERIFY(QString::fromStdString(f.series[2].name).startsWith("RoPE seed 2"));
    const auto log = engine::readTrainLog(m_nope);
    QCOMPARE(f.series[1].x.size(), log.step.size());
    QCOMPARE(f.series[1].y.front(),
             log.loss.front());  // smoothed like the shown run: EMA from the first
    QVERIFY(f.series[0].color != f.series[1].color && f.series[1].color != f.series[2].color &&
            f.series[0].color != f.series[2].color);
    // The excess-loss choice applies to every run.
    view.findChild<QComboBox*>()->setCurrentIndex(1);
    QCOMPARE(view.lossFigure().series[1].y.front(), log.excessLoss.front());
    view.setOverlays({});
    QCOMPARE(view.lossFigure().series.size(), size_t(2));
}

// Issue 70, defect 17: with Compare's default grouping (two RoPE seeds as one curve, their
// swatches in the group's colour) the overlay drew each run in a colour of its own, matching
// neither. It draws each run as its swatch shows it, a group's later run dashed.
void TestRunColours::overlayShowsRunsInTheirSwatchColours()
{
    ui::CompareView compare;
    compare.setRuns({QString::fromStdString(m_rope), QString::fromStdString(m_ropeSeed2),
                     QString::fromStdString(m_nope)});
    QCOMPARE(compare.spec().series.size(), size_t(2));  // RoPE (N=2) and NoPE
    ui::RunTableModel table;
    table.setFolders({QString::fromStdString(m_runs)});
    const auto swatch = [&table](const std::string& run) {
        const int row = table.rowOfPath(QString::fromStdString(run));
        return table.data(table.index(row, ui::RunTableModel::Task), Qt::DecorationRole)
            .value<QColor>();
    };
    QCOMPARE(swatch(m_rope), swatch(m_ropeSeed2));  // the group's colour
    QCOMPARE(swatch(m_rope), QColor(QString::fromStdString(compare.spec().series[0].color)));
    ui::RunController controller;
    ui::TrainingView view(controller);
    view.showRunLog(QString::fromStdString(m_nope));
    view.setOverlays({QString::fromStdString(m_rope), QString::fromStdString(m_ropeSeed2)});
    const auto figure = view.lossFigure();
    QCOMPARE(figure.series.size(), size_t(3));
    for (const auto& s : figure.series) {
        const bool nope = s.name.find(runId(m_nope)) != std::string::npos;
        const bool second = s.name.find(runId(m_ropeSeed2)) != std::string::npos;
        QCOMPARE(QColor(QString::fromStdString(s.color)), swatch(nope     ? m_nope
                                                                 : second ? m_ropeSeed2
                                                                          : m_rope));
        QCOMPARE(s.dashed, second);  // the group's second run, told apart
    }
}

// Found under Xvfb (issue 70): overlaying runs with no run open drew two nameless legend
// entries ("· EMA 0.90"), the empty shown run's. Only the overlaid runs are drawn, each named.
void TestRunColours::overlayWithNoRunShownNamesEveryCurve()
{
    ui::RunController controller;
    ui::TrainingView view(controller);
    QVERIFY(view.setOverlays({QString::fromStdString(m_rope), QString::fromStdString(m_nope)})
                .isEmpty());
    const auto f = view.lossFigure();
    QCOMPARE(f.series.size(), size_t(2));
    for (const auto& s : f.series)
        QVERIFY2(s.name.find("(" + runId(m_rope) + ")") != std::string::npos ||
                     s.name.find("(" + runId(m_nope) + ")") != std::string::npos,
                 s.name.c_str());
    int entries = 0;  // the plots' legends list named curves only
    for (auto* plot : view.findChildren<QCustomPlot*>())
        for (int i = 0; i < plot->legend->itemCount(); ++i)
            if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i))) {
                const QString name = item->plottable()->name();
                QVERIFY2(!name.isEmpty() && !name.startsWith(QStringLiteral("·")),
                         qPrintable(name));
                ++entries;
            }
    QVERIFY(entries >= 2);
}

void TestRunColours::aRunKeepsItsColourAcrossViews()
{
    // The comparison, the overlay and the run table agree on a run's colour, whichever view
    // drew it first and in whatever order the runs are listed.
    ui::RunController controller;
    ui::TrainingView view(controller);
    view.showRunLog(QString::fromStdString(m_ropeSeed2));
    view.setOverlays({QString::fromStdString(m_nope), QString::fromStdString(m_rope)});
    const auto overlay = view.lossFigure();
    auto colorIn = [](const plots::FigureSpec& f, const std::string& id) {
        for (const auto& s : f.series)
            if (s.name.find("(" + id + ")") != std::string::npos)
                return s.color;
        return std::string("missing");
    };
    ui::CompareView compare;
    compare.setRuns({QString::fromStdString(m_rope), QString::fromStdString(m_ropeSeed2),
                     QString::fromStdString(m_nope)});
    // By default the two RoPE seeds are one curve (issue 42), N in its legend.
    QCOMPARE(compare.spec().series.size(), size_t(2));
    QVERIFY2(compare.spec().series[0].name.find("RoPE (N=2, min-max)") == 0,
             compare.spec().series[0].name.c_str());
    compare.setGrouping(ui::CompareGroup::EachRun);  // a curve per run, each in its run's colour
    QCOMPARE(compare.spec().series.size(), size_t(3));
    ui::RunTableModel table;
    table.setFolders({QString::fromStdString(m_runs)});
    for (const auto& run : {m_rope, m_nope, m_ropeSeed2}) {
        const auto id = runId(run);
        QCOMPARE(colorIn(compare.spec(), id), colorIn(overlay, id));
        QCOMPARE(colorIn(compare.spec(), id), plots::runColor(id));
        const int row = table.rowOfPath(QString::fromStdString(run));
        QVERIFY(row >= 0);
        const auto swatch =
            table.data(table.index(row, ui::RunTableModel::Task), Qt::DecorationRole);
        QCOMPARE(swatch.value<QColor>(), QColor(QString::fromStdString(plots::runColor(id))));
    }
    // The export writes the colours drawn.
    QTemporaryDir tmp;
    QVERIFY(compare.exportTo(tmp.path() + "/c.svg", 72));
    QFile svg(tmp.path() + "/c.svg");
    QVERIFY(svg.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(svg.readAll()).toLower();
    QVERIFY(text.contains(QString::fromStdString(plots::runColor(runId(m_nope))).toLower()));
}

// Issue 80, defect 23: Compare's group of an encoding and the Hyperparameters tab's lines of
// that encoding (colour by pe) are one colour, plots::categoryColor; a run's swatch in the
// Runs list shows while a view draws it, and goes when it leaves Compare.
void TestRunColours::oneColourPerValueAndSwatchesFollowWhatIsDrawn()
{
    ui::CompareOptions byPe;
    byPe.group = ui::CompareGroup::PositionEncoding;
    const QStringList all{QString::fromStdString(m_rope), QString::fromStdString(m_ropeSeed2),
                          QString::fromStdString(m_nope)};
    const auto grouped = ui::compareRuns(all, "standard", false, byPe);
    QCOMPARE(grouped.figure.series.size(), size_t(2));
    QVERIFY2(grouped.figure.series[0].name.find("RoPE") == 0,
             grouped.figure.series[0].name.c_str());
    QCOMPARE(grouped.figure.series[0].color, plots::categoryColor("RoPE"));

    ui::ParallelView plot;
    plots::ParallelSpec spec;
    spec.axes = {plots::ParallelAxis{"pe", true, {"NoPE", "RoPE"}},
                 plots::ParallelAxis{"final_loss", false, {}, 0, 1}};
    spec.values = {0, 0.5, 1, 0.25};
    spec.colorAxis = 0;
    plot.setSpec(spec);
    QCOMPARE(
        plot.spec().axes[0].categoryColors,
        (std::vector<std::string>{plots::categoryColor("NoPE"), plots::categoryColor("RoPE")}));

    ui::RunTableModel table;
    table.setFolders({QString::fromStdString(m_runs)});
    const auto swatch = [&table](const std::string& run) {
        const int row = table.rowOfPath(QString::fromStdString(run));
        return table.data(table.index(row, ui::RunTableModel::Task), Qt::DecorationRole);
    };
    plots::setRunsDrawn("train", {});  // no overlay: Compare alone draws runs here
    QCOMPARE(swatch(m_nope).value<QColor>(),
             QColor(QString::fromStdString(grouped.figure.series[1].color)));
    QCOMPARE(swatch(m_ropeSeed2).value<QColor>(),
             QColor(QString::fromStdString(plots::categoryColor("RoPE"))));
    // NoPE and the second seed leave Compare: their swatches go; the run left is drawn alone,
    // in its own colour again.
    const auto alone = ui::compareRuns({QString::fromStdString(m_rope)}, "standard", false, byPe);
    QVERIFY(!swatch(m_nope).isValid());
    QVERIFY(!swatch(m_ropeSeed2).isValid());
    QCOMPARE(swatch(m_rope).value<QColor>(),
             QColor(QString::fromStdString(plots::runColor(runId(m_rope)))));
    QCOMPARE(alone.figure.series[0].color, plots::runColor(runId(m_rope)));
}

// Found in the Xvfb walk: after the open run was deleted (closed), the loss plot kept its axes
// (0-380 steps) and an "EMA 0.90 / loss" legend with no data.
void TestRunColours::aClosedRunLeavesNoCurveAxesOrLegend()
{
    ui::RunController controller;
    ui::TrainingView view(controller);
    view.showRunLog(QString::fromStdString(m_rope));
    auto* loss = view.findChild<QCustomPlot*>("lossPlot");
    QVERIFY(loss);
    QVERIFY(loss->xAxis->range().upper > 1);
    view.showRunLog(QString());
    int entries = 0;
    for (int i = 0; i < loss->legend->itemCount(); ++i)
        entries += qobject_cast<QCPPlottableLegendItem*>(loss->legend->item(i)) != nullptr;
    QCOMPARE(entries, 0);
    QCOMPARE(loss->xAxis->range().upper, 1.0);
}

// Issue 80, defect 23 (the Xvfb walk): the Train tab drew the open run blue alone and in its
// own colour once runs were overlaid, its per-position panel orange. It draws the run in the
// colour it has everywhere: loss, its lightened raw trace, the per-position curve, the swatch.
void TestRunColours::theTrainTabDrawsARunInItsColour()
{
    ui::RunController controller;
    ui::TrainingView view(controller);
    view.showRunLog(QString::fromStdString(m_nope));
    const auto colour = plots::runColor(runId(m_nope));
    const auto alone = view.lossFigure();
    QCOMPARE(alone.series.size(), size_t(2));
    QCOMPARE(alone.series[1].color, colour);
    QVERIFY(alone.series[0].color != colour);  // the raw trace, lightened
    auto* pointwise = view.findChild<QCustomPlot*>("pointwisePlot");
    QVERIFY(pointwise);
    QCOMPARE(pointwise->graph(0)->pen().color(), QColor(QString::fromStdString(colour)));
    view.setOverlays({QString::fromStdString(m_rope)});
    QCOMPARE(view.lossFigure().series[0].color, colour);  // the same once runs are overlaid
    ui::RunTableModel table;
    table.setFolders({QString::fromStdString(m_runs)});
    const int row = table.rowOfPath(QString::fromStdString(m_nope));
    QCOMPARE(
        table.data(table.index(row, ui::RunTableModel::Task), Qt::DecorationRole).value<QColor>(),
        QColor(QString::fromStdString(colour)));  // the swatch: drawn here, in it
}

QTEST_MAIN(TestRunColours)
#include "tst_run_colours.moc"
