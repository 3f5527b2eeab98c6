// The studio's panels on real data, offscreen: inline config validation and a save/load round
// trip, every view populated from a run built here, export from a view, and the GUI thread's
// responsiveness while a run trains in the worker (the Runs list: tst_runs_list).

#include <QCheckBox>
#include <QComboBox>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <thread>

#include "attention_view.h"
#include "compare_view.h"
#include "curve_interactions.h"
#include "field_mark.h"
#include "figure_view.h"
#include "gap_meter.h"
#include "jobs_panel.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/probes.h"
#include "lengen/engine/reference_runs.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/trainer.h"
#include "qcp.h"
#include "reference_import.h"
#include "run_browser.h"
#include "run_form.h"
#include "run_notes_dialog.h"
#include "run_table_model.h"
#include "setup_panel.h"
#include "test_support.h"
#include "training_view.h"

using namespace lengen;

namespace {

class Silent : public engine::AnalysisObserver {};

void copyTree(const QString& from, const QString& to)
{
    QDirIterator it(from, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString src = it.next();
        const QString dst = to + src.mid(from.size());
        QDir().mkpath(QFileInfo(dst).path());
        QFile::copy(src, dst);
    }
}

// A real training whose 4,000 steps log 200 records over a few seconds on one thread (the fused
// layers made 400 steps of this tiny model take ~0.2 s, too short to sample the event loop).
ui::JobWorker::Job latencyTraining(const std::string& tag)
{
    const auto config =
        test::loadOne(QString::fromStdString(test::tinyConfig("linear_regression", "rope", 4000))
                          .replace("logging_steps: 5", "logging_steps: 20")
                          .toStdString());
    engine::TrainOptions o;
    o.outDir = test::scratchDir(tag);
    o.device = "cpu";
    o.threads = 1;
    return [=](engine::RunControl& c, engine::TrainObserver& obs) {
        return engine::train(config, o, c, obs);
    };
}

}  // namespace

class TestPanels final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void setupValidatesInline();
    void configSaveLoadRoundTrip();
    void formShowsTheConfigAndMarksBadFields();
    void sweepQueuesOneRunPerEncoding();
    void viewsPopulateFromARun();
    void trainingViewPlotsLossOrExcessAndExportsWhatItDraws();
    void trainingViewPlotsAnyLoggedColumnBesideTheLoss();
    void copyWithNothingDrawnSaysSo();
    void exportFromAView();
    void guiStaysResponsiveWhileTraining();
    void jobsPanelStaysResponsiveWithFourJobs();

private:
    QString m_configs;
    QTemporaryDir m_tmp;
    std::string m_runs, m_rope, m_alibi;
};

void TestPanels::initTestCase()
{
    m_configs = QString::fromStdString(test::sourcePath("configs"));
    m_runs = test::scratchDir("panels");
    m_rope = test::trainTiny(m_runs, "rope");
    m_alibi = test::trainTiny(m_runs, "alibi", 4, 30);
    for (const auto& run : {m_rope, m_alibi})
        test::evaluateSmall(run, {"standard", "ood_length"}, 16, 2, 20);
    engine::RunControl control;
    Silent silent;
    engine::ProbeOptions p;
    p.attention = p.serialPosition = true;
    p.prompts = 8;
    p.testLength = 24;
    p.instructionPoints = 4;
    p.attentionPrompts = 4;
    p.longPoints = 12;
    p.common.bootstrapTrials = 20;
    p.common.device = "cpu";
    engine::probeRun(m_rope, p, control, silent);
}

void TestPanels::setupValidatesInline()
{
    ui::SetupPanel panel(m_configs);
    QVERIFY(panel.loadFile(m_configs + "/tasks/linear_regression/alibi.yaml"));
    QVERIFY(panel.validate().isEmpty());
    QVERIFY(panel.request().has_value());
    panel.setText(
        QStringLiteral("model:\n  family: Llama2\n  hidden_size: 16\n  num_hidden_layers: 1\n"
                       "  num_attention_heads: 5\ntask:\n  name: linear_regression\n"));
    const auto issues = panel.validate();
    QVERIFY(issues.size() >= 2);  // every problem, not just the first
    QVERIFY2(issues.join('\n').contains("not divisible"), qPrintable(issues.join('\n')));
    QVERIFY2(issues.join('\n').contains(":5:"), qPrintable(issues.join('\n')));  // at its line
    QVERIFY(!panel.request().has_value());
    QSignalSpy requested(&panel, &ui::SetupPanel::trainRequested);
    QVERIFY(panel.loadFile(m_configs + "/quick/linear_regression_rope.yaml"));  // !include parts
    panel.setSteps(7);
    const auto r = panel.request();
    QVERIFY(r.has_value());
    QCOMPARE(r->runs.size(), size_t(1));
    QCOMPARE(r->runs[0].model.hiddenSize, 64);
    QCOMPARE(*r->options.maxSteps, std::int64_t{7});
    // Issue 41: the summary says what Train will run, the Steps field's 7, not the config's.
    QVERIFY2(panel.summaryText().contains("7 steps (Steps field; the config says 15000)"),
             qPrintable(panel.summaryText()));
    panel.setSteps(0);  // "as configured"
    QVERIFY2(panel.summaryText().contains("15000 steps × batch"), qPrintable(panel.summaryText()));
    QVERIFY2(!panel.summaryText().contains("curriculum"), qPrintable(panel.summaryText()));
    QCOMPARE(panel.form()->previewEnd().step, std::int64_t(14999));
    QCOMPARE(panel.form()->previewEnd().points, 9);
}

void TestPanels::configSaveLoadRoundTrip()
{
    // In a copy of the config tree, so includes resolve and nothing is written to the sources.
    const QString root = m_tmp.path() + "/configs";
    copyTree(m_configs, root);
    for (const QString rel :
         {"tasks/linear_regression/fire.yaml", "tasks/sparse_parity/dynamic_yarn.yaml",
          "quick/conjunction_rope.yaml"}) {
        ui::SetupPanel panel(root);
        QVERIFY(panel.loadFile(root + "/" + rel));
        const QString saved = QFileInfo(root + "/" + rel).path() + "/saved_copy.yaml";
        QVERIFY(panel.saveFile(saved));
        const auto a = engine::loadConfigFile((root + "/" + rel).toStdString()).runs;
        const auto b = engine::loadConfigFile(saved.toStdString()).runs;
        QCOMPARE(a.size(), b.size());
        QCOMPARE(engine::toYaml(b[0]), engine::toYaml(a[0]));
    }
}

void TestPanels::formShowsTheConfigAndMarksBadFields()
{
    ui::SetupPanel panel(m_configs);
    QVERIFY(panel.loadFile(m_configs + "/quick/linear_regression_alibi.yaml"));
    auto* form = panel.form();
    auto* heads = qobject_cast<QSpinBox*>(form->fieldFor("model.num_attention_heads"));
    QVERIFY(heads);
    QCOMPARE(heads->value(), 2);
    QCOMPARE(qobject_cast<QSpinBox*>(form->fieldFor("model.hidden_size"))->value(), 64);
    // The form applied to the config it shows changes nothing.
    const auto original =
        engine::loadConfigFile((m_configs + "/quick/linear_regression_alibi.yaml").toStdString());
    engine::RunConfig fromForm = panel.draft().config();
    form->applyTo(fromForm);
    QCOMPARE(engine::toYaml(fromForm), engine::toYaml(original.runs.at(0)));
    // An impossible edit in the form: the YAML is rewritten, validation names the field.
    heads->setValue(5);  // 64 is not divisible by 5
    QVERIFY(panel.text().contains("num_attention_heads: 5"));
    QVERIFY(!panel.validate().isEmpty());
    QVERIFY(lengen::ui::isMarkedRefused(heads));
    QVERIFY(!heads->toolTip().isEmpty());
    heads->setValue(4);
    QVERIFY(panel.validate().isEmpty());
    QVERIFY(heads->styleSheet().isEmpty());
}

void TestPanels::sweepQueuesOneRunPerEncoding()
{
    ui::SetupPanel panel(m_configs);
    QVERIFY(panel.loadFile(m_configs + "/quick/linear_regression_yarn.yaml"));
    panel.setSteps(11);
    const auto base = panel.request();
    QVERIFY(base.has_value());
    QCOMPARE(base->label, QStringLiteral("linear_regression · YaRN"));
    // A preset edited to another PE is named by what it trains (it was the preset's file name).
    ui::SetupPanel edited(m_configs);
    QVERIFY(edited.loadFile(m_configs + "/quick/linear_regression_rope.yaml"));
    edited.setText(edited.text() + "\npatch:\n  name: nope\n  rope_scaling: {type: nope}\n");
    const auto nope = edited.request();
    QVERIFY(nope.has_value());
    QCOMPARE(nope->label, QStringLiteral("linear_regression · NoPE"));
    // "New sweep from this config…" asks the window for the Sweeps tab's New sweep (one path).
    QSignalSpy sweep(&edited, &ui::SetupPanel::sweepRequested);
    edited.findChild<QPushButton*>("newSweep")->click();
    QCOMPARE(sweep.size(), 1);
}

void TestPanels::viewsPopulateFromARun()
{
    const QString rope = QString::fromStdString(m_rope);
    ui::FigureView eval(
        [](const figures::FigureInfo& f) { return f.name == "standard" || f.name == "ood_length"; },
        "none");
    eval.setRun(rope);
    QCOMPARE(eval.figureNames(), (QStringList{"standard", "ood_length"}));
    QVERIFY(eval.showFigure("ood_length"));
    QVERIFY(eval.currentSpec().has_value());
    QVERIFY(eval.plot()->graphCount() >= 4);  // the model and three baselines (+ bands)

    // A view's compute button asks the window for the job; it needs an open run.
    ui::FigureView probes([](const figures::FigureInfo&) { return false; }, "none");
    probes.setComputeAction("Probe this run", "tip");
    QPushButton* compute = nullptr;
    for (auto* b : probes.findChildren<QPushButton*>())
        if (b->text() == "Probe this run")
            compute = b;
    QVERIFY(compute);
    QVERIFY(!compute->isEnabled());
    probes.setRun(rope);
    QVERIFY(compute->isEnabled());
    QSignalSpy asked(&probes, &ui::FigureView::computeRequested);
    compute->click();
    QCOMPARE(asked.count(), 1);

    // The run list says what the analysis file holds, from names alone.
    const auto row = ui::RunTableModel::readRow(rope);
    QCOMPARE(row.evalMethods, (QStringList{"standard", "ood_length"}));
    QCOMPARE(row.probes, (QStringList{"attention", "serial_position"}));
    QCOMPARE(ui::RunTableModel::readRow(QString::fromStdString(m_alibi)).probes, QStringList{});

    ui::AttentionView attention;
    attention.resize(800, 600);
    attention.setRun(rope);
    QCOMPARE(attention.loadedTile(),
             QRect(0, 0, 56, 56));  // first: "duplicated", 4 x 7 points, whole
    QCOMPARE(attention.plot()->plottableCount(), 1);
    // Colours fitted to the visible cells (a fixed 0-1 range left long maps black), and the
    // training length (2 x 7 points = 14 tokens) marked on the map.
    QVERIFY(attention.heatmap() && !attention.heatmap()->zMax);
    QCOMPARE(*attention.heatmap()->boundary, 2 * 7);
    QVERIFY(attention.plot()->itemCount() >= 2);
    attention.showWindow(4, 2, 6);  // a zoomed window loads only that tile
    QCOMPARE(attention.loadedTile().width(), 6);
    // Its export is that tile: the CSV has a row per causal cell of queries 4-9 x keys 2-7.
    const QString tileCsv = m_tmp.path() + "/tile.csv";
    QVERIFY(attention.exportTo(tileCsv, 100));
    QFile tile(tileCsv);
    QVERIFY(tile.open(QIODevice::ReadOnly));
    const auto tileLines = QString::fromUtf8(tile.readAll()).trimmed().split('\n');
    QCOMPARE(tileLines.front(), QString("row,col,value"));
    int causal = 0;
    for (int q = 4; q < 10; ++q)
        for (int k = 2; k < 8; ++k)
            causal += k <= q;
    QCOMPARE(tileLines.size() - 1, causal);
    QVERIFY(tileLines[1].startsWith("4,2,"));
    QVERIFY(attention.exportTo(m_tmp.path() + "/tile.png", 60));
    QVERIFY(!QImage(m_tmp.path() + "/tile.png").isNull());
    // Issue 13, defect 1: open a run without maps: nothing of the previous run stays, and its
    // map is not what an export writes (it was).
    attention.setRun(QString::fromStdString(m_alibi));
    QCOMPARE(attention.plot()->plottableCount(), 0);
    QVERIFY(attention.loadedTile().isEmpty());
    QString nothing;
    QVERIFY(!attention.exportTo(m_tmp.path() + "/stale.csv", 100, &nothing));
    QVERIFY(!QFile::exists(m_tmp.path() + "/stale.csv"));
    QVERIFY(nothing.contains("no attention map"));
    QVERIFY(attention.readout().startsWith("Hover"));

    ui::CompareView compare;
    compare.setRuns({rope, QString::fromStdString(m_alibi)});
    QCOMPARE(compare.spec().series.size(), size_t(2));
    QCOMPARE(QString::fromStdString(compare.spec().series[1].name).left(5), QString("ALiBi"));
    const QString comparePdf = m_tmp.path() + "/compare.pdf";
    QString error;
    QVERIFY2(compare.exportTo(comparePdf, 100, &error), qPrintable(error));
    QFile pdf(comparePdf);
    QVERIFY(pdf.open(QIODevice::ReadOnly));
    QVERIFY(pdf.read(5) == "%PDF-");
    // Its provenance names both runs, their evaluations and the grouping (issue 42).
    QFile compareProv(m_tmp.path() + "/compare.provenance.json");
    QVERIFY(compareProv.open(QIODevice::ReadOnly));
    const auto cp = QJsonDocument::fromJson(compareProv.readAll()).object();
    QCOMPARE(cp["runs"].toArray().size(), 2);
    QCOMPARE(cp["evaluations"].toArray().size(), 2);
    QCOMPARE(cp["grouping"].toObject()["band"].toString(), QString("auto"));
    QCOMPARE(cp["view"].toObject()["figure"].toString(), QString("compare:ood_length"));
    // Issue 52: `lengen export --from` rebuilds a Compare figure (it exited 64): in the recorded
    // format when --out has no extension, and its CSV is the studio's own byte for byte.
    const auto rebuiltPdf =
        test::runLengen({"export", "--from", m_tmp.path() + "/compare.provenance.json", "--out",
                         m_tmp.path() + "/compare-again"});
    QVERIFY2(rebuiltPdf.code == 0, qPrintable(rebuiltPdf.err));
    QFile againPdf(m_tmp.path() + "/compare-again.pdf");
    QVERIFY(againPdf.open(QIODevice::ReadOnly) && againPdf.read(5) == "%PDF-");
    QVERIFY2(compare.exportTo(m_tmp.path() + "/compare.csv", 100, &error), qPrintable(error));
    const auto rebuiltCsv =
        test::runLengen({"export", "--from", m_tmp.path() + "/compare.provenance.json", "--out",
                         m_tmp.path() + "/compare-again.csv"});
    QVERIFY2(rebuiltCsv.code == 0, qPrintable(rebuiltCsv.err));
    QFile ours(m_tmp.path() + "/compare.csv"), theirs(m_tmp.path() + "/compare-again.csv");
    QVERIFY(ours.open(QIODevice::ReadOnly) && theirs.open(QIODevice::ReadOnly));
    QCOMPARE(theirs.readAll(), ours.readAll());
    // Issue 41: every method at once, a panel each, exported as drawn (the CSV names each
    // panel's curves).
    QVERIFY(compare.setMethod(ui::CompareView::allMethodsText()));
    QVERIFY(compare.panels().has_value());
    QCOMPARE(compare.panels()->panels.size(), size_t(2));
    QCOMPARE(compare.panels()->panels[0].title, std::string("ood_length"));
    QCOMPARE(compare.panels()->panels[1].title, std::string("standard"));
    QCOMPARE(compare.panels()->panels[1].series.size(), size_t(2));
    QCOMPARE(compare.panels()->panels[1].series[0].y,
             ui::compareFigure({rope}, "standard", false).series[0].y);
    QVERIFY2(compare.infoText().startsWith("2 method(s) side by side"),
             qPrintable(compare.infoText()));
    const QString panelsCsv = m_tmp.path() + "/methods.csv";
    QVERIFY2(compare.exportTo(panelsCsv, 100, &error), qPrintable(error));
    QFile csvFile(panelsCsv);
    QVERIFY(csvFile.open(QIODevice::ReadOnly));
    const QString csvText = QString::fromUtf8(csvFile.readAll());
    QVERIFY2(csvText.contains("ood_length") && csvText.contains("standard"),
             qPrintable(csvText.left(300)));
    QVERIFY(compare.setMethod("ood_length"));
    QVERIFY(!compare.panels().has_value());
    // Issue 13, defect 11: a selected run without the method is said, not silently dropped,
    // and can be sent to evaluation.
    const QString unevaluated = QString::fromStdString(test::trainTiny(m_runs, "nope", 4, 10));
    // Selected as its folder (`lengen-studio --compare DIR`): the request still names the run
    // file (a folder made a job labelled by its parent) and only the compared method (it
    // asked for every method of the task).
    const QString unevaluatedDir = QFileInfo(unevaluated).path();
    compare.setRuns({rope, unevaluatedDir});
    QCOMPARE(compare.spec().series.size(), size_t(1));
    QCOMPARE(compare.missingRuns(), QStringList{unevaluatedDir});
    QVERIFY2(compare.infoText().contains("1 of 2 runs compared") &&
                 compare.infoText().contains("NoPE seed 4 ("),
             qPrintable(compare.infoText()));
    QSignalSpy evaluate(&compare, &ui::CompareView::evaluateRequested);
    auto* button = [&]() -> QPushButton* {
        for (auto* b : compare.findChildren<QPushButton*>())
            if (b->text() == "Evaluate them")
                return b;
        return nullptr;
    }();
    QVERIFY(button && !button->isHidden());
    button->click();
    QCOMPARE(evaluate.count(), 1);
    QCOMPARE(evaluate.first().at(0).toStringList(), QStringList{unevaluated});
    QCOMPARE(evaluate.first().at(1).toString(), QString("ood_length"));  // the method shown
    const auto withBaselines = ui::compareFigure({rope}, "standard", true);
    QCOMPARE(withBaselines.series.size(), size_t(4));
}

void TestPanels::trainingViewPlotsLossOrExcessAndExportsWhatItDraws()
{
    ui::RunController controller;
    ui::TrainingView view(controller);
    view.showRunLog(QString::fromStdString(m_rope));
    const auto log = engine::readTrainLog(m_rope);
    QVERIFY(log.step.size() >= 3);
    auto f = view.lossFigure();
    QCOMPARE(f.series.size(), size_t(2));  // raw and smoothed
    QCOMPARE(f.series[0].y, log.loss);
    QCOMPARE(f.series[1].y.front(), log.loss.front());  // the EMA starts at the first value
    QVERIFY(f.series[1].y.back() != log.loss.back());   // and lags behind after that
    auto* choice = view.findChild<QComboBox*>("lossSeries");
    QVERIFY(choice);
    choice->setCurrentIndex(1);
    f = view.lossFigure();
    QCOMPARE(f.series[0].y, log.excessLoss);
    QCOMPARE(f.y.label, std::string("excess loss"));
    // The CSV holds exactly the two drawn curves, a row per logged step each.
    const QString csv = m_tmp.path() + "/excess.csv";
    QString error;
    QVERIFY2(view.exportLoss(csv, 100, &error), qPrintable(error));
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto lines = QString::fromUtf8(file.readAll()).trimmed().split('\n');
    QCOMPARE(lines.size(), 1 + 2 * int(log.step.size()));
    QVERIFY(lines[1].startsWith("excess loss,"));
    QVERIFY(lines.last().startsWith("EMA 0.90,"));
}

// Issue 41: every logged column can be plotted beside the loss (the curriculum by default), the
// gradient norm with the run's clipping threshold, and exported as drawn.
void TestPanels::trainingViewPlotsAnyLoggedColumnBesideTheLoss()
{
    ui::RunController controller;
    ui::TrainingView view(controller);
    view.showRunLog(QString::fromStdString(m_rope));
    const auto log = engine::readTrainLog(m_rope);
    auto f = view.columnFigure();
    QCOMPARE(f.series.size(), size_t(2));  // points and dims, as staircases
    QVERIFY(f.series[0].staircase);
    QCOMPARE(f.series[0].y, std::vector<double>(log.nPoints.begin(), log.nPoints.end()));
    QCOMPARE(f.series[1].y, std::vector<double>(log.nDims.begin(), log.nDims.end()));
    auto* column = view.findChild<QComboBox*>("loggedColumn");
    QVERIFY(column);
    QCOMPARE(column->count(), 5);
    column->setCurrentIndex(int(ui::LoggedColumn::GradNorm));
    f = view.columnFigure();
    QCOMPARE(f.series.size(), size_t(1));
    QCOMPARE(f.series[0].y, log.gradNorm);
    QVERIFY(std::isfinite(log.gradNorm.front()) && log.gradNorm.front() > 0);
    QVERIFY(f.y.log);
    QCOMPARE(f.hlines.size(), size_t(1));  // the test config clips at the default 1.0
    QCOMPARE(f.hlines[0].y, 1.0);
    view.setLoggedColumn(ui::LoggedColumn::LearningRate);
    QCOMPARE(view.columnFigure().series[0].y, log.learningRate);
    const QString csv = m_tmp.path() + "/lr.csv";
    QString error;
    QVERIFY2(view.exportColumn(csv, 100, &error), qPrintable(error));
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto lines = QString::fromUtf8(file.readAll()).trimmed().split('\n');
    QCOMPARE(lines.size(), 1 + int(log.step.size()));
    QVERIFY(lines[1].startsWith("learning rate,"));
    // Another run without a log clears it (nothing of the previous run stays drawn).
    view.showRunLog(m_tmp.path() + "/no-such-run");
    QVERIFY(view.columnFigure().series[0].y.empty());
}

// Issue 70, defect 11: Copy with nothing drawn said "Figure copied"; it says what Export says.
void TestPanels::copyWithNothingDrawnSaysSo()
{
    ui::FigureView view([](const figures::FigureInfo& f) { return f.name == "standard"; }, "none");
    QSignalSpy said(&view, &ui::FigureView::statusMessage);
    QPushButton* copy = nullptr;
    for (auto* b : view.findChildren<QPushButton*>())
        if (b->text() == "Copy")
            copy = b;
    QVERIFY(copy);
    copy->click();
    QCOMPARE(said.size(), 1);
    QCOMPARE(said.at(0).at(0).toString(), QStringLiteral("Nothing to export: open a run first."));
    view.setRun(QString::fromStdString(m_rope));
    copy->click();
    QCOMPARE(said.size(), 2);
    QVERIFY(said.at(1).at(0).toString().startsWith("Figure copied"));
}

void TestPanels::exportFromAView()
{
    ui::FigureView view([](const figures::FigureInfo& f) { return f.name == "standard"; }, "none");
    view.setRun(QString::fromStdString(m_rope));
    for (const QString ext : {"png", "svg", "pdf", "csv"}) {
        const QString path = m_tmp.path() + "/view." + ext;
        QString error;
        QVERIFY2(view.exportTo(path, 100, &error), qPrintable(error));
        QVERIFY(QFileInfo(path).size() > 100);
    }
    QCOMPARE(QImage(m_tmp.path() + "/view.png").width(), 600);
    QFile csv(m_tmp.path() + "/view.csv");
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QCOMPARE(csv.readLine().trimmed(), QByteArray("series,x,y,band_low,band_high"));
    // A curve hidden by a legend click is not exported: the file is the figure as shown.
    const auto all = view.shownSpec()->series;
    QVERIFY(all.size() >= 2);
    const QString hide = QString::fromStdString(all.front().name);
    plots::setSeriesVisible(*view.findChild<QCustomPlot*>(), hide, false);
    QCOMPARE(view.shownSpec()->series.size(), all.size() - 1);
    QVERIFY(view.exportTo(m_tmp.path() + "/shown.csv", 100));
    QFile shown(m_tmp.path() + "/shown.csv");
    QVERIFY(shown.open(QIODevice::ReadOnly));
    QVERIFY(!QString::fromUtf8(shown.readAll()).contains("\n" + hide + ","));
    // Issue 42: beside the export, what made it, with the hidden curve; Copy's text names it.
    QFile prov(m_tmp.path() + "/shown.provenance.json");
    QVERIFY(prov.open(QIODevice::ReadOnly));
    const auto provText = QString::fromUtf8(prov.readAll());
    const auto id = QString::fromStdString(engine::readRunInfo(m_rope).runId);
    QVERIFY2(provText.contains(id) && provText.contains(hide) &&
                 provText.contains("\"figure\": \"standard\""),
             qPrintable(provText));
    QVERIFY2(view.provenanceLine().startsWith("standard of run " + id),
             qPrintable(view.provenanceLine()));
    // Log y and the legend beside the data: the view and its exports follow the options.
    for (auto* box : view.findChildren<QCheckBox*>())
        box->setChecked(true);
    QVERIFY(view.shownSpec()->y.log);
    QCOMPARE(view.shownSpec()->series.size(), all.size() - 1);  // the hidden curve stays hidden
    QVERIFY(view.shownSpec()->legend == plots::LegendPlace::OutsideRight);
    QVERIFY(view.findChild<QCustomPlot*>()->axisRect()->axis(QCPAxis::atLeft)->scaleType() ==
            QCPAxis::stLogarithmic);
}

void TestPanels::guiStaysResponsiveWhileTraining()
{
    ui::RunController controller;
    ui::TrainingView view(controller);
    view.resize(1000, 600);
    view.show();
    controller.enqueue("latency", latencyTraining("panels-latency"));
    test::GapMeter gaps;  // the event-loop stalls
    QVERIFY(QTest::qWaitFor([&] { return controller.state() == ui::RunController::State::Idle; },
                            120000));
    gaps.stop();
    QVERIFY(gaps.samples() > 20);
    const double p95 = gaps.quantile(0.95), worst = gaps.quantile(1);
    qInfo("event-loop gaps while training: %zu ticks, own p95 %.1f ms, max %.1f ms (raw p95 %.1f, "
          "max %.1f)",
          gaps.samples(), p95, worst, gaps.rawQuantile(0.95), gaps.rawQuantile(1));
    QCOMPARE(view.loggedPoints(), 200);  // every log record reached the plot
    QVERIFY2(p95 <= 50, qPrintable(QString::number(p95)));
    QVERIFY2(worst <= 500, qPrintable(QString::number(worst)));  // one-off scheduler hiccups
}

// Issue 39: four jobs at once — a real training and three analyses reporting progress as fast
// as the worker's throttle lets them — listed in the Jobs panel beside the Train tab: the event
// loop's p99 gap stays within 50 ms.
void TestPanels::jobsPanelStaysResponsiveWithFourJobs()
{
    ui::RunController controller;
    controller.setMaxConcurrent(4);
    ui::TrainingView view(controller);
    ui::JobsPanel panel(controller);
    view.resize(1000, 600);
    panel.resize(1000, 300);
    view.show();
    panel.show();
    controller.enqueue("latency", latencyTraining("panels-jobs-latency"),
                       ui::newRunSubject("latency"));
    for (int k = 0; k < 3; ++k)
        controller.enqueue(
            ui::JobKind::Evaluation, QStringLiteral("evaluate %1").arg(k),
            [](engine::RunControl& control, engine::AnalysisObserver& obs) {
                obs.onStage(0, 1, "ood_length");
                for (int i = 0; i < 3000 && control.shouldContinue(); ++i) {
                    obs.onProgress("ood_length", i, 3000);
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
                engine::JobResult r;
                r.done = 1;
                return r;
            },
            QStringLiteral("/runs/%1/run.h5").arg(k));
    QTRY_COMPARE(panel.rowTexts().size(), 4);
    test::GapMeter gaps;
    int seenRunning = 0;
    QVERIFY(QTest::qWaitFor(
        [&] {
            seenRunning =
                std::max<int>(seenRunning, int(panel.rowTexts().filter(" | running | ").size()));
            return controller.state() == ui::RunController::State::Idle;
        },
        120000));
    gaps.stop();
    QVERIFY(gaps.samples() > 20);
    const double p99 = gaps.p99();
    qInfo("event-loop gaps with four jobs: %zu ticks, own p99 %.1f ms, max %.1f ms (raw p99 %.1f)",
          gaps.samples(), p99, gaps.quantile(1), gaps.rawQuantile(0.99));
    QCOMPARE(seenRunning, 4);  // all four ran at once, and the panel showed it
    QVERIFY2(p99 <= 50, qPrintable(QString::number(p99)));
    QTRY_COMPARE(panel.rowTexts().filter(" | finished: ").size(),
                 4);  // at its next rebuild, with each result
    QVERIFY2(panel.rowTexts().join("\n").contains("latency | finished: 4000 steps, final loss"),
             qPrintable(panel.rowTexts().join("\n")));
}

QTEST_MAIN(TestPanels)
#include "tst_panels.moc"
