// Issue 13's interactions on real runs, offscreen: the attention view counts prompts, layers
// and heads from 0, shows the mean over heads, a chosen query's row and the layers x heads
// grid; the Sweeps tab follows its cells; interventions beside the untouched model (the Train
// tab's overlay and the run colours are tst_run_colours).

#include <QApplication>
#include <QComboBox>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include <algorithm>
#include <cmath>

#include "attention_grid.h"
#include "attention_view.h"
#include "compare_view.h"
#include "figure_builder.h"
#include "figure_view.h"
#include "intervention_dialog.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/interventions.h"
#include "lengen/engine/probes.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/seed_stats.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/trainer.h"
#include "open_run_model.h"
#include "parallel_view.h"
#include "plot_style.h"
#include "qcp.h"
#include "run_controller.h"
#include "run_figures.h"
#include "run_table_model.h"
#include "sweeps_view.h"
#include "test_support.h"
#include "training_view.h"
#include <QCheckBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableWidget>
#include <filesystem>

using namespace lengen;

namespace {

class Quiet : public engine::TrainObserver {};
class Silent : public engine::AnalysisObserver {};

}  // namespace

class TestViews final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void parallelAxisNameDragsOntoAnother();
    void parallelAxisMoveShowsWhereAndCategoryNamesBrush();
    void initTestCase();
    void attentionCountsFromZeroAndAveragesHeads();
    void attentionRowOfTheChosenQuery();
    void attentionGridOpensTheClickedMap();
    void sweepsViewFollowsTheCellsAndDrawsTheGrid();
    void interventionsBesideTheUntouchedModel();
    void figureViewsSayNoRunIsOpen();

private:
    std::string m_runs, m_rope, m_nope;
};

void TestViews::initTestCase()
{
    m_runs = test::scratchDir("views");
    m_rope = test::trainTiny(m_runs, "rope", 1);
    m_nope = test::trainTiny(m_runs, "nope", 1);
    for (const auto& run : {m_rope, m_nope})
        test::evaluateSmall(run, {"standard"});
    engine::RunControl control;
    Silent silent;
    engine::ProbeOptions p;
    p.attention = true;
    p.attentionPrompts = 4;
    p.longPoints = 12;
    p.common.bootstrapTrials = 10;
    p.common.device = "cpu";
    engine::probeRun(m_rope, p, control, silent);
}

void TestViews::attentionCountsFromZeroAndAveragesHeads()
{
    ui::AttentionView view;
    view.resize(900, 700);
    view.setRun(QString::fromStdString(m_rope));
    QVERIFY(view.heatmap());
    // tiny config: 2 layers, 2 heads. The last layer is 1 (it was shown as "2" while heads and
    // prompts counted from 0), and the title says so.
    QCOMPARE(view.layer(), 1);
    auto* layerBox = view.findChild<QSpinBox*>("layer");
    QVERIFY(layerBox);
    QCOMPARE(layerBox->minimum(), 0);
    QCOMPARE(layerBox->maximum(), 1);
    QVERIFY2(QString::fromStdString(view.heatmap()->title).contains("layer 1, head 0"),
             view.heatmap()->title.c_str());

    // The mean over heads is the cell-wise mean of the two heads' maps.
    view.select(0, 0, -1);
    QVERIFY(view.heatmap());
    const auto mean = *view.heatmap();
    QVERIFY2(QString::fromStdString(mean.title).contains("mean of heads"), mean.title.c_str());
    view.select(0, 0, 0);
    const auto h0 = *view.heatmap();
    view.select(0, 0, 1);
    const auto h1 = *view.heatmap();
    QCOMPARE(mean.values.size(), h0.values.size());
    int compared = 0;
    for (size_t i = 0; i < mean.values.size(); ++i)
        if (!std::isnan(mean.values[i])) {
            QVERIFY(std::abs(mean.values[i] - 0.5f * (h0.values[i] + h1.values[i])) < 1e-6f);
            ++compared;
        }
    QVERIFY(compared > 10);
    QVERIFY(h0.values != h1.values);  // two heads that differ, or the mean would prove nothing
}

void TestViews::attentionRowOfTheChosenQuery()
{
    ui::AttentionView view;
    view.resize(900, 700);
    view.setRun(QString::fromStdString(m_rope));
    QVERIFY(view.rowFigure());
    const int tokens = view.heatmap()->rows;
    QCOMPARE(view.query(), tokens - 2);  // the last x token, as the reference's curves use
    view.select(0, 1, 0);
    view.setQuery(5);
    QVERIFY(view.rowFigure());
    const auto& row = *view.rowFigure();
    // keys 0..5: x tokens 0, 2, 4 and y tokens 1, 3, 5; weights of one softmax row sum to 1.
    QCOMPARE(row.series.size(), size_t(2));
    QCOMPARE(row.series[0].x, (std::vector<double>{0, 2, 4}));
    QCOMPARE(row.series[1].x, (std::vector<double>{1, 3, 5}));
    double sum = 0;
    for (const auto& s : row.series)
        for (double w : s.y)
            sum += w;
    QVERIFY2(std::abs(sum - 1) < 1e-3, qPrintable(QString::number(sum)));
    // The same weights as the map's row 5 (layer 1, head 0).
    const auto tile = engine::readAttentionTile(m_rope, "duplicated", 0, 1, 0, 5, 6, 0, 6);
    QCOMPARE(float(row.series[1].y[2]), tile[5]);
    QCOMPARE(row.vlines.size(), size_t(1));
    // Out of range: said, never a crash.
    QVERIFY_THROWS_EXCEPTION(std::exception,
                             figures::attentionRowFigure(m_rope, "duplicated", {}, tokens));
}

void TestViews::attentionGridOpensTheClickedMap()
{
    ui::AttentionView view;
    view.resize(900, 700);
    view.setRun(QString::fromStdString(m_rope));
    QCOMPARE(view.grid()->thumbnailCount(), 0);  // read only when shown
    view.showGrid(true);
    QCOMPARE(view.grid()->thumbnailCount(), 2 * (2 + 1));  // layers x (heads + mean)
    auto* thumb = view.grid()->findChild<QToolButton*>("thumb_0_1");
    QVERIFY(thumb);
    thumb->click();
    QVERIFY(!view.gridShown());
    QCOMPARE(view.layer(), 0);
    QCOMPARE(view.head(), 1);
    QVERIFY(QString::fromStdString(view.heatmap()->title).contains("layer 0, head 1"));

    // A thumbnail pools the map: its cell holds the maximum of the block it covers.
    const auto t = figures::mapThumbnails(m_rope, "duplicated", 0, 4);
    QCOMPARE(t.size, 4);
    QCOMPARE(t.maps.size(), size_t(2 * 3));
    const int tokens = t.tokens;
    const auto full =
        engine::readAttentionTile(m_rope, "duplicated", 0, 1, 1, 0, tokens, 0, tokens);
    float blockMax = 0;
    for (int r = 0; r < tokens / 4; ++r)
        for (int c = 0; c <= r; ++c)
            blockMax = std::max(blockMax, full[size_t(r * tokens + c)]);
    QCOMPARE(t.maps[size_t(1 * 3 + 1)][0], blockMax);
    QVERIFY(std::isnan(t.maps[0][3]));  // above the diagonal: masked
}

void TestViews::sweepsViewFollowsTheCellsAndDrawsTheGrid()
{
    QTemporaryDir tmp;
    const std::string S = tmp.path().toStdString() + "/S";
    std::filesystem::create_directories(S);
    test::writeFile(S, "base.yaml", test::tinyConfig());
    test::writeFile(S, "sweep.yaml",
                    "base: base.yaml\naxes:\n  pe: [rope, nope]\n  seed: 2\n"
                    "stages:\n  eval: {methods: [standard], prompts: 32, bootstrap: 10}\n");
    const auto index = engine::prepareSweep(S);
    ui::SweepsView view;
    QVERIFY(view.setSweep(QString::fromStdString(S)));
    QCOMPARE(view.grid()->rowCount(), 1);
    QCOMPARE(view.grid()->columnCount(), 2);
    QCOMPARE(view.grid()->horizontalHeaderItem(1)->text(), QStringLiteral("nope"));
    QCOMPARE(view.grid()->item(0, 0)->text(), QStringLiteral("·  ·"));  // both seeds pending
    QVERIFY(!view.figure());
    // The cells run elsewhere (as `lengen sweep run-cell` would): the view follows the files.
    const engine::SweepPaths paths{S};
    engine::RunControl control;
    Quiet quiet;
    Silent silent;
    for (const auto& cell : index.cells) {
        engine::TrainOptions o;
        o.runDir = paths.cellDir(cell.name);
        o.device = "cpu";
        o.threads = 1;
        const auto run = engine::train(cell.config, o, control, quiet).runFile;
        engine::EvalOptions e;
        e.methods = {"standard"};
        e.prompts = 32;
        e.common.threads = 1;
        e.common.bootstrapTrials = 10;
        engine::evaluateRun(run, e, control, silent);
        if (cell.index == 0) {
            view.refresh();
            QCOMPARE(view.grid()->item(0, 0)->text(), QStringLiteral("✔  ·"));
        }
    }
    view.refresh();  // new cells done: aggregated and drawn without a click
    QCOMPARE(view.grid()->item(0, 1)->text(), QStringLiteral("✔  ✔"));
    QVERIFY(view.figure());
    QCOMPARE(view.figure()->panels.size(), size_t(1));
    const auto& panel = view.figure()->panels.front();
    QCOMPARE(panel.series.size(), size_t(2));
    QCOMPARE(panel.series[0].name, std::string("RoPE"));
    QCOMPARE(panel.series[1].name, std::string("NoPE"));
    QVERIFY(std::filesystem::exists(S + "/aggregate.h5"));
    // Issue 42: the band is the user's choice; choosing it aggregates again and the title says it.
    auto* band = view.findChild<QComboBox*>("sweepBand");
    QVERIFY(band);
    band->setCurrentIndex(band->findData(int(engine::BandKind::StdErr)));
    QVERIFY2(QString::fromStdString(view.figure()->title).contains("band: mean ± SE"),
             view.figure()->title.c_str());
    QCOMPARE(engine::readAggregate(S + "/aggregate.h5").sets.front().curves.front().band,
             std::string("se"));
    band->setCurrentIndex(0);
    {
        // In the studio the aggregation is a job of the controller, off the GUI thread (issue 39).
        ui::RunController controller;
        ui::SweepsView withJobs;
        withJobs.setController(&controller);
        QVERIFY(withJobs.setSweep(QString::fromStdString(S)));
        QSignalSpy said(&withJobs, &ui::SweepsView::statusMessage);
        std::filesystem::remove(S + "/aggregate.h5");
        withJobs.aggregate();
        const auto jobs = controller.jobs();
        QVERIFY(std::any_of(jobs.begin(), jobs.end(), [](const ui::JobInfo& j) {
            return j.label.rfind("aggregate", 0) == 0 && j.kind == ui::JobKind::Sweep;
        }));
        QVERIFY(QTest::qWaitFor(
            [&] { return std::filesystem::exists(S + "/aggregate.h5") && !said.isEmpty(); },
            30000));
        QCOMPARE(said.last().at(0).toString(), QStringLiteral("Aggregated over seeds"));
        QVERIFY(withJobs.figure());
    }
    // Double-click: a cell's seeds go to Compare together.
    QSignalSpy compare(&view, &ui::SweepsView::compareRequested);
    Q_EMIT view.grid()->cellDoubleClicked(0, 1);
    QCOMPARE(compare.count(), 1);
    QCOMPARE(compare.at(0).at(0).toStringList().size(), 2);
    // Compare groups the four runs by PE: two curves, each the mean of its two seeds with their
    // min-max band.
    QStringList runs;
    for (const auto& cell : index.cells)
        runs << QString::fromStdString(paths.runFile(cell.name));
    const auto grouped =
        ui::compareFigure(runs, "standard", false, nullptr, ui::CompareGroup::PositionEncoding);
    QCOMPARE(grouped.series.size(), size_t(2));
    QCOMPARE(grouped.series[1].name, std::string("NoPE (N=2, min-max)"));
    const auto a = engine::readEvaluations(runs[2].toStdString()).front().curves.front().stats.mean;
    const auto b = engine::readEvaluations(runs[3].toStdString()).front().curves.front().stats.mean;
    for (size_t p = 0; p < a.size(); ++p) {
        QCOMPARE(grouped.series[1].y[p], (a[p] + b[p]) / 2);
        QCOMPARE(grouped.series[1].bandLow[p], std::min(a[p], b[p]));
    }
    QCOMPARE(ui::compareFigure(runs, "standard", false).series.size(),
             size_t(4));  // a curve per run
    // Issue 42: grouped by any keys, with N and the band the user chose; by default every
    // setting that differs but the seed (here the PE); a group mixing more is named.
    ui::CompareOptions byPe;
    byPe.group = ui::CompareGroup::Keys;
    byPe.keys = {"pe"};
    byPe.band = engine::BandKind::StdErr;
    const auto se = ui::compareRuns(runs, "standard", false, byPe);
    QCOMPARE(se.figure.series.size(), size_t(2));
    QCOMPARE(se.figure.series[1].name, std::string("NoPE (N=2, mean ± SE)"));
    for (size_t p = 0; p < a.size(); ++p)  // two runs: SE = |a - b| / 2
        QVERIFY(std::abs(se.figure.series[1].bandHigh[p] -
                         ((a[p] + b[p]) / 2 + std::abs(a[p] - b[p]) / 2)) < 1e-12);
    QVERIFY(se.notes.isEmpty());
    ui::CompareOptions settings;
    settings.group = ui::CompareGroup::Settings;
    const auto byDefault = ui::compareRuns(runs, "standard", false, settings);
    QCOMPARE(byDefault.keys, std::vector<std::string>{"pe"});
    QCOMPARE(byDefault.figure.series[1].name, std::string("NoPE (N=2, min-max)"));
    ui::CompareOptions byTask;
    byTask.group = ui::CompareGroup::Keys;
    byTask.keys = {"task"};
    const auto mixed = ui::compareRuns(runs, "standard", false, byTask);
    QCOMPARE(mixed.figure.series.size(), size_t(1));
    QVERIFY2(mixed.notes.size() == 1 && mixed.notes[0].contains("its 4 runs also differ in pe"),
             qPrintable(mixed.notes.join(" | ")));
    // Issue 41, defect 6: a group of one run keeps the run's own colour (and its swatch); a
    // group of several takes the group's, which its members' swatches show.
    const auto one = ui::compareFigure({runs[0], runs[2], runs[3]}, "standard", false, nullptr,
                                       ui::CompareGroup::PositionEncoding);
    const auto id0 = engine::readRunInfo(runs[0].toStdString()).runId;
    const auto id2 = engine::readRunInfo(runs[2].toStdString()).runId;
    QCOMPARE(one.series[0].color, plots::runColor(id0));
    QCOMPARE(plots::assignedRunColor(id0), plots::runColor(id0));
    QVERIFY(one.series[1].color != plots::runColor(id2));
    QCOMPARE(plots::assignedRunColor(id2), one.series[1].color);
    QString error;
    const QString png = tmp.filePath("grid.png");
    QVERIFY2(view.exportTo(png, 72, &error), qPrintable(error));
    QVERIFY(QFileInfo(png).size() > 1000);
}

void TestViews::interventionsBesideTheUntouchedModel()
{
    // Issue 30: evaluated and probed under interventions, the views show them over (Evaluation)
    // and beside (Attention) the untouched model.
    engine::RunControl control;
    Silent silent;
    engine::EvalOptions e;
    e.methods = {"ood_length"};
    e.prompts = 8;
    e.oodFactor = 3;
    e.common.bootstrapTrials = 10;
    e.common.device = "cpu";
    e.interventions = {"window", "truncate"};
    engine::evaluateRun(m_nope, e, control, silent);
    engine::ProbeOptions p;
    p.attention = true;
    p.attentionPrompts = 2;
    p.longPoints = 12;
    p.common.bootstrapTrials = 10;
    p.common.device = "cpu";
    engine::probeRun(m_nope, p, control, silent);
    p.intervention = "window:local=6";
    engine::probeRun(m_nope, p, control, silent);
    p.intervention = "lambda:global=2,local=4";
    engine::probeRun(m_nope, p, control, silent);
    // Issue 52: the Λ-mask's global keys sit alone between masked keys in a query's row: drawn
    // as dots (a line needs two neighbours), so the row plot does not leave them out.
    figures::MapSelection lambda;
    lambda.intervention = "lambda:global=2,local=4";
    const auto row = figures::attentionRowFigure(m_nope, "long", lambda, 13);
    QVERIFY(row.series.at(0).points && row.series.at(1).points);
    QVERIFY(std::isfinite(row.series[0].y.at(0)) &&
            std::isnan(row.series[0].y.at(1)));  // x_0 alone
    QVERIFY(std::isfinite(row.series[1].y.at(0)) &&
            std::isnan(row.series[1].y.at(1)));  // y_0 alone

    std::vector<std::string> names;
    for (const auto& f : figures::availableFigures(m_nope))
        names.push_back(f.name);
    QVERIFY(std::find(names.begin(), names.end(), "ood_length+window") != names.end());
    const auto fig = figures::makeFigure(m_nope, "ood_length");
    QVERIFY(fig.plot);
    int dashed = 0;
    for (const auto& sr : fig.plot->series)
        if (sr.name == "NoPE + window" || sr.name == "NoPE + truncate") {
            QVERIFY(sr.dashed);
            QVERIFY(!sr.color.empty());
            ++dashed;
        }
    QCOMPARE(dashed, 2);
    QCOMPARE(figures::figureFileName("ood_length+lambda:global=2,local=8"),
             std::string("ood_length+lambda_global=2_local=8"));
    const auto one = figures::makeFigure(m_nope, "ood_length+window");
    QVERIFY(QString::fromStdString(one.plot->title).contains("under window (local=14)"));

    ui::AttentionView view;
    view.resize(1200, 700);
    view.setRun(QString::fromStdString(m_nope));
    QVERIFY(view.interventions().contains("window:local=6"));
    QVERIFY(!view.interventionHeatmap());
    view.setIntervention("window:local=6");
    QVERIFY(view.interventionHeatmap());
    QVERIFY(!view.interventionPlot()->isHidden());
    const auto& h = *view.interventionHeatmap();
    QVERIFY2(QString::fromStdString(h.title).contains("+ window:local=6"), h.title.c_str());
    // Row 13 sees keys 8..13 only: the window's edge is in the map, unlike the untouched one.
    const auto& plain = *view.heatmap();
    QCOMPARE(h.rows, plain.rows);
    const auto at = [&](const plots::HeatmapSpec& m, int r, int c) {
        return m.values[size_t(r * m.cols + c)];
    };
    // Issue 41, defect 1: what the window masks is drawn as masked (blank, like the causal
    // triangle), not as the smallest weight; both maps share one colour range; the right map
    // has its own hover read-out; the row plot holds both models' rows.
    QVERIFY(std::isnan(at(h, 13, 0)));
    QVERIFY(at(h, 13, 8) > 0);
    QVERIFY(at(plain, 13, 0) > 0);
    QVERIFY(h.zMin && plain.zMin && h.zMax && plain.zMax);
    QCOMPARE(*h.zMin, *plain.zMin);
    QCOMPARE(*h.zMax, *plain.zMax);
    double lo = 1e9, hi = -1e9;
    for (const auto* m : {&h, &plain})
        for (float v : m->values)
            if (std::isfinite(v) && v > 0) {
                lo = std::min(lo, double(v));
                hi = std::max(hi, double(v));
            }
    QCOMPARE(*h.zMin, lo);
    QCOMPARE(*h.zMax, hi);
    view.setQuery(13);
    QVERIFY(view.rowFigure());
    QStringList rowNames;
    for (const auto& sr : view.rowFigure()->series)
        rowNames << QString::fromStdString(sr.name);
    QVERIFY2(rowNames.contains("keys x_i") && rowNames.contains("keys x_i · window:local=6"),
             qPrintable(rowNames.join(" | ")));
    const auto& editRow = view.rowFigure()->series[2];
    QVERIFY(editRow.dashed);
    QVERIFY(std::isnan(editRow.y.front()));  // key 0 is masked for query 13: a gap
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    auto* right = view.interventionPlot();
    right->replot();
    auto* rect = right->axisRect();
    const QPoint cell(int(rect->axis(QCPAxis::atBottom)->coordToPixel(0)),
                      int(rect->axis(QCPAxis::atLeft)->coordToPixel(13)));
    QMouseEvent move(QEvent::MouseMove, cell, right->mapToGlobal(cell), Qt::NoButton, Qt::NoButton,
                     Qt::NoModifier);
    QApplication::sendEvent(right, &move);
    QVERIFY2(view.readout().startsWith("window:local=6: query 13") &&
                 view.readout().contains("masked by window:local=6"),
             qPrintable(view.readout()));
    view.setIntervention(QString());
    QVERIFY(view.interventionPlot()->isHidden());

    // The dialog lists what applies (here a Mamba run's list) and takes extra specs.
    ui::InterventionDialog dialog(ui::InterventionDialog::Mode::Evaluate, "run",
                                  {"none", "truncate", "segments", "mamba_dt"});
    QCOMPARE(dialog.findChildren<QCheckBox*>().size(), 3 + 2);  // interventions + 2 methods
    dialog.choose({"truncate", "yarn:factor=4"});
    QCOMPARE(dialog.interventions(), (QStringList{"truncate", "yarn:factor=4"}));
    QCOMPARE(dialog.methods(), (QStringList{"standard", "ood_length"}));

    // Issue 41, defect 8: on a NoPE run the hint shows no rotary spec, the descriptions read as
    // text (not greyed), and a spec the run refuses (or a value out of range for it) is refused
    // in the dialog, OK disabled, before it closes.
    const auto nope = test::loadOne(test::tinyConfig("linear_regression", "nope"));
    QStringList applicable;
    for (const auto& n : engine::applicableInterventions(nope))
        applicable << QString::fromStdString(n);
    ui::InterventionDialog onNope(ui::InterventionDialog::Mode::Evaluate, "nope-run", applicable);
    onNope.setRunConfig(nope);
    auto* extra = onNope.findChild<QLineEdit*>("extra");
    QVERIFY(!extra->placeholderText().isEmpty());
    for (const char* rotary : {"yarn", "pi:", "ntk"})
        QVERIFY2(!extra->placeholderText().contains(rotary), qPrintable(extra->placeholderText()));
    for (auto* label : onNope.findChildren<QLabel*>())
        QVERIFY(label->isEnabled());
    auto* ok = onNope.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    QVERIFY(!ok->isEnabled());  // nothing chosen yet
    extra->setText("yarn:factor=4");
    QVERIFY(!ok->isEnabled());
    auto problem = [&] {
        QString text;
        for (auto* label : onNope.findChildren<QLabel*>())
            if (label->text().contains("refused") || label->text().contains("is not"))
                text = label->text();
        return text;
    };
    QVERIFY2(problem().contains("yarn:factor=4 is refused") && problem().contains("no rotation"),
             qPrintable(problem()));
    extra->setText("window:local=0");
    QVERIFY(!ok->isEnabled());
    QVERIFY2(problem().contains("local=0 is not"), qPrintable(problem()));
    extra->setText("window:local=4");
    QVERIFY(problem().isEmpty());
    QVERIFY(ok->isEnabled());
}

// Issue 41, defect 6: Compare's config-difference table shows 11.5556, not 11.555555555555555
// (the exact text in the tooltip), and "—" where a run's config lacks the key.
// Issue 41, defect 9: with no run open a figure view says so, not "no evaluation stored for this
// run" (its text for an open run without results); closing the run says it again.
void TestViews::figureViewsSayNoRunIsOpen()
{
    ui::FigureView view([](const auto&) { return true; },
                        QStringLiteral("No evaluation stored for this run."));
    auto* empty = view.findChild<QLabel*>("emptyText");
    QVERIFY(empty->text().startsWith("No run open"));
    ui::FigureView none([](const auto&) { return false; },
                        QStringLiteral("No evaluation stored for this run."));
    none.setRun(QString::fromStdString(m_nope));  // a run, but nothing this view shows
    QCOMPARE(none.findChild<QLabel*>("emptyText")->text(),
             QStringLiteral("No evaluation stored for this run."));
    none.setRun(QString());
    QVERIFY(none.findChild<QLabel*>("emptyText")->text().startsWith("No run open"));
    // The Attention view too.
    ui::AttentionView attention;
    QVERIFY(attention.findChild<QLabel*>("emptyText")->text().startsWith("No run open"));
    attention.setRun(QString::fromStdString(m_nope));  // probed: no (it was never probed)
    QVERIFY(
        attention.findChild<QLabel*>("emptyText")->text().startsWith("No attention maps stored"));
    attention.setRun(QString());
    QVERIFY(attention.findChild<QLabel*>("emptyText")->text().startsWith("No run open"));
}

// Issue 72: pressing an axis's name (above the plot) and releasing over another axis asks to
// move it there; a press on the plot itself still brushes.
void TestViews::parallelAxisNameDragsOntoAnother()
{
    ui::ParallelView view;
    view.resize(640, 400);
    plots::ParallelSpec s;
    for (const char* name : {"a", "b", "c"})
        s.axes.push_back(plots::ParallelAxis{name, false, {}});
    s.values = {0.1, 0.5, 0.9, 0.8, 0.2, 0.4};
    plots::fitAxes(s);
    view.setSpec(s);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy moved(&view, &ui::ParallelView::axisMoveRequested);
    const int names = int(view.fractionY(1.0)) - 20;
    QTest::mousePress(&view, Qt::LeftButton, {}, QPoint(int(view.axisX(0)), names));
    QTest::mouseRelease(&view, Qt::LeftButton, {}, QPoint(int(view.axisX(2)) + 5, names + 80));
    QCOMPARE(moved.size(), 1);
    QCOMPARE(moved.front().at(0).toString(), QStringLiteral("a"));
    QCOMPARE(moved.front().at(1).toString(), QStringLiteral("c"));
    const int mid = int(view.fractionY(0.5));
    QTest::mousePress(&view, Qt::LeftButton, {}, QPoint(int(view.axisX(1)), mid - 30));
    QTest::mouseMove(&view, QPoint(int(view.axisX(1)), mid + 30));
    QTest::mouseRelease(&view, Qt::LeftButton, {}, QPoint(int(view.axisX(1)), mid + 30));
    QCOMPARE(moved.size(), 1);  // a brush, not a move
    QCOMPARE(int(view.spec().brushes.size()), 1);
}

// Issue 80, defect 24: while an axis's name is dragged, the axis whose place it would take is
// marked (nothing showed until the drop); a drag started on a category's name ("RoPE", drawn
// left of its axis) brushes that axis (it made nothing).
void TestViews::parallelAxisMoveShowsWhereAndCategoryNamesBrush()
{
    ui::ParallelView view;
    view.resize(640, 400);
    plots::ParallelSpec s;
    s.axes.push_back(plots::ParallelAxis{"pe", true, {"NoPE", "RoPE"}});
    for (const char* name : {"b", "c"})
        s.axes.push_back(plots::ParallelAxis{name, false, {}});
    s.values = {0, 0.5, 0.9, 1, 0.2, 0.4};
    plots::fitAxes(s);
    view.setSpec(s);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QTRY_VERIFY(view.imageCurrent());
    const int names = int(view.fractionY(1.0)) - 20;
    const QRect band(int(view.axisX(0)) + 3, int(view.fractionY(0.75)), 6,
                     int(view.fractionY(0.25) - view.fractionY(0.75)));
    const QImage before = view.grab(band).toImage();
    QTest::mousePress(&view, Qt::LeftButton, {}, QPoint(int(view.axisX(2)), names));
    QTest::mouseMove(&view, QPoint(int(view.axisX(0)) + 20, names + 60));
    QCOMPARE(view.axisMove(), std::make_pair(2, 0));
    const QImage during = view.grab(band).toImage();
    int marked = 0;
    for (int y = 0; y < during.height(); ++y)
        for (int x = 0; x < during.width(); ++x)
            marked += during.pixelColor(x, y) != before.pixelColor(x, y);
    QVERIFY2(marked > during.width() * during.height() / 2, qPrintable(QString::number(marked)));
    QTest::mouseRelease(&view, Qt::LeftButton, {}, QPoint(int(view.axisX(0)) + 20, names + 60));
    QCOMPARE(view.axisMove(), std::make_pair(-1, -1));

    // A drag from the name "RoPE" (left of the pe axis) down to "NoPE": a brush on pe.
    const QFontMetricsF tm(plots::style::font(plots::style::kTickPt - 1));
    const double rope = view.fractionY(plots::axisFraction(view.spec().axes[0], 1));
    const double nope = view.fractionY(plots::axisFraction(view.spec().axes[0], 0));
    const int x = int(view.axisX(0) - 6 - tm.horizontalAdvance("RoPE") / 2);
    QTest::mousePress(&view, Qt::LeftButton, {}, QPoint(x, int(rope)));
    QTest::mouseMove(&view, QPoint(x, int((rope + nope) / 2)));
    QTest::mouseMove(&view, QPoint(x, int(nope)));
    QTest::mouseRelease(&view, Qt::LeftButton, {}, QPoint(x, int(nope)));
    QCOMPARE(int(view.spec().brushes.size()), 1);
    QCOMPARE(view.spec().brushes[0].axis, 0);
}

QTEST_MAIN(TestViews)
#include "tst_views.moc"
