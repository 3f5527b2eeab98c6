// `evaluateRun` end to end on tiny trained runs: what it stores, that a re-run is a no-op,
// that a tiny memory budget (micro-batches of one prompt, query-row blocks) gives identical
// numbers, metrics.json import, and clear errors.

#include <filesystem>

#include "eval/eval_methods.h"
#include "eval/model_runner.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/hash.h"
#include "lengen/engine/interventions.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/trainer.h"
#include "test_support.h"

using namespace lengen::engine;
namespace fs = std::filesystem;

namespace {

class Warnings : public AnalysisObserver {
public:
    void onWarning(const std::string& w) override { warnings.push_back(w); }
    std::vector<std::string> warnings;
};

std::string trainTiny(const std::string& tag, const std::string& task = "linear_regression",
                      const std::string& pe = "rope")
{
    auto config = lengen::test::loadOne(lengen::test::tinyConfig(task, pe));
    return lengen::test::trainConfig(config, lengen::test::scratchDir(tag), 11);
}

EvalOptions smallEval(const std::vector<std::string>& methods)
{
    EvalOptions o;
    o.methods = methods;
    o.prompts = 12;
    o.batchSize = 8;  // a full and a partial task instance
    o.oodFactor = 3;
    o.common.bootstrapTrials = 50;
    o.common.device = "cpu";
    o.common.threads = 1;
    return o;
}

const EvalResult& find(const std::vector<EvalResult>& all, const std::string& method)
{
    for (const auto& r : all)
        if (r.method == method)
            return r;
    throw std::runtime_error("no method " + method);
}

}  // namespace

class TestEvaluation final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void storesEveryMethodWithBaselines();
    void rerunIsANoOpUnlessForced();
    void tinyMemoryBudgetGivesIdenticalNumbers();
    void plannerRespectsTheBudget();
    void hugeMethodScalesAreConfigErrors();
    void booleanTaskHasAccuracyAndNullClassifier();
    void importsAReferenceMetricsJson();
    void errorsNameTheProblem();
    void oneHashKeepsTheSeeds();
    void interventionsAllIsAUnionEverywhere();
};

void TestEvaluation::storesEveryMethodWithBaselines()
{
    const auto run = trainTiny("eval-store");
    RunControl control;
    Warnings obs;
    const auto summary = evaluateRun(
        run, smallEval({"standard", "ood_length", "half_subspace", "scale-y=2", "scale-x=2"}),
        control, obs);
    QCOMPARE(summary.computed.size(), size_t(5));
    QVERIFY(fs::exists(summary.analysisFile));
    QVERIFY(!fs::exists(summary.analysisFile + ".partial"));
    const auto all = readEvaluations(run);
    QCOMPARE(all.size(), size_t(5));
    const auto& std_ = find(all, "standard");
    QCOMPARE(std_.nPoints, 7);
    QCOMPARE(std_.trainPoints, 7);
    QCOMPARE(std_.prompts, 12);
    QCOMPARE(std_.checkpointStep, std::int64_t{20});
    QCOMPARE(std_.curves.size(), size_t(4));  // RoPE, least squares, 3-NN, averaging
    QCOMPARE(std_.curves[0].model, std::string("RoPE"));
    QCOMPARE(std_.curves[1].label, std::string("Least Squares"));
    for (const auto& c : std_.curves) {
        QCOMPARE(c.stats.mean.size(), size_t(7));
        for (size_t i = 0; i < 7; ++i)
            QVERIFY(c.stats.bootstrapLow[i] <= c.stats.mean[i] + 1e-9 &&
                    c.stats.mean[i] <= c.stats.bootstrapHigh[i] + 1e-9);
    }
    // Noiseless linear regression: least squares is exact from D = 3 examples on.
    QVERIFY(std_.curves[1].stats.mean[3] < 1e-6);
    QVERIFY(std_.curves[1].stats.mean[1] > 0.1);
    QCOMPARE(find(all, "ood_length").nPoints, 21);
    QCOMPARE(find(all, "ood_length").curves[0].stats.mean.size(), size_t(21));
    // Half subspace: rank 1 inputs in D = 3, so least squares is exact from 1 example on.
    QVERIFY(find(all, "half_subspace").curves[1].stats.mean[1] < 1e-6);
    // scale-y=2 multiplies targets by 2: the zero estimator's error is 4 D.
    QCOMPARE(find(all, "scale-y=2").zeroEstimator, 12.0);
    // scale-x=2 doubles x, so y = w.(2x) too: 4 D as well (it said D, and the figure's y axis,
    // 1.5 times the line, hid the curves at 12-18 under a cap of 4.5: issue 80's walk).
    QCOMPARE(find(all, "scale-x=2").zeroEstimator, 12.0);
    QCOMPARE(find(all, "ood_length").zeroEstimator, 3.0);
}

void TestEvaluation::rerunIsANoOpUnlessForced()
{
    const auto run = trainTiny("eval-noop");
    RunControl control;
    Warnings obs;
    auto opts = smallEval({"standard"});
    evaluateRun(run, opts, control, obs);
    const auto before = fs::last_write_time(analysisFileFor(run));
    const auto again = evaluateRun(run, opts, control, obs);
    QVERIFY(again.computed.empty());
    QCOMPARE(again.skipped, std::vector<std::string>{"standard"});
    QCOMPARE(fs::last_write_time(analysisFileFor(run)), before);
    opts.common.seed = 2;  // another seed is another result
    QCOMPARE(evaluateRun(run, opts, control, obs).computed.size(), size_t(1));
    opts.common.force = true;
    QCOMPARE(evaluateRun(run, opts, control, obs).computed.size(), size_t(1));
}

void TestEvaluation::tinyMemoryBudgetGivesIdenticalNumbers()
{
    for (const std::string pe : {"alibi", "fire", "rope"}) {
        const auto run = trainTiny("eval-budget-" + pe, "linear_regression", pe);
        RunControl control;
        Warnings obs;
        auto opts = smallEval({"ood_length"});
        opts.baselines = false;
        evaluateRun(run, opts, control, obs);
        const auto big = find(readEvaluations(run), "ood_length").curves[0].stats;
        opts.common.force = true;
        opts.common.memoryBudgetMiB = 0.01;  // 10 KiB: one prompt, a few query rows per block
        const auto cfg = lengen::test::loadOne(lengen::test::tinyConfig("linear_regression", pe));
        const auto plan = eval::planForward(cfg, 8, 42, opts.common.memoryBudgetMiB * 1048576);
        QCOMPARE(plan.microBatch, std::int64_t{1});
        QVERIFY(plan.queryChunk > 0 && plan.queryChunk < 42);
        evaluateRun(run, opts, control, obs);
        const auto small = find(readEvaluations(run), "ood_length").curves[0].stats;
        for (size_t i = 0; i < big.mean.size(); ++i)
            QVERIFY2(std::abs(big.mean[i] - small.mean[i]) <= 1e-5 * (1 + std::abs(big.mean[i])),
                     (pe + " at " + std::to_string(i)).c_str());
    }
}

void TestEvaluation::plannerRespectsTheBudget()
{
    // The reference's standard model (H 256, 16 layers, 8 heads) at 8 x 201 points.
    auto cfg = lengen::test::loadOne(lengen::test::tinyConfig());
    cfg.model.hiddenSize = 256;
    cfg.model.numHeads = 8;
    cfg.model.intermediateSize = 1024;
    const double budget = 2048.0 * 1048576;
    const auto plan = eval::planForward(cfg, 64, 3216, budget);
    QVERIFY(plan.microBatch >= 1 && plan.microBatch < 64);
    QVERIFY(plan.microBatch * plan.bytesPerPrompt <= budget);
    QVERIFY(plan.queryChunk >= 16 && plan.queryChunk < 3216);  // 64 MiB score blocks
    QCOMPARE(eval::planForward(cfg, 64, 102, budget).queryChunk, std::int64_t{0});  // small: whole
    const auto tight = eval::planForward(cfg, 64, 3216, 64.0 * 1048576);
    QCOMPARE(tight.microBatch, std::int64_t{1});
    QVERIFY(tight.queryChunk > 0 && tight.queryChunk < 3216);
    // A GPU takes the whole rows when one prompt fits: no 64 MiB blocks for the CPU's pages.
    const auto gpu = eval::planForward(cfg, 64, 3216, budget, /*gpu=*/true);
    QCOMPARE(gpu.queryChunk, std::int64_t{0});
    QCOMPARE(gpu.microBatch, plan.microBatch);
    // The budget: 2048 MiB on the CPU unless given (<= 0 = automatic).
    const torch::Device cpu(torch::kCPU);
    QCOMPARE(eval::forwardBudgetBytes(cpu, 0), 2048.0 * 1048576);
    QCOMPARE(eval::forwardBudgetBytes(cpu, 100), 100.0 * 1048576);
}

void TestEvaluation::booleanTaskHasAccuracyAndNullClassifier()
{
    const auto run = trainTiny("eval-bool", "conjunction");
    RunControl control;
    Warnings obs;
    evaluateRun(run, smallEval({}), control, obs);  // all methods of a boolean task
    const auto all = readEvaluations(run);
    QCOMPARE(all.size(), size_t(2));
    const auto& r = find(all, "standard");
    QVERIFY(r.classification);
    QCOMPARE(r.curves.back().model, std::string("nullclassifier"));
    for (const auto& c : r.curves)
        for (double v : c.stats.mean)
            QVERIFY(v >= 0 && v <= 1);
    QCOMPARE(r.curves[1].stats.mean[0], 0.0);  // 1-NN predicts 0 at k = 0: always wrong
}

void TestEvaluation::importsAReferenceMetricsJson()
{
    const auto run = trainTiny("eval-import");
    const auto dir = lengen::test::scratchDir("eval-import-json");
    const auto json = lengen::test::writeFile(dir, "metrics.json", R"({
  "standard": {
    "RoPE": {"mean": [4.0, 2.5, 1.0], "std": [1, 1, 1], "bootstrap_low": [3.5, 2, 0.5], "bootstrap_high": [4.5, 3, 1.5]},
    "OLS_driver=None": {"mean": [4.0, 1.0, 0.0], "std": [0, 0, 0], "bootstrap_low": [4, 1, 0], "bootstrap_high": [4, 1, 0]}
  }
})");
    QCOMPARE(importMetricsJson(json, run, "python"), std::vector<std::string>{"standard"});
    const auto all = readEvaluations(run);
    QCOMPARE(all.size(), size_t(1));
    QVERIFY(all[0].source.find("metrics.json:") == 0);
    QCOMPARE(all[0].curves.size(), size_t(2));
    QCOMPARE(all[0].curves[0].label, std::string("RoPE (python)"));
    QCOMPARE(all[0].curves[0].stats.mean, (std::vector<double>{4.0, 2.5, 1.0}));
    QCOMPARE(all[0].curves[1].stats.bootstrapHigh, (std::vector<double>{4, 1, 0}));
    const auto bad =
        lengen::test::writeFile(dir, "bad.json", R"({"standard": {"RoPE": {"mean": [1]}}})");
    QVERIFY_THROWS_EXCEPTION(Error, importMetricsJson(bad, run, "python"));
    const auto broken = lengen::test::writeFile(dir, "broken.json", "{ not json");
    QVERIFY_THROWS_EXCEPTION(Error, importMetricsJson(broken, run, "python"));
    QCOMPARE(readEvaluations(run).size(), size_t(1));  // failed imports changed nothing
}

void TestEvaluation::errorsNameTheProblem()
{
    const auto run = trainTiny("eval-errors");
    RunControl control;
    Warnings obs;
    try {
        evaluateRun(run, smallEval({"sideways"}), control, obs);
        QFAIL("no error");
    } catch (const Error& e) {
        QCOMPARE(e.kind(), ErrorKind::Config);
        QVERIFY(std::string(e.what()).find("sideways") != std::string::npos);
    }
    const auto dir = lengen::test::scratchDir("eval-foreign");
    const auto foreign = lengen::test::writeFile(dir, "run.h5", "not hdf5 at all");
    try {
        evaluateRun(foreign, smallEval({"standard"}), control, obs);
        QFAIL("no error");
    } catch (const Error& e) {
        QCOMPARE(e.kind(), ErrorKind::RunFile);
    }
}

// Issue 56: FNV-1a was written out four times; the one left must give what they gave, or every
// stored evaluation's prompts (methodSeed), intervention positions and config hash would move.
void TestEvaluation::oneHashKeepsTheSeeds()
{
    // LenGen's offset basis (hash.h: FNV's without its last digit), as the four copies had it.
    QCOMPARE(lengen::engine::fnv1a64(""), std::uint64_t(0x14650fb0739d0383ull));
    QCOMPARE(lengen::engine::fnv1a64("a"), std::uint64_t(0x44bd8ad473cd9906ull));
    QCOMPARE(lengen::engine::fnv1a64("foobar"), std::uint64_t(0x88fad7c0a8ff07f2ull));
    // Continuing from a hash is hashing the concatenation.
    QCOMPARE(lengen::engine::fnv1a64("bar", lengen::engine::fnv1a64("foo")),
             lengen::engine::fnv1a64("foobar"));
}

// Issue 45: `--methods scale-x=1e100` ended in "internal error: linalg.eigh … failed to
// converge" in the least-squares baseline; scales whose squares overflow float32 are refused.
void TestEvaluation::hugeMethodScalesAreConfigErrors()
{
    for (const char* name : {"scale-x=1e100", "scale-y=1e300", "scale-x=1e16"}) {
        try {
            eval::parseMethod(name, true);
            QFAIL(name);
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Config);
            QVERIFY2(std::string(e.what()).find(name) != std::string::npos, e.what());
        }
    }
    QCOMPARE(eval::parseMethod("scale-x=1e15", true).scale, 1e15);
    QCOMPARE(eval::parseMethod("scale-x=0.5", true).scale, 0.5);
}

// Issue 45: `all` alone or among names, in one text or several, is the union of every
// intervention that applies and the named ones (the CLI refused `all,yarn`, sweeps took it);
// an unknown name's message names `all` too.
void TestEvaluation::interventionsAllIsAUnionEverywhere()
{
    const auto config =
        lengen::test::loadOne(lengen::test::tinyConfig("linear_regression", "rope", 20));
    const auto applicable = applicableInterventions(config);
    auto texts = [](const std::vector<InterventionSpec>& specs) {
        std::vector<std::string> out;
        for (const auto& s : specs)
            out.push_back(s.text());
        return out;
    };
    const auto one = texts(expandInterventions({"all,yarn:factor=3"}, config));
    const auto two = texts(expandInterventions({"all", "yarn:factor=3"}, config));
    QCOMPARE(one, two);
    QCOMPARE(one.size(), applicable.size() + 1);
    QCOMPARE(one.back(), std::string("yarn:factor=3"));
    QCOMPARE(texts(expandInterventions({"yarn,all"}, config)).size(),
             applicable.size());  // once each
    try {
        expandInterventions({"all,bogus"}, config);
        QFAIL("an unknown name is a config error");
    } catch (const Error& e) {
        QCOMPARE(e.kind(), ErrorKind::Config);
        QVERIFY2(std::string(e.what()).find("all: every one that applies") != std::string::npos,
                 e.what());
    }
}

QTEST_APPLESS_MAIN(TestEvaluation)
#include "tst_evaluation.moc"
