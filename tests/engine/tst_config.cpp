// Config loading: !include resolution, every error with file/line/key, warnings, derived
// values of the reference (§5.4), curriculum and LR schedule, YAML round trip, shipped configs.

#include <filesystem>
#include <fstream>
#include <optional>

#include "config/yaml_tree.h"
#include "lengen/engine/config.h"
#include "lengen/engine/config_edit.h"
#include "lengen/engine/encodings.h"
#include "lengen/engine/sweep.h"
#include "test_support.h"
#include "train/train_loop.h"

using namespace lengen;
using engine::ConfigError;
namespace fs = std::filesystem;

namespace {

const char* kModel = "family: Llama2\nmax_length: [22]\nhidden_size: 16\nnum_hidden_layers: 2\n"
                     "num_attention_heads: 2\n";
const char* kCurriculum = "dims: {start: 2, end: 5, increment: 1, interval: 100}\n"
                          "points: {start: 5, end: 11, increment: 2, interval: 100}\n";

// A config folder: run.yaml includes parts/model.yaml and parts/curriculum.yaml.
std::string writeConfigTree(const std::string& dir, const std::string& model,
                            const std::string& curriculum, const std::string& runExtra = "",
                            const std::string& taskName = "linear_regression")
{
    test::writeFile(dir, "parts/model.yaml", model);
    test::writeFile(dir, "parts/curriculum.yaml", curriculum);
    return test::writeFile(dir, "run.yaml",
                           "model:\n  !include parts/model.yaml\n" + runExtra +
                               "task:\n  data: gaussian\n  name: " + taskName +
                               "\n  curriculum:\n    !include parts/curriculum.yaml\n"
                               "training:\n  max_steps: 10\n");
}

}  // namespace

class TestConfig final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void includesResolveRelativeAndNested();
    void pathRelativeToTheWorkingFolderIncludes();
    void includeChainsAndNamesAreBounded();
    void nonFiniteNumbersAreRefused();
    void differencesBetweenRuns();
    void referenceFireWidthIsStored();
    void errorsNameFileLineAndKey_data();
    void errorsNameFileLineAndKey();
    void reportsEveryIssueAtOnce();
    void unknownKeyIsAWarning();
    void manyProblemsAreCountedNotListed();
    void derivedValuesOfShippedConfigs();
    void maxLengthListGivesOneRunPerValue();
    void curriculumSchedule();
    void learningRateSchedule();
    void compatReferenceOverridesOptimiser();
    void resolvedYamlRoundTrips();
    void everyShippedConfigValidates();
    void encodingTableDrivesNames();
};

void TestConfig::includesResolveRelativeAndNested()
{
    const auto dir = test::scratchDir("include");
    // parts/model.yaml itself includes sizes/llama.yaml relative to parts/.
    test::writeFile(dir, "parts/sizes/llama.yaml", "hidden_size: 24\nnum_hidden_layers: 3\n");
    const auto path = writeConfigTree(dir,
                                      "family: Llama2\nmax_length: [22]\nnum_attention_heads: 4\n"
                                      "hidden_size: 24\nnum_hidden_layers: 3\n",
                                      kCurriculum);
    auto run = engine::loadConfigFile(path).runs.at(0);
    QCOMPARE(run.model.hiddenSize, 24);
    QCOMPARE(run.model.numHeads, 4);
    QCOMPARE(run.task.curriculum.points.end, 11);

    // A nested include: model -> nested file whose own include is relative to itself.
    test::writeFile(dir, "a/b/leaf.yaml", "start: 3\nend: 4\nincrement: 1\ninterval: 7\n");
    test::writeFile(dir, "a/mid.yaml",
                    "dims:\n  !include b/leaf.yaml\npoints:\n  !include b/leaf.yaml\n");
    const auto nested = test::writeFile(
        dir, "nested.yaml",
        std::string("model:\n  !include parts/model.yaml\ntask:\n  name: linear_regression\n"
                    "  curriculum:\n    !include a/mid.yaml\ntraining: {max_steps: 5}\n"));
    auto n = engine::loadConfigFile(nested).runs.at(0);
    QCOMPARE(n.task.curriculum.dims.interval, 7);
    QCOMPARE(n.task.curriculum.points.start, 3);
}

// Issue 29, defect 1: `cd configs/tasks/linear_regression && lengen validate rope.yaml` was
// refused because the file's folder ("") read as "text must be complete".
void TestConfig::pathRelativeToTheWorkingFolderIncludes()
{
    const auto dir = test::scratchDir("cwd");
    writeConfigTree(dir, kModel, kCurriculum);
    const auto saved = fs::current_path();
    fs::current_path(dir);
    try {
        const auto loaded = engine::loadConfigFile("run.yaml");
        fs::current_path(saved);
        QCOMPARE(loaded.runs.at(0).model.hiddenSize, 16);
    } catch (const std::exception& e) {
        fs::current_path(saved);
        QFAIL(e.what());
    }
    // The shipped reference configs, named from their own folder.
    fs::current_path(test::sourcePath("configs/tasks/linear_regression"));
    try {
        const auto loaded = engine::loadConfigFile("rope.yaml");
        fs::current_path(saved);
        QVERIFY(!loaded.runs.empty());
    } catch (const std::exception& e) {
        fs::current_path(saved);
        QFAIL(e.what());
    }
}

// Issue 29, defects 11 and 12: a chain of files each including the next crashed with SIGSEGV
// (stack overflow) at ~30,000 files; an overlong include name was an internal error.
void TestConfig::includeChainsAndNamesAreBounded()
{
    const auto dir = test::scratchDir("chain");
    constexpr int kFiles = 100;  // past the documented 64; 64 is still accepted
    for (int i = 0; i < kFiles; ++i)
        test::writeFile(dir, "c" + std::to_string(i) + ".yaml",
                        "!include c" + std::to_string(i + 1) + ".yaml\n");
    test::writeFile(dir, "c" + std::to_string(kFiles) + ".yaml", "start: 1\n");
    try {
        engine::config::loadYamlFile(dir + "/c0.yaml");
        QFAIL("a 100-file include chain was accepted");
    } catch (const ConfigError& e) {
        QVERIFY2(std::string(e.what()).find("nested deeper than 64 files") != std::string::npos,
                 e.what());
    }
    auto shallow = engine::config::loadYamlFile(dir + "/c" + std::to_string(kFiles - 60) + ".yaml");
    QVERIFY(shallow->find("start"));

    const std::string longName(5000, 'x');
    const auto path =
        test::writeFile(dir, "long.yaml", "model:\n  !include " + longName + ".yaml\n");
    try {
        engine::config::loadYamlFile(path);
        QFAIL("an overlong include name was accepted");
    } catch (const ConfigError& e) {
        const std::string message = e.what();
        QVERIFY2(message.find("long.yaml:2") != std::string::npos, e.what());
        QVERIFY2(message.find("name too long") != std::string::npos, e.what());
    } catch (const std::exception& e) {
        QFAIL((std::string("not a config error: ") + e.what()).c_str());
    }
}

// Issue 29, defect 16: `learning_rate: .inf` validated and trained NaN from step 1.
void TestConfig::nonFiniteNumbersAreRefused()
{
    for (const std::string value : {".inf", "inf", "-.inf", ".nan"}) {
        const auto dir = test::scratchDir("inf");
        const auto path = writeConfigTree(dir, kModel, kCurriculum);
        std::ofstream(path, std::ios::app)
            << "  learning_rate: " << value << "\n";  // under training:
        try {
            engine::loadConfigFile(path);
            QFAIL(("learning_rate: " + value + " was accepted").c_str());
        } catch (const ConfigError& e) {
            QVERIFY2(std::string(e.what()).find("training.learning_rate") != std::string::npos,
                     e.what());
        }
    }
}

// Compare's config table: only the keys whose values differ, a value per run.
void TestConfig::differencesBetweenRuns()
{
    const auto dir = test::scratchDir("diff");
    const auto a =
        engine::loadConfigFile(writeConfigTree(dir + "/a", kModel, kCurriculum)).runs.at(0);
    const auto b = engine::loadConfigFile(
                       writeConfigTree(dir + "/b",
                                       QString(kModel)
                                           .replace("num_hidden_layers: 2", "num_hidden_layers: 3")
                                           .toStdString(),
                                       kCurriculum))
                       .runs.at(0);
    QVERIFY(engine::configDifferences({a, a}).empty());
    const auto d = engine::configDifferences({a, b, a});
    QCOMPARE(d.size(), size_t(1));
    QCOMPARE(d[0].key, std::string("model.num_hidden_layers"));
    QCOMPARE(d[0].values, (std::vector<std::string>{"2", "3", "2"}));
    QCOMPARE(d[0].notApplied, (std::vector<std::string>{"", "", ""}));

    // Issue 41, defect 6: a key one encoding reads and another ignores is "not applied" for
    // the other (the studio shows "—" and the reason); a key no compared run reads is no row.
    auto withFactor = [](const std::string& pe) {
        auto yaml = test::tinyConfig("linear_regression", pe, 20);
        const auto at = yaml.find("type: " + pe + "\n");
        yaml.insert(at + 7 + pe.size(), "    factor: 4\n");
        return test::loadOne(yaml);
    };
    const auto yarn = withFactor("yarn"), nope = withFactor("nope");
    const auto rope = test::loadOne(test::tinyConfig("linear_regression", "rope", 20));
    const auto plainNope = test::loadOne(test::tinyConfig("linear_regression", "nope", 20));
    const auto byKey = [](const std::vector<engine::ConfigDifference>& all,
                          const std::string& key) {
        for (const auto& x : all)
            if (x.key == key)
                return std::optional<engine::ConfigDifference>(x);
        return std::optional<engine::ConfigDifference>();
    };
    const auto yn = engine::configDifferences({yarn, plainNope});
    const auto factor = byKey(yn, "patch.rope_scaling.factor");
    QVERIFY(factor.has_value());
    QCOMPARE(factor->notApplied, (std::vector<std::string>{"", "NoPE does not read it"}));
    QVERIFY(!byKey(engine::configDifferences({nope, rope}), "patch.rope_scaling.factor"));
    // Randomized positions: a run without them compares as 0 (off), not as a missing key.
    auto randomRope = rope;
    randomRope.training.randomPositions = 144;
    const auto random = byKey(engine::configDifferences({rope, randomRope}),
                              "training.random_positions.max_position");
    QVERIFY(random.has_value());
    QCOMPARE(random->values, (std::vector<std::string>{"0", "144"}));
}

// Issue 29: under compat: reference a FIRE model is max_position_embeddings wide (§9.5), but
// the stored config said mlp_width 32.
void TestConfig::referenceFireWidthIsStored()
{
    const auto dir = test::scratchDir("fire");
    const auto path = writeConfigTree(dir, kModel, kCurriculum,
                                      "patch:\n  rope_scaling: {type: fire}\ncompat: reference\n");
    const auto run = engine::loadConfigFile(path).runs.at(0);
    QCOMPARE(run.position.fireMlpWidth, 22);  // max_length 22
    const auto resolved = engine::toYaml(run, engine::YamlStyle::Resolved);
    QVERIFY2(resolved.find("mlp_width: 22") != std::string::npos, resolved.c_str());
    const auto again = engine::loadConfigText(resolved, "stored").runs.at(0);
    QCOMPARE(again.position.fireMlpWidth, 22);
    // Without compat the configured width stays (the FIRE paper's 32 by default).
    const auto intended =
        engine::loadConfigFile(writeConfigTree(dir + "/intended", kModel, kCurriculum,
                                               "patch:\n  rope_scaling: {type: fire}\n"))
            .runs.at(0);
    QCOMPARE(intended.position.fireMlpWidth, 32);
}

void TestConfig::errorsNameFileLineAndKey_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("curriculum");
    QTest::addColumn<QString>("runExtra");
    QTest::addColumn<QString>("task");
    QTest::addColumn<QString>("fileAndLine");  // expected "file:line" suffix in the message
    QTest::addColumn<QString>("needle");

    const QString model = kModel, cur = kCurriculum;
    QTest::newRow("missing include") << model << cur << "patch:\n  !include nope/missing.yaml\n"
                                     << "linear_regression"
                                     << "run.yaml:4"
                                     << "included file not found";
    QTest::newRow("wrong type") << model + "rope_theta: lots\n"
                                << cur << ""
                                << "linear_regression"
                                << "model.yaml:6"
                                << "model.rope_theta: expected a number";
    QTest::newRow("unknown task") << model << cur << ""
                                  << "linear_progression"
                                  << "run.yaml:5"
                                  << "task.name: unknown task 'linear_progression'";
    QTest::newRow("unknown PE") << model << cur << "patch:\n  rope_scaling: {type: bogus}\n"
                                << "linear_regression"
                                << "run.yaml:4"
                                << "patch.rope_scaling.type: unknown position encoding 'bogus'";
    QTest::newRow("unknown family") << QString(kModel).replace("Llama2", "Llama9") << cur << ""
                                    << "linear_regression"
                                    << "model.yaml:1"
                                    << "model.family: unknown model family 'Llama9'";
    QTest::newRow("non-positive size")
        << QString(kModel).replace("num_hidden_layers: 2", "num_hidden_layers: 0") << cur << ""
        << "linear_regression"
        << "model.yaml:4"
        << "model.num_hidden_layers: must be >= 1";
    // A fuzz finding: 4 x hidden_size overflowed an int and the resolved config did not load.
    QTest::newRow("absurd width") << QString(kModel).replace("hidden_size: 16",
                                                             "hidden_size: 1000000000")
                                  << cur << ""
                                  << "linear_regression"
                                  << "model.yaml:3"
                                  << "model.hidden_size: 1000000000 is absurd (at most 1048576)";
    QTest::newRow("heads do not divide hidden")
        << QString(kModel).replace("num_attention_heads: 2", "num_attention_heads: 3") << cur << ""
        << "linear_regression"
        << "model.yaml:5"
        << "hidden_size 16 is not divisible by num_attention_heads 3";
    QTest::newRow("curriculum start > end")
        << model << QString(kCurriculum).replace("start: 5, end: 11", "start: 12, end: 11") << ""
        << "linear_regression"
        << "curriculum.yaml:2"
        << "task.curriculum.points.start: start (12) is greater than end (11)";
    // Found by fuzz_config: these wrapped in a cast and validated as 1 layer / a negative length.
    QTest::newRow("size past int")
        << QString(kModel).replace("num_hidden_layers: 2", "num_hidden_layers: 4294967297") << cur
        << ""
        << "linear_regression"
        << "model.yaml:4"
        << "model.num_hidden_layers: must be <= 2147483647";
    QTest::newRow("max_length past int")
        << QString(kModel).replace("[22]", "[22, 9223372036854775808]") << cur << ""
        << "linear_regression"
        << "model.yaml:2"
        << "model.max_length: must be <= 2147483647 or inf";
    // Found by the reliability corpus: validated, then trained NaN from step 0.
    QTest::newRow("odd rotary head width")
        << QString(kModel).replace("hidden_size: 16", "hidden_size: 14") << cur << ""
        << "linear_regression"
        << "model.yaml:5"
        << "model.num_attention_heads: hidden_size / num_attention_heads = 7 is odd";
    QTest::newRow("syntax error") << model + "bad: [1, 2\n"
                                  << cur << ""
                                  << "linear_regression"
                                  << "model.yaml:6:6"
                                  << "YAML syntax error: this '[' is never closed";
    // Issue 41, defect 7: the line of the bracket left open, not the line where yaml-cpp noticed.
    QTest::newRow("unclosed list mid-file") << QString(kModel).replace("[22]", "[22") << cur << ""
                                            << "linear_regression"
                                            << "model.yaml:2:"
                                            << "this '[' is never closed (no ']' before line";
    QTest::newRow("unclosed map")
        << model << QString(kCurriculum).replace("interval: 100}\npoints", "interval: 100\npoints")
        << ""
        << "linear_regression"
        << "curriculum.yaml:1:7"
        << "this '{' is never closed";
}

void TestConfig::errorsNameFileLineAndKey()
{
    QFETCH(QString, model);
    QFETCH(QString, curriculum);
    QFETCH(QString, runExtra);
    QFETCH(QString, task);
    QFETCH(QString, fileAndLine);
    QFETCH(QString, needle);
    const auto dir = test::scratchDir("errors");
    const auto path = writeConfigTree(dir, model.toStdString(), curriculum.toStdString(),
                                      runExtra.toStdString(), task.toStdString());
    try {
        engine::loadConfigFile(path);
        QFAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
        const QString message = QString::fromStdString(e.what());
        QVERIFY2(message.contains(fileAndLine), qPrintable(message));
        QVERIFY2(message.contains(needle), qPrintable(message));
        QCOMPARE(e.kind(), engine::ErrorKind::Config);
        QVERIFY(!e.issues().empty());
        QVERIFY(e.issues().front().where.line > 0);
    }
}

void TestConfig::reportsEveryIssueAtOnce()
{
    const auto dir = test::scratchDir("many");
    const auto path = writeConfigTree(
        dir, QString(kModel).replace("hidden_size: 16", "hidden_size: -4").toStdString(),
        kCurriculum, "", "no_such_task");
    try {
        engine::loadConfigFile(path);
        QFAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
        QVERIFY2(e.issues().size() >= 2, e.what());
    }
}

void TestConfig::unknownKeyIsAWarning()
{
    const auto dir = test::scratchDir("warn");
    const auto path = writeConfigTree(dir, std::string(kModel) + "hiden_size: 3\n", kCurriculum);
    const auto loaded = engine::loadConfigFile(path);
    QCOMPARE(loaded.warnings.size(), size_t(1));
    const auto text = QString::fromStdString(loaded.warnings[0].toString());
    QVERIFY2(text.contains("model.yaml:6") && text.contains("model.hiden_size"), qPrintable(text));
}

// Issue 45: 5,000 unknown keys and 300 bad values: 100 of each listed, then one line with how
// many more (a file of 200,000 unknown keys once took 151 s to validate, duplicate detection
// scanning every earlier key; benchmark: 150,000 keys validate in 0.9 s).
void TestConfig::manyProblemsAreCountedNotListed()
{
    const auto dir = test::scratchDir("many-keys");
    std::string extra;
    for (int i = 0; i < 5000; ++i)
        extra += "k" + std::to_string(i) + ": " + std::to_string(i) + "\n";
    const auto path = writeConfigTree(dir, std::string(kModel) + extra, kCurriculum);
    const auto loaded = engine::loadConfigFile(path);
    QCOMPARE(loaded.warnings.size(), size_t(101));
    QVERIFY2(loaded.warnings.back().message.find("… and 4900 more warnings") != std::string::npos,
             loaded.warnings.back().message.c_str());
    // Errors alike (a sweep file: unknown keys are errors there).
    std::string sweep = "base: base.yaml\naxes:\n  seed: 1\nstages:\n  eval:\n";
    for (int i = 0; i < 300; ++i)
        sweep += "    bad" + std::to_string(i) + ": 1\n";
    try {
        engine::loadSweepText(sweep, dir + "/sweep.yaml");
        QFAIL("unknown stage options are errors in a sweep");
    } catch (const engine::ConfigError& e) {
        QCOMPARE(e.issues().size(), size_t(101));
        QVERIFY2(e.issues().back().message.find("… and 200 more") != std::string::npos,
                 e.issues().back().message.c_str());
    }
}

void TestConfig::derivedValuesOfShippedConfigs()
{
    auto yarn =
        engine::loadConfigFile(test::sourcePath("configs/tasks/linear_regression/yarn.yaml"))
            .runs.at(0);
    QCOMPARE(yarn.model.nInDims, 50);
    QCOMPARE(yarn.model.intermediateSize, 1024);
    QCOMPARE(yarn.model.maxPositionEmbeddings, 102);
    QCOMPARE(yarn.position.type, std::string("yarn"));
    QVERIFY(yarn.position.factor);
    QVERIFY(std::abs(*yarn.position.factor - 2.029850746268657) < 1e-12);
    QCOMPARE(yarn.training.maxSteps, std::int64_t(50000));
    QCOMPARE(yarn.warmupSteps(), std::int64_t(1500));

    auto rope = engine::loadConfigFile(test::sourcePath("configs/tasks/cnf/rope.yaml")).runs.at(0);
    QCOMPARE(rope.position.type, std::string("rope"));
    QVERIFY(!rope.position.factor);  // no rope_scaling: no factor
    QVERIFY(rope.isBooleanTask());
    QCOMPARE(rope.peDisplayName(), std::string("RoPE"));

    // The README's intended setting: max_length 102 with 51 points gives factor 8.
    auto paper = test::loadOne("model: {family: Llama2, max_length: [102], hidden_size: 32, "
                               "num_hidden_layers: 1, num_attention_heads: 2}\n"
                               "patch: {name: yarn, rope_scaling: {type: yarn}}\n"
                               "task: {name: linear_regression, curriculum: {dims: {start: 5, "
                               "end: 20, increment: 1, interval: 2000}, points: {start: 11, "
                               "end: 51, increment: 2, interval: 2000}}}\ntraining: {}\n");
    QCOMPARE(*paper.position.factor, 8.0);
}

void TestConfig::maxLengthListGivesOneRunPerValue()
{
    const auto gpt =
        engine::loadConfigFile(test::sourcePath("configs/tasks/linear_regression/gpt.yaml"));
    QCOMPARE(gpt.runs.size(), size_t(2));
    QCOMPARE(gpt.runs[0].model.maxLength, 402.0);
    QCOMPARE(gpt.runs[1].model.maxLength, 2048.0);
    QCOMPARE(gpt.runs[0].model.hiddenSize, 256);  // n_embed honoured...
    QCOMPARE(gpt.warnings.size(), size_t(1));     // ...with a warning
    // The rope factor is recomputed per value (the reference kept the first one, §9.12).
    const auto multi = engine::loadConfigText(
        "model: {family: Llama2, max_length: [102, 204], hidden_size: 32, num_hidden_layers: 1, "
        "num_attention_heads: 2}\npatch: {rope_scaling: {type: yarn}}\n"
        "task: {name: linear_regression, curriculum: {dims: {start: 5, end: 20, increment: 1, "
        "interval: 2000}, points: {start: 11, end: 51, increment: 2, interval: 2000}}}\n"
        "training: {}\n",
        "multi");
    QCOMPARE(*multi.runs[0].position.factor, 8.0);
    QCOMPARE(*multi.runs[1].position.factor, 16.0);
}

void TestConfig::curriculumSchedule()
{
    auto c = engine::loadConfigFile(test::sourcePath("configs/tasks/linear_regression/rope.yaml"))
                 .runs.at(0);
    const auto& dims = c.task.curriculum.dims;
    const auto& points = c.task.curriculum.points;
    const std::vector<std::array<int, 3>> expected = {
        // step, d_t, N (reference §5.5 table)
        {0, 5, 11},       {1999, 5, 11},    {2000, 8, 21},    {10000, 20, 61},
        {20000, 35, 111}, {30000, 50, 161}, {38000, 50, 201}, {49999, 50, 201}};
    for (const auto& [step, d, n] : expected) {
        QCOMPARE(dims.valueAt(step), d);
        QCOMPARE(points.valueAt(step), n);
    }
}

void TestConfig::learningRateSchedule()
{
    auto c = engine::loadConfigFile(test::sourcePath("configs/tasks/linear_regression/rope.yaml"))
                 .runs.at(0);
    using engine::training::learningRateAt;
    QCOMPARE(learningRateAt(c, 0), 0.0);  // first update at LR 0, as the reference
    QVERIFY(std::abs(learningRateAt(c, 750) - 1.5e-4) < 1e-15);
    QVERIFY(std::abs(learningRateAt(c, 1500) - 3e-4) < 1e-15);
    QVERIFY(std::abs(learningRateAt(c, 25750) - 1.5e-4) < 1e-12);
    QCOMPARE(learningRateAt(c, 50000), 0.0);
    QCOMPARE(engine::training::baselineLoss(5, 11), 15.0 / 11.0);
}

void TestConfig::compatReferenceOverridesOptimiser()
{
    auto intended =
        engine::loadConfigFile(test::sourcePath("configs/tasks/linear_regression/rope.yaml"))
            .runs.at(0);
    QCOMPARE(intended.effectiveWeightDecay(), 0.0);
    QCOMPARE(intended.effectiveAdamEpsilon(), 8e-8);
    QCOMPARE(intended.effectiveMaxGradNorm(), 1.0);
    auto yaml = QString::fromStdString(engine::toYaml(intended));
    QVERIFY(yaml.contains("compat: intended"));
    auto reference =
        test::loadOne(yaml.replace("compat: intended", "compat: reference").toStdString());
    QCOMPARE(reference.compat, engine::CompatMode::Reference);
    QCOMPARE(reference.effectiveWeightDecay(), 0.01);
    QCOMPARE(reference.effectiveAdamEpsilon(), 1e-8);
    QCOMPARE(reference.effectiveMaxGradNorm(), 0.0);
}

void TestConfig::resolvedYamlRoundTrips()
{
    for (const char* file :
         {"configs/tasks/linear_regression/yarn.yaml", "configs/tasks/cnf/alibi.yaml",
          "configs/toy_task.yaml", "configs/tasks/parity/mamba.yaml"}) {
        auto first = engine::loadConfigFile(test::sourcePath(file)).runs.at(0);
        first.seed = 12345;
        const std::string yaml = engine::toYaml(first);
        const auto again = engine::loadConfigText(yaml, "roundtrip");
        QVERIFY2(again.warnings.empty(),
                 again.warnings.empty() ? "" : again.warnings[0].toString().c_str());
        const auto& second = again.runs.at(0);
        QCOMPARE(engine::toYaml(second), yaml);
        QCOMPARE(second.model.maxLength, first.model.maxLength);
        QCOMPARE(second.position.factor, first.position.factor);  // bit-exact doubles
        QCOMPARE(second.training.adamEpsilon, first.training.adamEpsilon);
        QCOMPARE(*second.seed, std::uint64_t(12345));
    }
}

void TestConfig::everyShippedConfigValidates()
{
    int runConfigs = 0, parts = 0;
    for (const auto& entry : fs::recursive_directory_iterator(test::sourcePath("configs"))) {
        if (entry.path().extension() != ".yaml")
            continue;
        const auto path = entry.path().string();
        auto tree = engine::config::loadYamlFile(path);  // every file parses
        if (!tree->find("task")) {
            ++parts;
            continue;
        }
        try {
            const auto loaded = engine::loadConfigFile(path);
            QVERIFY(!loaded.runs.empty());
            for (const auto& w : loaded.warnings)  // only the honoured GPT-2 misspelling
                QVERIFY2(w.toString().find("n_embed") != std::string::npos, w.toString().c_str());
            ++runConfigs;
        } catch (const std::exception& e) {
            QFAIL(qPrintable(QString::fromStdString(path + ": " + e.what())));
        }
    }
    QVERIFY2(runConfigs >= 100, qPrintable(QString::number(runConfigs)));  // 99 tasks + toy + quick
    QVERIFY(parts >= 20);
}

// One row per encoding: every name a sweep takes selects that row, the config reader accepts
// every Llama row's type (and stores it), legends use the row's display name, and the rotary
// rows are the ones that need an even head width.
void TestConfig::encodingTableDrivesNames()
{
    const auto& table = engine::encodingTable();
    QCOMPARE(engine::sweepPeNames().size(), table.size());
    for (const auto& e : table) {
        engine::RunConfig c;
        QVERIFY2(engine::applyPeName(c, e.name), e.name.c_str());
        QCOMPARE(engine::encodingOf(c).name, e.name);
        QCOMPARE(c.peDisplayName(), e.display);
        QCOMPARE(engine::findEncoding(e.name), &e);
        QVERIFY(!e.summary.empty());
        if (e.backbone != engine::Backbone::Llama)
            continue;
        QCOMPARE(engine::findEncoding(e.type), &e);
        const auto run = test::loadOne(test::tinyConfig("linear_regression", e.type));
        QCOMPARE(run.position.type, e.type);
        QCOMPARE(engine::encodingOf(run).name, e.name);
        // hidden 6 over 2 heads: a head width of 3 has no partner for a rotary pair.
        bool refused = false;
        try {
            test::loadOne(
                "model: {family: Llama2, hidden_size: 6, num_hidden_layers: 1, "
                "num_attention_heads: 2}\npatch: {rope_scaling: {type: " +
                e.type +
                ", factor: 2.0}}\ntask: {name: linear_regression, curriculum: {dims: "
                "{start: 3, end: 3, increment: 0, interval: 10}, points: {start: 5, end: 5, "
                "increment: 0, interval: 10}}}\ntraining: {}\n");
        } catch (const engine::ConfigError& err) {
            refused = std::string(err.what()).find("even head width") != std::string::npos;
        }
        QCOMPARE(refused, e.kind == engine::PositionKind::Rotary);
    }
    QVERIFY(!engine::findEncoding("t5-bias"));
    QVERIFY(engine::findEncoding("gpt"));  // the sweep's old spelling of gpt2
    QCOMPARE(engine::knownPositionTypes().size(), size_t(14));
}

QTEST_APPLESS_MAIN(TestConfig)
#include "tst_config.moc"
