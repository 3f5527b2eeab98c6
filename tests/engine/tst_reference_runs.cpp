// Runs of the reference's Python code in and out. Fixtures come from PyTorch itself
// (tests/interop/reference_model.py: the reference's architectures written from the spec with
// its module names, random weights, torch.save in the reference's dict layout, predictions on
// fixed prompts). LenGen must import them and predict the same within 1e-5, export runs that
// PyTorch loads with load_state_dict(strict=True) and that predict the same, and refuse every
// damaged input with a message naming the file (and key), leaving nothing behind.

#include <QProcess>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <map>

#include "eval/model_runner.h"
#include "interop/torch_archive.h"
#include "io/run_store.h"
#include "lengen/engine/reference_runs.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/trainer.h"
#include "test_support.h"

using namespace lengen;
namespace fs = std::filesystem;

namespace {

struct Proc {
    int code = -1;
    QString out, err;
};

Proc start(const QString& program, const QStringList& args, int timeoutMs = 180000)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

Proc python(const QStringList& args, int timeoutMs = 180000)
{
    return start(
        test::pythonPath(),
        QStringList{QString::fromStdString(test::sourcePath("tests/interop/reference_model.py"))} +
            args,
        timeoutMs);
}

// reference_model.py's commands in one Python process, a result each: importing PyTorch costs
// 1-3 s, more than a command, and 35 starts took 290 s of CI's PyPI job (issue 82 §7).
std::vector<Proc> pythonBatch(const std::vector<QStringList>& commands)
{
    QString text;
    for (const auto& c : commands)
        text += c.join('\t') + '\n';
    const auto file =
        test::writeFile(test::scratchDir("python-batch"), "commands.tsv", text.toStdString());
    const auto r = python({"batch", QString::fromStdString(file)}, 900000);
    std::vector<Proc> out(commands.size(), Proc{-1, {}, r.err});  // no line: the batch died
    for (const auto& line : r.out.split('\n', Qt::SkipEmptyParts)) {
        const auto f = line.split('\t');
        const int i = f.value(0).toInt();
        if (f.size() >= 2 && i >= 0 && i < int(out.size()))
            out[size_t(i)] = {f[1].toInt(), f.mid(2).join('\t'), {}};
    }
    return out;
}

// What initTestCase had PyTorch make: a reference run per encoding, and the state.pt of each
// damage the fixtures take from PyTorch (in a folder of its own, beside nothing else).
const char* const kPythonDamages[] = {"legacy",         "rename-key", "wrong-shape",
                                      "foreign-object", "nan-weight", "negative-step",
                                      "step-past-max",  "float-step"};
struct Made {
    std::map<std::string, std::string> runs;     ///< encoding -> run folder
    std::map<std::string, std::string> damaged;  ///< kind -> folder with the damaged state.pt
};
Made& made()
{
    static Made m;
    return m;
}

Proc cli(const QStringList& args) { return start(LENGEN_CLI_PATH, args); }

bool havePyTorch() { return start(test::pythonPath(), {"-c", "import torch, yaml"}).code == 0; }

struct Fixture {
    torch::Tensor xs, ys, pred;
};

Fixture readFixture(const std::string& path)
{
    const auto root = engine::interop::readTorchFile(path);
    return {root->get("xs")->tensor, root->get("ys")->tensor, root->get("pred")->tensor};
}

torch::Tensor predict(const std::string& runFile, const Fixture& f)
{
    engine::AnalysisOptions o;
    o.device = "cpu";
    auto run = engine::eval::loadRun(runFile, o);
    torch::NoGradGuard noGrad;
    return run.model->forward(f.xs, f.ys).predictions;
}

double maxDiff(const torch::Tensor& a, const torch::Tensor& b)
{
    return (a - b).abs().max().item<double>();
}

// A reference run of `pe` made by PyTorch (initTestCase): read it, or copy it to change it.
std::string referenceRun(const std::string& pe) { return made().runs.at(pe); }

bool leftovers(const std::string& root)
{
    std::error_code ec;
    if (!fs::exists(root, ec))
        return false;
    for (auto& e : fs::recursive_directory_iterator(root))
        if (e.is_regular_file() || e.path().string().find(".importing") != std::string::npos)
            return true;
    return false;
}

}  // namespace

class TestReferenceRuns final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void importsAndExportsEveryBackbone_data();
    void importsAndExportsEveryBackbone();
    void lengenTrainedRunsRoundTrip_data();
    void lengenTrainedRunsRoundTrip();
    void damagedInputsAreRefused_data();
    void damagedInputsAreRefused();
    void mismatchedOptimizerStillImportsWeights();
    void commandLine();
    void pytorchLoadsEveryExport();  // last: the exports the functions above made

private:
    struct PendingCheck {
        QString what;
        std::string exported, fixture;
    };
    std::vector<PendingCheck> m_checks;  ///< exports for PyTorch to load, in one process
};

void TestReferenceRuns::initTestCase()
{
    if (!havePyTorch()) {
        if (qEnvironmentVariableIsSet("LENGEN_REQUIRE_PYTHON_TORCH"))
            QFAIL("python3-torch / python3-yaml are required here (CI installs them)");
        QSKIP("python3-torch and python3-yaml are not installed: the fixtures need PyTorch");
    }
    // Every fixture PyTorch makes, in one process: a run per encoding, then the damages.
    std::vector<QStringList> commands;
    for (const char* pe : {"rope", "nope", "alibi", "fire", "yarn", "dynamic-yarn", "linear",
                           "dynamic", "mamba", "gpt2"}) {
        made().runs[pe] = test::scratchDir(std::string("ref-") + pe);
        commands.push_back({"make", QString::fromStdString(made().runs[pe]), pe});
    }
    const auto damage = [&](const std::string& kind, const std::string& from) {
        made().damaged[kind] = test::scratchDir("ref-damaged-" + kind);
        commands.push_back({"damage", QString::fromStdString(made().runs[from]),
                            QString::fromStdString(made().damaged[kind]),
                            QString::fromStdString(kind)});
    };
    for (const char* kind : kPythonDamages)
        damage(kind, "rope");
    damage("bad-optimizer", "alibi");
    const auto results = pythonBatch(commands);
    for (size_t i = 0; i < results.size(); ++i)
        QVERIFY2(results[i].code == 0,
                 qPrintable(commands[i].join(' ') + ": " + results[i].out + results[i].err));
}

void TestReferenceRuns::importsAndExportsEveryBackbone_data()
{
    QTest::addColumn<QString>("pe");
    for (const char* pe : {"rope", "nope", "alibi", "fire", "yarn", "dynamic-yarn", "linear",
                           "dynamic", "mamba", "gpt2"})
        QTest::newRow(pe) << pe;
}

void TestReferenceRuns::importsAndExportsEveryBackbone()
{
    QFETCH(QString, pe);
    const std::string ref = referenceRun(pe.toStdString());
    const Fixture fx = readFixture(ref + "/fixture.pt");

    engine::ReferenceImportOptions o;
    o.outDir = test::scratchDir("imported");
    const auto imported = engine::importReferenceRun(ref, o);
    QVERIFY(imported.optimizerImported);
    QCOMPARE(imported.stepsDone, std::int64_t{2});  // train_step 1 = after the 2nd update
    QVERIFY(std::find(imported.importedMethods.begin(), imported.importedMethods.end(),
                      "standard") != imported.importedMethods.end());
    const auto info = engine::readRunInfo(imported.runFile);
    QCOMPARE(info.status, std::string("imported"));
    QCOMPARE(info.importedFrom, fs::weakly_canonical(ref).string());
    QVERIFY2(info.configYaml.find("compat: reference") != std::string::npos,
             info.configYaml.c_str());
    // A run id of its own (issue 29): the origin's wandb id names the folder and imported_from.
    const std::string folder = fs::path(imported.runFile).parent_path().filename().string();
    QVERIFY2(info.runId.size() == 8 && info.runId != folder,
             (info.runId + " vs " + folder).c_str());
    // The Python code seeds nothing: its seed is unknown, not the made-up generator seed.
    const auto shown = test::runLengen({"info", QString::fromStdString(imported.runFile)});
    QVERIFY2(shown.out.contains("seed unknown"), qPrintable(shown.out));

    const double importDiff = maxDiff(predict(imported.runFile, fx), fx.pred);
    qInfo("%s: import, max |LenGen - PyTorch| = %.3g", qPrintable(pe), importDiff);
    QVERIFY2(importDiff <= 1e-5, qPrintable(QString::number(importDiff)));
    QVERIFY(fx.pred.abs().max().item<double>() > 0.1);  // a comparison of non-trivial outputs

    // Export: PyTorch loads it strictly (model and AdamW state) and predicts the same.
    const std::string exported = test::scratchDir("exported-" + pe.toStdString());
    engine::exportReferenceRun(imported.runFile, exported);
    m_checks.push_back({pe, exported, ref + "/fixture.pt"});  // pytorchLoadsEveryExport

    // And back: the re-imported weights are the imported ones, bit for bit.
    o.outDir = test::scratchDir("reimported");
    const auto again = engine::importReferenceRun(exported, o);
    const auto a = engine::io::readCheckpoint(imported.runFile);
    const auto b = engine::io::readCheckpoint(again.runFile);
    QCOMPARE(a.model.size(), b.model.size());
    for (size_t i = 0; i < a.model.size(); ++i) {
        QCOMPARE(a.model[i].name, b.model[i].name);
        QVERIFY2(torch::equal(a.model[i].value, b.model[i].value), a.model[i].name.c_str());
        QVERIFY(torch::equal(a.expAvg[i].value, b.expAvg[i].value));
    }
    QCOMPARE(a.stepsDone, b.stepsDone);
}

void TestReferenceRuns::lengenTrainedRunsRoundTrip_data()
{
    QTest::addColumn<QString>("pe");
    for (const char* pe : {"rope", "fire", "alibi", "t5"})
        QTest::newRow(pe) << pe;
}

void TestReferenceRuns::lengenTrainedRunsRoundTrip()
{
    QFETCH(QString, pe);
    engine::RunConfig config =
        test::loadOne(test::tinyConfig("linear_regression", pe.toStdString()));
    engine::TrainOptions t;
    t.outDir = test::scratchDir("trained");
    t.seed = 3;
    t.device = "cpu";
    t.threads = 1;
    engine::RunControl control;
    engine::TrainObserver quiet;
    const auto summary = engine::train(config, t, control, quiet);

    // LenGen's own predictions on fixed prompts become the fixture PyTorch must reproduce.
    Fixture fx{torch::randn({4, 7, 3}), torch::randn({4, 7}), {}};
    fx.pred = predict(summary.runFile, fx);
    const std::string dir = test::scratchDir("trained-export");
    auto root = engine::interop::PyValue::makeDict();
    root->set(engine::interop::PyValue::of(std::string("xs")), engine::interop::PyValue::of(fx.xs));
    root->set(engine::interop::PyValue::of(std::string("ys")), engine::interop::PyValue::of(fx.ys));
    root->set(engine::interop::PyValue::of(std::string("pred")),
              engine::interop::PyValue::of(fx.pred));
    engine::interop::writeTorchFile(dir + "/fixture.pt", *root);

    const std::string exported = dir + "/run";
    if (pe == "t5") {  // not in the reference's code: refused, naming the encoding, nothing written
        try {
            engine::exportReferenceRun(summary.runFile, exported);
            QFAIL("a T5-bias run was exported as a reference run");
        } catch (const engine::Error& e) {
            QCOMPARE(e.kind(), engine::ErrorKind::Config);
            QVERIFY2(std::string(e.what()).find("no T5 bias") != std::string::npos, e.what());
        }
        QVERIFY(!std::filesystem::exists(exported));
        return;
    }
    const auto result = engine::exportReferenceRun(summary.runFile, exported);
    if (pe == "fire")  // LenGen's FIRE width 32 reaches the reference through max_length
        QVERIFY(!result.notes.empty());
    m_checks.push_back({pe + " (trained by LenGen)", exported, dir + "/fixture.pt"});

    engine::ReferenceImportOptions o;
    o.outDir = dir + "/back";
    const auto back = engine::importReferenceRun(exported, o);
    QCOMPARE(back.stepsDone, std::int64_t{20});
    QVERIFY(torch::equal(predict(back.runFile, fx), fx.pred));
}

void TestReferenceRuns::damagedInputsAreRefused_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<int>("errorKind");
    QTest::addColumn<QString>("mentions");
    const int runFile = int(engine::ErrorKind::RunFile);
    QTest::newRow("no config.yaml") << "no-config" << runFile << "config.yaml";
    QTest::newRow("no state.pt") << "no-state" << runFile << "state.pt";
    QTest::newRow("text file") << "text" << runFile << "not a torch.save file";
    QTest::newRow("empty file") << "empty" << runFile << "state.pt";
    for (int percent : {1, 10, 50, 90, 99})
        QTest::newRow(qPrintable(QString("truncated at %1%").arg(percent)))
            << QString("truncate-%1").arg(percent) << runFile << "state.pt";
    QTest::newRow("flipped bytes") << "flip" << runFile << "state.pt";
    // LibTorch's zip reader skips CRC checks: one flipped bit in a tensor must still be caught.
    QTest::newRow("one flipped bit in the weights") << "flip-one" << runFile << "checksum";
    QTest::newRow("legacy format") << "legacy" << runFile << "legacy";
    QTest::newRow("renamed key") << "rename-key" << runFile
                                 << "transformer.layers.1.mlp.gate.weight";
    QTest::newRow("wrong shape") << "wrong-shape" << runFile << "[32, 16]";
    QTest::newRow("foreign object")
        << "foreign-object" << runFile << "torch.nn.modules.linear.Linear";
    QTest::newRow("NaN weight") << "nan-weight" << runFile
                                << "transformer.layers.0.mlp.up_proj.weight";
    QTest::newRow("negative train_step") << "negative-step" << runFile << "train_step";
    QTest::newRow("train_step past max_steps") << "step-past-max" << runFile << "max_steps 1000";
    QTest::newRow("float train_step") << "float-step" << runFile << "train_step is a float";
    QTest::newRow("config.yaml is a folder") << "config-dir" << runFile << "not a regular file";
    QTest::newRow("state.pt is a dangling link") << "state-link" << runFile << "dangling";
    QTest::newRow("bad config") << "bad-config" << int(engine::ErrorKind::Config) << "config.yaml";
}

void TestReferenceRuns::damagedInputsAreRefused()
{
    QFETCH(QString, kind);
    QFETCH(int, errorKind);
    QFETCH(QString, mentions);
    const std::string good = referenceRun("rope");
    const std::string bad = test::scratchDir("ref-bad");
    fs::copy(good, bad, fs::copy_options::overwrite_existing | fs::copy_options::recursive);
    const std::string state = bad + "/state.pt";
    const auto size = fs::file_size(state);
    const std::string k = kind.toStdString();
    if (k == "no-config")
        fs::remove(bad + "/config.yaml");
    else if (k == "no-state")
        fs::remove(state);
    else if (k == "config-dir") {
        fs::remove(bad + "/config.yaml");
        fs::create_directory(bad + "/config.yaml");
    } else if (k == "state-link") {
        fs::remove(state);
        fs::create_symlink(bad + "/nowhere.pt", state);
    } else if (k == "text")
        test::writeFile(bad, "state.pt", "model_state_dict: not a pickle\n");
    else if (k == "empty")
        test::writeFile(bad, "state.pt", "");
    else if (k.rfind("truncate-", 0) == 0)
        fs::resize_file(state, size * std::stoi(k.substr(9)) / 100);
    else if (k == "flip-one") {
        std::fstream f(state, std::ios::in | std::ios::out | std::ios::binary);
        f.seekg(static_cast<std::streamoff>(size * 6 / 10));
        const char c = static_cast<char>(f.get() ^ 0x10);
        f.seekp(static_cast<std::streamoff>(size * 6 / 10));
        f.put(c);
    } else if (k == "flip") {
        std::fstream f(state, std::ios::in | std::ios::out | std::ios::binary);
        for (std::uintmax_t at = 0; at < size; at += 97) {
            f.seekp(static_cast<std::streamoff>(at));
            f.put('\xff');
        }
    } else if (k == "bad-config")
        test::writeFile(bad, "config.yaml",
                        "model: {family: Llama2, max_length: [16], hidden_size: 32, "
                        "num_hidden_layers: 2, num_attention_heads: 4}\n"
                        "task: {data: gaussian, name: linear_regresion, curriculum: "
                        "{dims: {start: 2, end: 3, increment: 1, interval: 100}, points: "
                        "{start: 4, end: 6, increment: 1, interval: 100}}}\ntraining: {}\n");
    else  // made by PyTorch in initTestCase
        fs::copy_file(made().damaged.at(k) + "/state.pt", state,
                      fs::copy_options::overwrite_existing);

    engine::ReferenceImportOptions o;
    o.outDir = test::scratchDir("damaged-out");
    try {
        engine::importReferenceRun(bad, o);
        QFAIL("a damaged reference run was imported");
    } catch (const engine::Error& e) {
        const QString message =
            QString::fromUtf8(e.what()) + " " + QString::fromStdString(e.detail());
        QVERIFY2(int(e.kind()) == errorKind, qPrintable(message));
        QVERIFY2(message.contains(mentions), qPrintable(message));
        QVERIFY2(message.contains(QString::fromStdString(bad)), qPrintable(message));
    }
    QVERIFY2(!leftovers(o.outDir), "a failed import left files behind");
}

void TestReferenceRuns::mismatchedOptimizerStillImportsWeights()
{
    const std::string good = referenceRun("alibi");
    const std::string bad = test::scratchDir("ref-opt-bad");
    fs::copy(good, bad, fs::copy_options::overwrite_existing | fs::copy_options::recursive);
    fs::copy_file(made().damaged.at("bad-optimizer") + "/state.pt", bad + "/state.pt",
                  fs::copy_options::overwrite_existing);
    engine::ReferenceImportOptions o;
    o.outDir = test::scratchDir("opt-out");
    const auto r = engine::importReferenceRun(bad, o);
    QVERIFY(!r.optimizerImported);
    bool said = false;
    for (const auto& n : r.notes)
        said = said || n.find("optimizer state not imported") != std::string::npos;
    QVERIFY(said);
    const Fixture fx = readFixture(good + "/fixture.pt");
    QVERIFY(maxDiff(predict(r.runFile, fx), fx.pred) <= 1e-5);
}

void TestReferenceRuns::commandLine()
{
    const std::string tree = test::scratchDir("models-tree");
    const std::string runDir = tree + "/linear_regression/dim_2-3/20250224/fxrope";
    fs::create_directories(runDir);
    fs::copy(referenceRun("rope"), runDir,
             fs::copy_options::overwrite_existing | fs::copy_options::recursive);
    const QString out = QString::fromStdString(test::scratchDir("cli-out"));

    // A models/ tree: every run below it, into the reference's own layout.
    auto r = cli({"import-run", QString::fromStdString(tree), "--out", out});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QString runFile = r.out.trimmed();
    QCOMPARE(runFile, out + "/linear_regression/dim_2-3/20250224/fxrope/run.h5");
    QVERIFY2(r.err.contains("optimizer state included"), qPrintable(r.err));
    r = cli({"info", runFile});
    QVERIFY2(r.code == 0 && r.out.contains("imported"), qPrintable(r.out + r.err));
    // The same tree again: skipped; the run folder itself: an error (exit 4).
    r = cli({"import-run", QString::fromStdString(tree), "--out", out});
    QVERIFY2(r.code == 0 && r.err.contains("already imported"), qPrintable(r.err));
    r = cli({"import-run", QString::fromStdString(runDir), "--out", out});
    QCOMPARE(r.code, 4);
    r = cli({"import-run", out + "/nowhere"});
    QCOMPARE(r.code, 3);
    // A state.pt given for its folder; a hostile wandb_id stays inside --out.
    const std::string hostile = test::scratchDir("hostile-id");
    fs::copy(runDir, hostile, fs::copy_options::recursive);
    {
        std::ifstream in(hostile + "/config.yaml");
        std::string yaml((std::istreambuf_iterator<char>(in)), {});
        yaml.replace(yaml.find("wandb_id: fxrope"), 16, "wandb_id: ../../../../escaped");
        test::writeFile(hostile, "config.yaml", yaml);
    }
    r = cli({"import-run", QString::fromStdString(hostile + "/state.pt"), "--out", out});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.trimmed().startsWith(out + "/linear_regression/"), qPrintable(r.out));
    QVERIFY2(r.err.contains("cannot name a folder"), qPrintable(r.err));

    // A tree with a bad run between good ones: the good ones are imported, the exit code says
    // that one failed.
    const std::string mixed = test::scratchDir("mixed-tree");
    for (const char* pe : {"alibi", "nope", "fire"}) {
        const std::string d = mixed + "/linear_regression/dim_2-3/20250301/" + pe;
        fs::create_directories(d);
        fs::copy(referenceRun(pe), d,
                 fs::copy_options::overwrite_existing | fs::copy_options::recursive);
    }
    fs::resize_file(mixed + "/linear_regression/dim_2-3/20250301/fire/state.pt", 1000);
    const QString mixedOut = QString::fromStdString(test::scratchDir("mixed-out"));
    r = cli({"import-run", QString::fromStdString(mixed), "--out", mixedOut});
    QCOMPARE(r.code, 3);
    QCOMPARE(r.out.trimmed().split('\n').size(), 2);
    QVERIFY2(r.err.contains("2 run(s) imported, 0 already present, 1 failed"), qPrintable(r.err));

    const QString exported = QString::fromStdString(test::scratchDir("cli-export")) + "/run";
    r = cli({"export-run", runFile, "--format", "pytorch", "--out", exported});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(QFile::exists(exported + "/state.pt") && QFile::exists(exported + "/config.yaml"));
    r = cli({"export-run", runFile, "--out", exported});
    QCOMPARE(r.code, 4);  // never overwrites a state.pt
    QFile::remove(exported + "/state.pt");
    r = cli({"export-run", runFile, "--out", exported});
    QCOMPARE(r.code, 4);  // nor a config.yaml
    r = cli({"export-run", runFile, "--format", "onnx", "--out", exported + "2"});
    QCOMPARE(r.code, 64);
}

// Export: PyTorch loads every exported run strictly (model and AdamW state: load_state_dict
// with strict=True, the optimizer's own layout), predicts the fixture's prompts as LenGen did
// within 1e-5, and takes an optimizer step from it. One Python process for all of them.
void TestReferenceRuns::pytorchLoadsEveryExport()
{
    if (m_checks.empty())
        QSKIP("nothing exported: run with importsAndExportsEveryBackbone and "
              "lengenTrainedRunsRoundTrip");
    std::vector<QStringList> commands;
    for (const auto& c : m_checks)
        commands.push_back(
            {"check", QString::fromStdString(c.exported), QString::fromStdString(c.fixture)});
    const auto results = pythonBatch(commands);
    for (size_t i = 0; i < results.size(); ++i) {
        QVERIFY2(results[i].code == 0,
                 qPrintable(m_checks[i].what + ": " + results[i].out + results[i].err));
        qInfo("%s: export, %s", qPrintable(m_checks[i].what), qPrintable(results[i].out));
    }
}

QTEST_GUILESS_MAIN(TestReferenceRuns)
#include "tst_reference_runs.moc"
