// Figures built from a real run's stored results: every available figure builds, evaluation
// figures plot exactly the stored curves (their CSV round-trips to the stored numbers), probe
// figures mark the real target positions, heatmaps read the stored map tile.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <QTest>
#include <map>
#include <tuple>

#include "category_colors.h"
#include "figure_builder.h"
#include "figure_export.h"
#include "figure_provenance.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/probes.h"
#include "lengen/engine/sweep_aggregate.h"
#include "lengen/engine/trainer.h"
#include "run_figures.h"
#include "sweep_figures.h"
#include "test_support.h"

using namespace lengen;

namespace {
class Silent : public engine::AnalysisObserver {};

// One aggregated ood_length set of a linear-regression sweep (D = 4, trained on 9 points) with
// these group axes: the model's curve `label`, 72 positions of error 1 in a band [0.5, 1.5].
engine::AggregateSet oodSet(std::vector<std::pair<std::string, std::string>> axes,
                            const std::string& label)
{
    engine::AggregateSet s;
    s.kind = "eval";
    s.name = "ood_length";
    s.groupAxes = std::move(axes);
    s.task = "linear_regression";
    s.trainPoints = 9;
    s.nPoints = 72;
    s.dims = 4;
    s.zeroEstimator = 4;
    engine::AggregateCurve c;
    c.key = "model";
    c.label = label;
    c.transformer = true;
    c.mean.assign(72, 1.0);
    c.low.assign(72, 0.5);
    c.high.assign(72, 1.5);
    c.seeds.assign(72, 3);
    c.band = "bootstrap";
    s.curves.push_back(c);
    return s;
}
// Attention (long prompts of 12 points) and duplicated-example probes of `run` on the CPU;
// `serialPosition` adds the serial-position probe (4 instruction points).
void probe(const std::string& run, int prompts, int testLength, std::vector<int> noise,
           int attentionPrompts, int trials, bool serialPosition)
{
    engine::ProbeOptions p;
    p.attention = p.duplicated = true;
    p.serialPosition = serialPosition;
    p.prompts = prompts;
    p.testLength = testLength;
    p.noiseCounts = std::move(noise);
    p.instructionPoints = 4;
    p.attentionPrompts = attentionPrompts;
    p.longPoints = 12;
    p.common.bootstrapTrials = trials;
    p.common.device = "cpu";
    Silent silent;
    engine::RunControl control;
    engine::probeRun(run, p, control, silent);
}

}  // namespace

class TestFigures final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void everyAvailableFigureBuilds();
    void everyFigureKindCompilesAsLatex();
    void evaluationFigureIsTheStoredData();
    void probeFiguresMarkTheLayouts();
    void heatmapReadsTheStoredMap();
    void unknownFigureIsAUsageError();
    void sweepGridWithInterventionsHasAPanelPerPe();
    void sweepGridNamesTheAxesThatVary();
    void anEncodingIsOneColourEverywhere();
    void figuresMarkTheTrainedLength();
    void exportRecordsTheViewItDraws();
    void provenanceListsWhatTheFigureDrew();

private:
    std::string m_run;
};

void TestFigures::initTestCase()
{
    auto config = test::loadOne(test::tinyConfig());  // D = 3, N = 7
    m_run = test::trainConfig(config, test::scratchDir("figures"), 2);
    engine::EvalOptions e;
    e.methods = {"standard", "ood_length"};
    e.prompts = 16;
    e.oodFactor = 2;
    e.common.bootstrapTrials = 20;
    e.common.device = "cpu";
    Silent silent;
    engine::RunControl control;
    engine::evaluateRun(m_run, e, control, silent);
    probe(m_run, 8, 24, {2, 3}, 4, 20, true);
}

void TestFigures::everyAvailableFigureBuilds()
{
    const auto all = figures::availableFigures(m_run);
    QStringList names;
    for (const auto& f : all)
        names << QString::fromStdString(f.name);
    for (const char* expected :
         {"loss", "standard", "ood_length", "attention/long", "avg_attention_score",
          "attention_map/train", "noise_points=2", "noise_points=3", "inst+noise+tar",
          "baseline_all_dup", "change_inst_position", "lost_in_mid"})
        QVERIFY2(names.contains(expected), expected);
    QTemporaryDir tmp;
    for (const auto& f : all) {
        const auto fig = figures::makeFigure(m_run, f.name);
        QCOMPARE(bool(fig.heatmap), f.heatmap());
        QCOMPARE(bool(fig.plot), !f.heatmap());
        // The studio files figures by kind (issue 13: it used to match description text).
        using K = figures::FigureKind;
        const K expected = f.name == "loss"                                 ? K::Training
                           : f.name == "standard" || f.name == "ood_length" ? K::Evaluation
                           : f.name.rfind("attention_map/", 0) == 0         ? K::Heatmap
                                                                            : K::Probe;
        QVERIFY2(f.kind == expected, f.name.c_str());
        const QString path = tmp.path() + "/fig.png";
        const auto r = fig.plot ? plots::exportFigure(*fig.plot, path, plots::Format::Png, 60)
                                : plots::exportHeatmap(*fig.heatmap, path, plots::Format::Png, 60);
        QVERIFY2(r.ok, qPrintable(QString::fromStdString(f.name) + ": " + r.error));
    }
}

// Issue 42: every figure a run draws (loss, evaluations with baselines, attention curves and
// maps, the duplicated-example and serial-position probes) and a sweep's grid, as pgfplots,
// compile with TeX Live.
void TestFigures::everyFigureKindCompilesAsLatex()
{
    if (const auto why = test::latexMissing(); !why.isEmpty()) {
        if (test::latexRequired())
            QFAIL(qPrintable(why));
        QSKIP(qPrintable(why));
    }
    QTemporaryDir tmp;
    int i = 0;
    for (const auto& f : figures::availableFigures(m_run)) {
        const auto fig = figures::makeFigure(m_run, f.name);
        const QString tex = tmp.path() + QStringLiteral("/fig%1.tex").arg(i++);
        const auto r = fig.plot
                           ? plots::exportFigure(*fig.plot, tex, plots::Format::Tex, 150, true)
                           : plots::exportHeatmap(*fig.heatmap, tex, plots::Format::Tex, 150, true);
        QVERIFY2(r.ok, qPrintable(r.error));
        const auto failed = test::compileLatex(tex);
        QVERIFY2(failed.isEmpty(), qPrintable(QString::fromStdString(f.name) + ": " + failed));
    }
    QVERIFY(i >= 12);
}

void TestFigures::evaluationFigureIsTheStoredData()
{
    const auto fig = figures::makeFigure(m_run, "ood_length");
    QVERIFY(fig.plot);
    engine::EvalResult stored;
    for (const auto& r : engine::readEvaluations(m_run))
        if (r.method == "ood_length")
            stored = r;
    QCOMPARE(fig.plot->series.size(), stored.curves.size());
    QCOMPARE(fig.plot->series[0].name, std::string("RoPE"));
    QCOMPARE(fig.plot->series[1].name, std::string("Least Squares"));
    QCOMPARE(fig.plot->vlines.at(0).x, 6.0);  // the training length: k = N - 1, as tables say
    QCOMPARE(fig.plot->hlines.at(0).y, 3.0);  // zero estimator at D
    // The CSV holds exactly the stored means and bands.
    const auto lines = plots::figureCsv(*fig.plot).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 1 + int(stored.curves.size()) * 14 + 14);  // + the zero estimator
    QCOMPARE(lines.back(), QStringLiteral("zero estimator,13,3,,"));  // issue 41, defect 10
    const auto fields = lines.at(1 + 14 + 9).split(',');              // least squares, k = 9
    QCOMPARE(fields.at(1).toDouble(), 9.0);
    QCOMPARE(fields.at(2).toDouble(), stored.curves[1].stats.mean[9]);
    QCOMPARE(fields.at(3).toDouble(), stored.curves[1].stats.bootstrapLow[9]);
    QCOMPARE(fields.at(4).toDouble(), stored.curves[1].stats.bootstrapHigh[9]);
}

void TestFigures::probeFiguresMarkTheLayouts()
{
    const auto lost = figures::makeFigure(m_run, "lost_in_mid").plot;
    QVERIFY(lost && lost->zoom);
    QCOMPARE(lost->series.size(), size_t(3));
    QCOMPARE(lost->zoom->x1, 24.0);  // through the end of the target block
    const auto inst = figures::makeFigure(m_run, "inst+noise+tar").plot;
    QVERIFY(inst);
    QCOMPARE(inst->series[0].name, std::string("Random points"));
    // Real target positions in the legend: begin = N + (N - 2D' - ...) = the target's index.
    QVERIFY2(inst->series[3].name.find("(target at 22)") != std::string::npos,
             inst->series[3].name.c_str());
    const auto sweep = figures::makeFigure(m_run, "noise_points=3").plot;
    QVERIFY(sweep);
    QCOMPARE(sweep->markers.at(0).x, 4.0);  // noise starts at N - c = 7 - 3
}

void TestFigures::heatmapReadsTheStoredMap()
{
    figures::MapSelection m;
    m.layer = 1;
    m.head = 1;
    const auto fig = figures::makeFigure(m_run, "attention_map/train", m);
    QVERIFY(fig.heatmap);
    QCOMPARE(fig.heatmap->rows, 14);
    const auto tile = engine::readAttentionTile(m_run, "train", 0, 1, 1, 0, 14, 0, 14);
    QCOMPARE(fig.heatmap->values[3 * 14 + 2], tile[3 * 14 + 2]);
    QVERIFY(std::isnan(fig.heatmap->values[2 * 14 + 3]));  // above the diagonal: masked
    QCOMPARE(figures::tokenLabel(6), std::string("x_3"));
    QCOMPARE(figures::tokenLabel(7), std::string("y_3"));
}

void TestFigures::unknownFigureIsAUsageError()
{
    try {
        figures::makeFigure(m_run, "sideways");
        QFAIL("no error");
    } catch (const engine::Error& e) {
        QCOMPARE(e.kind(), engine::ErrorKind::Usage);
        QVERIFY(std::string(e.what()).find("sideways") != std::string::npos);
    }
}

void TestFigures::sweepGridWithInterventionsHasAPanelPerPe()
{
    // Issue 30: one task, interventions as an axis of the eval stage: a panel per PE whose
    // curves are the untouched model and each intervention (dashed, its own colour).
    engine::SweepAggregate agg;
    agg.sweep = "rescue";
    auto set = [&](const std::string& pe, const std::string& label,
                   const std::string& intervention) {
        std::vector<std::pair<std::string, std::string>> axes{{"pe", pe}};
        if (!intervention.empty())
            axes.emplace_back("intervention", intervention);
        agg.sets.push_back(oodSet(axes, label));
    };
    set("rope", "RoPE", "");
    set("rope", "RoPE + yarn", "yarn");
    set("alibi", "ALiBi", "");
    set("alibi", "ALiBi + lambda", "lambda");
    const auto grid = figures::sweepGridFigure(agg, "ood_length");
    QCOMPARE(grid.panels.size(), size_t(2));
    QVERIFY(QString::fromStdString(grid.panels[0].title).startsWith("RoPE"));
    QCOMPARE(grid.panels[0].series.size(), size_t(2));
    QCOMPARE(grid.panels[0].series[0].name, std::string("untouched"));
    QCOMPARE(grid.panels[0].series[1].name, std::string("yarn"));
    QVERIFY(grid.panels[0].series[1].dashed);
    QCOMPARE(grid.panels[1].series[1].name, std::string("lambda"));
    QVERIFY(grid.panels[0].series[1].color != grid.panels[1].series[1].color);
    // The sweep grid compiles as pgfplots too (issue 42).
    if (test::latexMissing().isEmpty()) {
        QTemporaryDir tmp;
        QVERIFY(
            plots::exportGrid(grid, tmp.path() + "/grid.tex", plots::Format::Tex, 150, true).ok);
        const auto failed = test::compileLatex(tmp.path() + "/grid.tex");
        QVERIFY2(failed.isEmpty(), qPrintable(failed));
    } else {
        QVERIFY2(!test::latexRequired(), qPrintable(test::latexMissing()));
    }
}

// A sweep axis with one value (--set training.max_steps=8000) names no curve; one that varies
// does, and with one task it gives each PE its own panel (plain against randomized positions).
void TestFigures::sweepGridNamesTheAxesThatVary()
{
    engine::SweepAggregate agg;
    agg.sweep = "encodings";
    for (const auto& [pe, label, m] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"rope", "RoPE", "0"}, {"rope", "RoPE", "144"}, {"alibi", "ALiBi", "0"}})
        agg.sets.push_back(oodSet({{"pe", pe},
                                   {"training.max_steps", "8000"},
                                   {"training.random_positions.max_position", m}},
                                  label));
    // One task and a setting that varies: a panel per PE, a curve per value of the setting.
    auto grid = figures::sweepGridFigure(agg, "ood_length");
    QCOMPARE(grid.panels.size(), size_t(2));
    QVERIFY(QString::fromStdString(grid.panels[0].title).startsWith("RoPE"));
    QCOMPARE(grid.panels[0].series[0].name, std::string("max_position=0"));
    QCOMPARE(grid.panels[0].series[1].name, std::string("max_position=144"));
    QCOMPARE(grid.panels[1].series[0].name, std::string("max_position=0"));
    // Two tasks: a panel per task, the PE and the varying setting in each curve's name.
    agg.sets[2].groupAxes.emplace_back("task", "relu_2nn_regression");
    agg.sets[2].task = "relu_2nn_regression";
    grid = figures::sweepGridFigure(agg, "ood_length");
    QCOMPARE(grid.panels.size(), size_t(2));
    QCOMPARE(grid.panels[0].series[0].name, std::string("RoPE max_position=0"));
    QCOMPARE(grid.panels[0].series[1].name, std::string("RoPE max_position=144"));
    QCOMPARE(grid.panels[1].series[0].name, std::string("ALiBi max_position=0"));
}

// Issue 80, defect 23: the Hyperparameters tab drew RoPE pink, the Sweeps grid blue and Compare
// a third colour, each by what it drew first. An encoding is one colour, by name or display
// name, whatever was drawn before; the grid's curves named by encoding take it.
void TestFigures::anEncodingIsOneColourEverywhere()
{
    plots::runColor("a run drawn first");
    plots::categoryColor("lr=0.001");  // a category that is no encoding: first come
    const std::string rope = figures::categoryColor("RoPE");
    QCOMPARE(figures::categoryColor("rope"), rope);
    QCOMPARE(figures::categoryColor("ALiBi"), figures::encodingColor("alibi"));
    QVERIFY(rope != figures::categoryColor("NoPE"));
    QVERIFY(figures::encodingColor("lr=0.001").empty());
    engine::SweepAggregate agg;
    agg.sweep = "encodings";
    for (const auto& [pe, label] :
         std::vector<std::pair<std::string, std::string>>{{"alibi", "ALiBi"}, {"rope", "RoPE"}})
        agg.sets.push_back(oodSet({{"pe", pe}}, label));
    const auto grid = figures::sweepGridFigure(agg, "ood_length");
    for (const auto& f : grid.panels)
        for (const auto& series : f.series)
            QCOMPARE(series.color, figures::categoryColor(series.name));
    QCOMPARE(grid.panels.front().series.size(), size_t(2));
}

// Issue 52: a run whose max_steps ends before its curriculum (tiny config: N 5 -> 7 at step 10,
// trained 10 steps) trained on 5 points; every figure marks that, not the curriculum's 7.
void TestFigures::figuresMarkTheTrainedLength()
{
    const auto run = test::trainTiny(test::scratchDir("figures_trained"), "rope", 3, 10);
    test::evaluateSmall(run, {"ood_length"}, 8, 2, 5);
    probe(run, 4, 12, {2}, 2, 5, false);

    const auto ood = figures::makeFigure(run, "ood_length").plot;
    QVERIFY(ood);
    QCOMPARE(ood->vlines.size(), size_t(1));
    QCOMPARE(ood->vlines[0].x, 4.0);  // k = 5 - 1, not 7 - 1
    QVERIFY2(ood->title.find("max_data_points 7 (trained on 5)") != std::string::npos,
             ood->title.c_str());
    const auto attention = figures::makeFigure(run, "attention/long").plot;
    QVERIFY(attention);
    QCOMPARE(attention->vlines.size(), size_t(1));
    QCOMPARE(attention->vlines[0].x, 4.5);  // after x_4, the 5th point
    const auto average = figures::makeFigure(run, "avg_attention_score").plot;
    QVERIFY(average);
    QCOMPARE(average->vlines.size(), size_t(1));
    QCOMPARE(average->vlines[0].x, 4.0 / 11.0);  // y_4 of y_0 .. y_11, normalised
    const auto map = figures::makeFigure(run, "attention_map/train").heatmap;
    QVERIFY(map && map->boundary);
    QCOMPARE(*map->boundary, 10);
    const auto noise = figures::makeFigure(run, "noise_points=2").plot;
    QVERIFY(noise);
    QCOMPARE(noise->spans.at(0).x1, 5.0);
    // Its TeX export draws the same marker (the spec is what every format writes).
    QTemporaryDir tmp;
    const QString tex = tmp.path() + "/ood.tex";
    QVERIFY(plots::exportFigure(*ood, tex, plots::Format::Tex, 100, true).ok);
    QFile f(tex);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY2(f.readAll().contains("train length"), "the TeX figure names the marker");
}

// Issue 56 §1: a figure's view options (log y, the legend beside the data) are one value that
// the studio, `lengen export` and the provenance share. The command line draws them
// (--log-y, --legend-outside) and records them, and a rebuild keeps them: its provenance lost
// them (only the studio wrote the keys, and --from wrote a provenance without them).
void TestFigures::exportRecordsTheViewItDraws()
{
    QTemporaryDir tmp;
    const QString out = tmp.filePath("standard.csv");
    const auto view = [](const QString& file) {
        QFile f(file);
        return f.open(QIODevice::ReadOnly)
                   ? QJsonDocument::fromJson(f.readAll()).object()["view"].toObject()
                   : QJsonObject();
    };
    const auto ex = test::runLengen({"export", QString::fromStdString(m_run), "--figure",
                                     "standard", "--log-y", "--legend-outside", "--out", out});
    QVERIFY2(ex.code == 0, qPrintable(ex.err));
    auto shown = view(tmp.filePath("standard.provenance.json"));
    QVERIFY(shown["log_y"].toBool() && shown["legend_outside"].toBool());
    const auto rebuilt =
        test::runLengen({"export", "--from", tmp.filePath("standard.provenance.json"), "--out",
                         tmp.filePath("again.csv")});
    QVERIFY2(rebuilt.code == 0, qPrintable(rebuilt.err));
    shown = view(tmp.filePath("again.provenance.json"));
    QVERIFY2(shown["log_y"].toBool() && shown["legend_outside"].toBool(),
             "the rebuild keeps the view");
    QFile a(out), b(tmp.filePath("again.csv"));
    QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
    QCOMPARE(b.readAll(), a.readAll());
    // A plain export records the plain view; --log-y shapes one figure, not --all.
    QCOMPARE(test::runLengen({"export", QString::fromStdString(m_run), "--figure", "standard",
                              "--out", tmp.filePath("plain.csv")})
                 .code,
             0);
    QVERIFY(!view(tmp.filePath("plain.provenance.json"))["log_y"].toBool());
    QCOMPARE(test::runLengen({"export", QString::fromStdString(m_run), "--all", "--log-y", "--out",
                              tmp.filePath("all")})
                 .code,
             64);
}

// Issue 56 §1: a figure's builder records what it drew (Figure::sources) and its provenance
// serialises that. It was reconstructed from the figure's name at save time: every stored
// result of the method, an intervention the figure leaves out (equal to the model at those
// positions) included.
void TestFigures::provenanceListsWhatTheFigureDrew()
{
    const auto run = test::trainTiny(test::scratchDir("figures-sources"), "rope");
    engine::EvalOptions e;
    e.methods = {"standard", "ood_length"};
    e.prompts = 8;
    e.oodFactor = 2;
    e.interventions = {"pi"};
    e.common.bootstrapTrials = 10;
    e.common.device = "cpu";
    Silent silent;
    engine::RunControl control;
    engine::evaluateRun(run, e, control, silent);
    std::map<std::string, std::vector<double>> model;  // each result's model curve
    for (const auto& r : engine::readEvaluations(run))
        model[r.method + "+" + r.intervention] = r.curves.front().stats.mean;
    for (const std::string method : {"standard", "ood_length"}) {
        const auto fig = figures::makeFigure(run, method);
        const bool drawsPi = model[method + "+pi"] != model[method + "+"];
        std::vector<std::string> drawn;
        for (const auto& d : fig.sources.evaluations)
            drawn.push_back(d.method + "+" + d.intervention);
        const std::vector<std::string> expected =
            drawsPi ? std::vector<std::string>{method + "+", method + "+pi"}
                    : std::vector<std::string>{method + "+"};
        QCOMPARE(drawn, expected);
        QCOMPARE(fig.sources.run.runId, engine::readRunInfo(run).runId);
        // The provenance lists the same, with each result's settings.
        const auto p = figures::figureProvenance(fig.sources, method, {});
        const auto evals = p["evaluations"].toArray();
        QCOMPARE(evals.size(), qsizetype(expected.size()));
        QCOMPARE(evals.first().toObject()["method"].toString(), QString::fromStdString(method));
        QCOMPARE(evals.first().toObject()["prompts"].toInt(), 8);
    }
    // At the training length PI leaves the model as it is: the standard figure draws it once.
    QCOMPARE(model["standard+pi"], model["standard+"]);
}

QTEST_MAIN(TestFigures)
#include "tst_figures.moc"
