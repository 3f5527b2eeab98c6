// The layout check over the real window (issue 80 §3): the studio at 1280x800, offscreen, with
// representative runs (three encodings evaluated, one probed, a sweep aggregated), visits every
// tab and state that draws a plot and asks plots::layoutProblems of each plot shown: a data
// area of at least 300 x 200 px (or a page that scrolls to give it that), no two texts over
// each other or cut by an edge, no annotation on a curve, an inset legend hiding at most a
// tenth of the data. A plot added later joins by a row in states() below.

#include <QAbstractScrollArea>
#include <QCheckBox>
#include <QScrollArea>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QThread>

#include <filesystem>
#include <functional>

#include "analysis_progress.h"
#include "attention_view.h"
#include "compare_view.h"
#include "figure_view.h"
#include "hparams_view.h"
#include "layout_check.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/probes.h"
#include "lengen/engine/run_control.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_aggregate.h"
#include "lengen/engine/trainer.h"
#include "main_window.h"
#include "qcp.h"
#include "setup_panel.h"
#include "studio_test_support.h"
#include "sweeps_view.h"
#include "test_support.h"
#include "training_view.h"

using namespace lengen;

namespace {

struct Quiet final : engine::TrainObserver {};
struct Silent final : engine::AnalysisObserver {};

// The part of `plot` a person sees: all of it inside a scroll area (it scrolls to show the
// rest), else what its parents leave visible.
QRectF visiblePart(QCustomPlot* plot)
{
    for (QWidget* w = plot->parentWidget(); w; w = w->parentWidget())
        if (qobject_cast<QAbstractScrollArea*>(w))
            return QRectF(plot->rect());
    return QRectF(plot->visibleRegion().boundingRect());
}

QCheckBox* checkBox(QWidget* in, const QString& text)
{
    for (auto* b : in->findChildren<QCheckBox*>())
        if (b->text() == text)
            return b;
    return nullptr;
}

// One state of the window that draws plots: how to get there.
struct State {
    const char* name;
    std::function<void(studio::MainWindow&)> enter;
};

}  // namespace

class TestLayout final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void everyPlotKeepsItsRoom_data();
    void everyPlotKeepsItsRoom();
    void theCheckSeesWhatIsWrong();
    void aStatusMessageTakesTheRoomOfAnAnalysisText();

private:
    std::vector<State> states() const;
    QString m_runs, m_rope, m_nope, m_alibi, m_sweep, m_taskSweep;
};

void TestLayout::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("lengen-tests"));
    QSettings().clear();  // the window's remembered geometry and docks: each run from defaults
    const std::string runs = test::scratchDir("layout-runs");
    m_runs = QString::fromStdString(runs);
    // Three encodings, one trained longer (Compare draws each run to its own last step).
    const auto rope = test::trainTiny(runs, "rope", 1, 40);
    const auto nope = test::trainTiny(runs, "nope", 1, 20);
    const auto alibi = test::trainTiny(runs, "alibi", 1, 20);
    for (const auto& run : {rope, nope, alibi})
        test::evaluateSmall(run, {"standard", "ood_length"});
    engine::ProbeOptions p = engine::ProbeOptions::all();
    p.prompts = 4;
    p.testLength = 40;
    p.noiseCounts = {2, 3};
    p.attentionPrompts = 4;
    p.longPoints = 12;
    p.common.bootstrapTrials = 10;
    p.common.device = "cpu";
    p.common.threads = 1;
    engine::RunControl control;
    Silent silent;
    engine::probeRun(rope, p, control, silent);
    m_rope = QString::fromStdString(rope);
    m_nope = QString::fromStdString(nope);
    m_alibi = QString::fromStdString(alibi);
    // A sweep of 2 encodings x 2 seeds, trained and evaluated as its cells would be.
    const std::string S = runs + "/sweep";
    std::filesystem::create_directories(S);
    test::writeFile(S, "base.yaml", test::tinyConfig());
    test::writeFile(S, "sweep.yaml",
                    "base: base.yaml\naxes:\n  pe: [rope, nope]\n  seed: 2\n"
                    "stages:\n  eval: {methods: [standard], prompts: 16, bootstrap: 10}\n");
    const auto index = engine::prepareSweep(S);
    const engine::SweepPaths paths{S};
    Quiet quiet;
    for (const auto& cell : index.cells) {
        engine::TrainOptions o;
        o.runDir = paths.cellDir(cell.name);
        o.device = "cpu";
        o.threads = 1;
        test::evaluateSmall(engine::train(cell.config, o, control, quiet).runFile, {"standard"});
    }
    m_sweep = QString::fromStdString(S);
    // A sweep over three tasks (its aggregate written as aggregating would write it): a grid of
    // three panels in a row, what the Xvfb walk found 265 px wide at 1280 x 800.
    const std::string T = runs + "/tasks";
    std::filesystem::create_directories(T);
    test::writeFile(T, "base.yaml", test::tinyConfig());
    test::writeFile(T, "sweep.yaml", "base: base.yaml\naxes:\n  pe: [rope, nope]\n");
    engine::prepareSweep(T);
    engine::SweepAggregate a;
    a.sweep = "tasks";
    a.groupBy = {"task", "pe"};
    for (const char* task :
         {"linear_regression", "sparse_linear_regression", "relu_2nn_regression"})
        for (const char* pe : {"rope", "nope"}) {
            engine::AggregateSet set;
            set.kind = "eval";
            set.name = "standard";
            set.group = std::string("task=") + task + ",pe=" + pe;
            set.groupAxes = {{"task", task}, {"pe", pe}};
            set.task = task;
            set.trainPoints = set.trainedPoints = 7;
            set.nPoints = 12;
            set.dims = 3;
            set.zeroEstimator = 3;
            engine::AggregateCurve c;
            c.key = c.label = pe;
            c.transformer = true;
            for (int k = 0; k < 12; ++k) {
                c.mean.push_back(3.0 / (1 + k) + (k > 7 ? 0.3 * (k - 7) : 0));
                c.low.push_back(c.mean.back() * 0.8);
                c.high.push_back(c.mean.back() * 1.2);
                c.seeds.push_back(2);
            }
            c.band = "min-max";
            set.curves.push_back(c);
            a.sets.push_back(set);
        }
    engine::writeAggregate(engine::aggregateFileFor(T), a);
    m_taskSweep = QString::fromStdString(T);
}

// Every state that draws a plot, in the order a user meets them.
std::vector<State> TestLayout::states() const
{
    const QStringList three = {m_rope, m_nope, m_alibi};
    auto tab = [](studio::MainWindow& w, QWidget* page) { w.tabs()->setCurrentWidget(page); };
    auto setup = [](studio::MainWindow& w) { return w.findChild<ui::SetupPanel*>(); };
    return {
        {"Set up", [=](studio::MainWindow& w) { tab(w, setup(w)); }},
        {"Set up, steps warning",
         [=](studio::MainWindow& w) {
             tab(w, setup(w));
             setup(w)->setSteps(300);  // the quick preset's curriculum needs more: warned
         }},
        {"Train",
         [=](studio::MainWindow& w) {
             w.openRun(m_rope);
             tab(w, w.trainingView());
         }},
        {"Train, overlays",
         [=](studio::MainWindow& w) {
             w.openRun(m_rope);
             w.overlayTraining({m_nope, m_alibi});
             tab(w, w.trainingView());
         }},
        {"Evaluation, legend inside",
         [=](studio::MainWindow& w) {
             w.openRun(m_rope);
             tab(w, w.evaluationView());
             w.evaluationView()->showFigure(QStringLiteral("standard"));
         }},
        {"Evaluation, legend outside",
         [=](studio::MainWindow& w) {
             w.openRun(m_rope);
             tab(w, w.evaluationView());
             w.evaluationView()->showFigure(QStringLiteral("standard"));
             checkBox(w.evaluationView(), QStringLiteral("legend outside"))->setChecked(true);
         }},
        {"Attention",
         [=](studio::MainWindow& w) {
             w.openRun(m_rope);
             tab(w, w.attentionView());
         }},
        {"Probes",
         [=](studio::MainWindow& w) {
             w.openRun(m_rope);
             tab(w, w.probesView());
         }},
        {"Compare, one method",
         [=](studio::MainWindow& w) {
             w.compareRuns(three);
             tab(w, w.compareView());
             w.compareView()->setMethod(QStringLiteral("standard"));
         }},
        {"Compare, all methods as panels",
         [=](studio::MainWindow& w) {
             w.compareRuns(three);
             tab(w, w.compareView());
             w.compareView()->setMethod(ui::CompareView::allMethodsText());
         }},
        {"Compare, logged column",
         [=](studio::MainWindow& w) {
             w.compareRuns(three);
             tab(w, w.compareView());
             w.compareView()->setMethod(QStringLiteral("training: loss"));
         }},
        {"Hyperparameters", [=](studio::MainWindow& w) { tab(w, w.hparamsView()); }},
        {"Sweeps, empty", [=](studio::MainWindow& w) { tab(w, w.findChild<ui::SweepsView*>()); }},
        {"Sweeps, grid figure",
         [=](studio::MainWindow& w) {
             auto* sweeps = w.findChild<ui::SweepsView*>();
             tab(w, sweeps);
             sweeps->setSweep(m_sweep);
             sweeps->aggregate();
         }},
        {"Sweeps, three tasks",
         [=](studio::MainWindow& w) {
             auto* sweeps = w.findChild<ui::SweepsView*>();
             tab(w, sweeps);
             sweeps->setSweep(m_taskSweep);
         }},
    };
}

void TestLayout::everyPlotKeepsItsRoom_data()
{
    QTest::addColumn<int>("state");
    const auto all = states();
    for (size_t i = 0; i < all.size(); ++i)
        QTest::newRow(all[i].name) << int(i);
}

void TestLayout::everyPlotKeepsItsRoom()
{
    QFETCH(int, state);
    studio::MainWindow w(test::studioOptions(m_runs));
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    states()[size_t(state)].enter(w);
    QTest::qWait(300);  // queued replots, the Hyperparameters image, the sweep's aggregate job
    test::waitIdle(w.controller());
    QCoreApplication::processEvents();
    // LENGEN_LAYOUT_SHOTS=DIR: each state's window as a PNG, to look at.
    if (const QString shots = qEnvironmentVariable("LENGEN_LAYOUT_SHOTS"); !shots.isEmpty())
        w.grab().save(shots + "/" + QString(QTest::currentDataTag()).replace(' ', '_') + ".png");
    QStringList problems;
    int checked = 0;
    for (auto* plot : w.tabs()->currentWidget()->findChildren<QCustomPlot*>()) {
        if (!plot->isVisibleTo(&w))
            continue;
        plot->replot(QCustomPlot::rpImmediateRefresh);
        ++checked;
        if (const QString shots = qEnvironmentVariable("LENGEN_LAYOUT_SHOTS"); !shots.isEmpty())
            plot->grab().save(QStringLiteral("%1/%2-plot%3.png")
                                  .arg(shots, QString(QTest::currentDataTag()).replace(' ', '_'))
                                  .arg(checked));  // the whole plot, also where it scrolls
        // The legend is there without scrolling sideways (issue 80: the three tasks' shared
        // legend lay past 1280 px, beside three panels).
        for (QWidget* a = plot->parentWidget(); a; a = a->parentWidget())
            if (auto* area = qobject_cast<QAbstractScrollArea*>(a)) {
                if (plot->legend->visible() &&
                    plot->legend->outerRect().right() > area->viewport()->width())
                    problems << QStringLiteral("plot %1: its legend is %2 px past the view's "
                                               "right edge")
                                    .arg(checked)
                                    .arg(plot->legend->outerRect().right() -
                                         area->viewport()->width());
                break;
            }
        for (const auto& p : plots::layoutProblems(*plot, visiblePart(plot)))
            problems << QStringLiteral("plot %1 (%2 x %3): %4")
                            .arg(checked)
                            .arg(plot->width())
                            .arg(plot->height())
                            .arg(p);
    }
    // A table beside the plots shows three of its rows, or all it has (issue 80: Compare's
    // config keys showed one, Hyperparameters' runs three of Qt's tall rows).
    for (auto* table : w.tabs()->currentWidget()->findChildren<QTableView*>()) {
        if (!table->isVisibleTo(&w) || !table->model())
            continue;
        const int rows = table->model()->rowCount();
        const int shown = table->viewport()->height() / std::max(1, table->rowHeight(0));
        if (rows > 0 && shown < std::min(3, rows))
            problems << QStringLiteral("table %1 shows %2 of %3 rows (%4 px)")
                            .arg(table->metaObject()->className())
                            .arg(shown)
                            .arg(rows)
                            .arg(table->viewport()->height());
    }
    QVERIFY2(problems.isEmpty(), qPrintable("\n" + problems.join('\n')));
}

// The check itself fails where a person would (a test that cannot fail proves nothing): a plot
// squeezed to 120 px, ticks written over each other, an annotation on a curve.
void TestLayout::theCheckSeesWhatIsWrong()
{
    QCustomPlot plot;
    plot.resize(600, 120);
    auto* g = plot.addGraph();
    g->setData({0, 1, 2, 3}, {0, 1, 0.5, 2});
    plot.xAxis->setRange(0, 3);
    plot.yAxis->setRange(0, 2);
    plot.yAxis->setLabel(QStringLiteral("squared error of a long label"));
    auto* text = new QCPItemText(&plot);
    text->position->setCoords(1, 1);
    text->setText(QStringLiteral("train length"));
    plot.show();
    plot.replot(QCustomPlot::rpImmediateRefresh);
    const auto problems = plots::layoutProblems(plot, QRectF(plot.rect())).join('\n');
    QVERIFY2(problems.contains("data area"), qPrintable(problems));
    QVERIFY2(problems.contains("cut by the plot's edge"), qPrintable(problems));
    QVERIFY2(problems.contains("lies on the curve"), qPrintable(problems));
    plot.yAxis->setLabel({});
    text->setVisible(false);
    plot.resize(600, 400);
    plot.replot(QCustomPlot::rpImmediateRefresh);
    QVERIFY2(plots::layoutProblems(plot, QRectF(plot.rect())).isEmpty(),
             qPrintable(plots::layoutProblems(plot, QRectF(plot.rect())).join('\n')));
}

// The Xvfb pass, N4: beside a running probe's progress text, a long status message lost its
// middle ("Exported 4 figures to /home/…ures: attention.png"). The analysis's text, which the
// Jobs panel shows too, yields its room first, and takes it back when the message goes.
void TestLayout::aStatusMessageTakesTheRoomOfAnAnalysisText()
{
    studio::MainWindow w(test::studioOptions(m_runs));
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const quint64 job = w.controller().enqueue(
        ui::JobKind::Probe, "probe linear_regression RoPE seed 1, every probe",
        [](engine::RunControl& control, engine::AnalysisObserver& o) {
            o.onStage(0, 1, "duplicated");
            o.onProgress("duplicated: instruction position", 20, 24 * 21 + 1);  // 3.96 %
            while (control.shouldContinue())
                QThread::msleep(5);
            return engine::JobResult{};
        });
    auto* area = w.statusBar()->findChild<ui::AnalysisProgressArea*>();
    QVERIFY(area);
    QTRY_VERIFY(area->isVisible() && area->text().contains("instruction position"));
    QCOMPARE(area->perMille(), 39);  // rounded down, as the Jobs panel's "3 %"
    QCoreApplication::processEvents();
    const int before = area->width();
    // Wider than the room the analysis's whole text leaves, narrower than the bar less its
    // narrowest.
    const QFontMetrics fm = w.statusBar()->fontMetrics();
    QString message = QStringLiteral("Exported 4 figures to /home/researcher/length-gen/figures:");
    while (fm.horizontalAdvance(message) < w.statusBar()->width() - before + 100)
        message += QStringLiteral(" attention.png");
    w.statusBar()->showMessage(message);
    QCOMPARE(w.statusBar()->currentMessage(), message);
    QVERIFY2(area->textRoom() < ui::AnalysisProgressArea::fullTextRoom(),
             qPrintable(QString::number(area->textRoom())));
    QVERIFY(area->text().contains("instruction position"));  // whole, in its tooltip
    w.statusBar()->clearMessage();
    QCOMPARE(area->textRoom(), ui::AnalysisProgressArea::fullTextRoom());
    QVERIFY(w.controller().stop(job));
    QVERIFY(test::waitIdle(w.controller()));
}

QTEST_MAIN(TestLayout)
#include "tst_layout.moc"
