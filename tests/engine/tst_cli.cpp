// The `lengen` executable as a user runs it: --help, exit codes for bad configs and bad run
// files, a short training, reading a run while another process writes it (SWMR), Ctrl-C with
// a checkpoint and exit 130, --resume, `lengen stop` from another process, and h5py reading the
// log and every checkpoint tensor.

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <csignal>
#include <filesystem>

#include "lengen/engine/jobs.h"
#include "lengen/engine/run_file.h"
#include "test_support.h"

namespace {

using Result = lengen::test::ProcessResult;

Result run(const QStringList& args, int timeoutMs = 120000)
{
    return lengen::test::runLengen(args, timeoutMs);
}

QString tinyConfigFile(const QString& dir, int steps)
{
    return QString::fromStdString(lengen::test::tinyConfigFile(dir.toStdString(), steps));
}

}  // namespace

class TestCli final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void helpAndVersion();
    void listPrintsTheTables();
    void outOfRangeValuesAreUsageErrors_data();
    void outOfRangeValuesAreUsageErrors();
    void badConfigExitsTwoWithLocation();
    void badRunFilesExitThree();
    void trainsAndReportsTheRunFile();
    void followLiveThenInterruptAndResume();
    void resumesAfterAHardCrash();
    void stopFromAnotherShellResumesBitwise();
    void analysesInProgressAreJobsOtherProcessesSee();
    void h5pyReadsLogAndCheckpoint();
    void evaluatesProbesAndReportsErrors();
    void cudaWithoutAGpuExitsTwo();
};

void TestCli::helpAndVersion()
{
    auto r = run({"--help"});
    QCOMPARE(r.code, 0);
    for (const char* word :
         {"train", "validate", "info", "eval", "probe", "import", "sweep", "Exit codes"})
        QVERIFY2(r.out.contains(word), qPrintable(r.out));
    QCOMPARE(run({"train", "--help"}).code, 0);
    QVERIFY(run({"--version"}).out.contains("lengen "));
    QCOMPARE(run({"frobnicate"}).code, 64);
    QCOMPARE(run({"eval", "--help"}).code, 0);
    QVERIFY(run({"probe", "--help"}).out.contains("--serial-position"));
    // The help names what the tables hold, not a copy of them.
    QVERIFY(run({"eval", "--help"}).out.contains("longheads"));
    QVERIFY(run({"sweep", "new", "--help"})
                .out.contains("fire, t5, kerple_log, kerple_power, sandwich, cope, xpos, yarn"));
}

// `lengen list` prints the engine's tables: every encoding a sweep takes, with the
// interventions that apply to it, and every intervention with its parameters.
void TestCli::listPrintsTheTables()
{
    auto r = run({"list", "encodings", "--json"});
    QCOMPARE(r.code, 0);
    const auto pes = QJsonDocument::fromJson(r.out.toUtf8()).array();
    QStringList names;
    for (const auto& v : pes)
        names << v.toObject().value("name").toString();
    QCOMPARE(names, QStringList({"rope", "nope", "alibi", "fire", "t5", "kerple_log",
                                 "kerple_power", "sandwich", "cope", "xpos", "yarn", "dynamic_yarn",
                                 "pi", "dynamic_ntk", "mamba", "gpt2"}));
    auto interventionsOf = [&](const QString& pe) {
        QStringList out;
        for (const auto& v : pes)
            if (v.toObject().value("name").toString() == pe)
                for (const auto& i : v.toObject().value("interventions").toArray())
                    out << i.toString();
        return out;
    };
    QVERIFY(interventionsOf("rope").contains("yarn"));
    QVERIFY(!interventionsOf("alibi").contains("yarn"));
    QVERIFY(interventionsOf("t5").contains("lambda") && !interventionsOf("t5").contains("ntk"));
    QVERIFY(!interventionsOf("dynamic_yarn").contains("pi"));
    // Refusals an encoding's row adds to its kind's: CoPE has no distances, xPos's decay would
    // be lost to LongHeads.
    QVERIFY(interventionsOf("cope").contains("window") &&
            !interventionsOf("cope").contains("lambda") &&
            !interventionsOf("cope").contains("longheads"));
    QVERIFY(interventionsOf("xpos").contains("yarn") &&
            !interventionsOf("xpos").contains("longheads"));
    QCOMPARE(interventionsOf("gpt2"), QStringList({"none", "truncate", "segments"}));
    r = run({"list", "interventions"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("original (train)") && r.out.contains("Λ-mask"), qPrintable(r.out));
    r = run({"list", "tasks", "--json"});
    QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).array().size(), 17);
    QCOMPARE(run({"list", "nothing"}).code, 64);
}

void TestCli::outOfRangeValuesAreUsageErrors_data()
{
    // Values that used to crash (SIGFPE), hang, allocate until LibTorch gave up (exit 1) or pass
    // silently: each is now exit 64 naming the option, before any file is opened.
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("option");
    const QString cfg = QString::fromStdString(lengen::test::sourcePath("configs/toy_task.yaml"));
    const QString run = "/nonexistent/run.h5";
    auto row = [](const char* name, QStringList args, const char* option) {
        QTest::newRow(name) << args << QString(option);
    };
    row("probe --lengths 0", {"probe", run, "--lengths", "0"}, "--lengths");
    row("probe --lengths -5", {"probe", run, "--lengths", "4,-5"}, "--lengths");
    row("probe --noise-counts -5", {"probe", run, "--noise-counts", "-5"}, "--noise-counts");
    row("probe --noise-counts 1e6", {"probe", run, "--noise-counts", "1000000"}, "--noise-counts");
    row("probe --test-length huge", {"probe", run, "--test-length", "100000000"}, "--test-length");
    row("probe --map-max-tokens -1", {"probe", run, "--map-max-tokens", "-1"}, "--map-max-tokens");
    row("eval --ood-factor int max", {"eval", run, "--ood-factor", "2147483647"}, "--ood-factor");
    row("eval --memory-budget nan", {"eval", run, "--memory-budget", "nan"}, "--memory-budget");
    row("eval --memory-budget inf", {"eval", run, "--memory-budget", "inf"}, "--memory-budget");
    row("eval --seed -1", {"eval", run, "--seed", "-1"}, "--seed");
    row("eval --prompts huge", {"eval", run, "--prompts", "1000000000000"}, "--prompts");
    row("train --steps int64 max", {"train", cfg, "--steps", "9223372036854775807"}, "--steps");
    row("train --threads 100000", {"train", cfg, "--threads", "100000"}, "--threads");
    row("train --seed -1", {"train", cfg, "--seed", "-1"}, "--seed");
    row("train --seed 2^64", {"train", cfg, "--seed", "18446744073709551616"}, "--seed");
    row("train --seed 1.5", {"train", cfg, "--seed", "1.5"}, "--seed");
    row("info --pointwise -3", {"info", run, "--pointwise", "-3"}, "--pointwise");
}

void TestCli::outOfRangeValuesAreUsageErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QString, option);
    auto r = run(args, 20000);
    QCOMPARE(r.code, 64);
    QVERIFY2(r.err.contains(option), qPrintable(r.err));
}

void TestCli::badConfigExitsTwoWithLocation()
{
    const auto dir = QString::fromStdString(lengen::test::scratchDir("cli-bad"));
    const auto path = lengen::test::writeFile(dir.toStdString(), "bad.yaml",
                                              "model:\n  family: Llama2\n  hidden_size: 16\n"
                                              "  num_hidden_layers: 1\n  num_attention_heads: 5\n"
                                              "task:\n  name: linear_regression\n");
    auto r = run({"validate", QString::fromStdString(path)});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("bad.yaml:5:") && r.err.contains("not divisible"), qPrintable(r.err));
    QVERIFY2(r.err.contains("curriculum"), qPrintable(r.err));  // every issue, not just one
    auto good = run({"validate", tinyConfigFile(dir, 10)});
    QCOMPARE(good.code, 0);
    QVERIFY(good.out.contains("n_in_dims: 3"));
    QCOMPARE(run({"train", QString::fromStdString(path), "--out", dir}).code, 2);
}

void TestCli::badRunFilesExitThree()
{
    const auto dir = lengen::test::scratchDir("cli-runfile");
    auto missing = run({"info", QString::fromStdString(dir + "/nothing")});
    QCOMPARE(missing.code, 3);
    QVERIFY2(missing.err.contains("run file not found"), qPrintable(missing.err));
    const auto junk = lengen::test::writeFile(dir, "junk.h5", "junk");
    auto damaged = run({"info", QString::fromStdString(junk)});
    QCOMPARE(damaged.code, 3);
    QVERIFY2(damaged.err.contains("not an HDF5 file"), qPrintable(damaged.err));
}

void TestCli::trainsAndReportsTheRunFile()
{
    const auto dir = QString::fromStdString(lengen::test::scratchDir("cli-train"));
    auto r = run({"train", tinyConfigFile(dir, 30), "--out", dir, "--seed", "3", "--threads", "1",
                  "--device", "cpu"});
    QCOMPARE(r.code, 0);
    const auto runFile = r.out.trimmed().split('\n').last();
    QVERIFY2(runFile.endsWith("/run.h5") && QFile::exists(runFile), qPrintable(r.out));
    QVERIFY2(runFile.contains("/linear_regression/dim_2-3/"), qPrintable(runFile));
    QVERIFY(r.err.contains("finished 30 steps"));
    auto info = run({"info", runFile, "--parameters"});
    QCOMPARE(info.code, 0);
    QVERIFY2(info.out.contains("finished, checkpoint after 30 of 30 steps"), qPrintable(info.out));
    QVERIFY(info.out.contains("seed 3"));
    QVERIFY(info.out.contains("transformer.layers.1.self_attn.q_proj.weight"));
    // Notes and tags (issue 41): set, printed by `info`, a bad tag is a usage error.
    QCOMPARE(run({"note", runFile, "--text", "first try\nlr ok", "--tags", "baseline, rope"}).code,
             0);
    QCOMPARE(run({"note", runFile, "--add-tag", "seed3", "--remove-tag", "rope"}).code, 0);
    const auto noted = run({"info", runFile});
    QVERIFY2(noted.out.contains(
                 "tags         baseline, seed3\nnotes        first try\n             lr ok\n"),
             qPrintable(noted.out));
    const auto badTag = run({"note", runFile, "--add-tag", QString(41, 'x')});
    QCOMPARE(badTag.code, 64);
    QVERIFY2(badTag.err.contains("longer than 40 bytes"), qPrintable(badTag.err));
    // `lengen runs` (issue 42): through the folder's index, filtered by any config key.
    const auto id =
        QString::fromStdString(lengen::engine::readRunInfo(runFile.toStdString()).runId);
    auto listed =
        run({"runs", dir, "--where", "seed=3", "--where", "model.num_hidden_layers=2", "--stats"});
    QVERIFY2(listed.code == 0 && listed.out.startsWith(id) &&
                 listed.out.contains("tags baseline,seed3") && listed.err.contains("1 of 1 runs"),
             qPrintable(listed.out + listed.err));
    QVERIFY(QFile::exists(dir + "/.lengen-index.json"));
    QVERIFY(run({"runs", dir, "--where", "model.num_hidden_layers=3"}).err.contains("0 of 1 runs"));
    QCOMPARE(run({"runs", dir, "--where", "seed"}).code, 64);
    // A column no run has is said, with the nearest key (issue 70, defect 10: an empty column).
    const auto column = run({"runs", dir, "--columns", "trainig.learning_rate"});
    QVERIFY2(column.code == 0 && column.err.contains("--columns trainig.learning_rate: no run has "
                                                     "the key trainig.learning_rate; did you mean "
                                                     "training.learning_rate?"),
             qPrintable(column.err));
    QVERIFY(
        !run({"runs", dir, "--columns", "training.learning_rate,seed"}).err.contains("--columns"));
    auto curve = run({"info", runFile, "--pointwise", "2"});
    QCOMPARE(curve.code, 0);
    // 30 steps logged every 5: rows at steps 20 and 25 are at the full 7 points.
    QVERIFY2(
        curve.out.contains("squared error by in-context examples k at 7 points, mean of the last 2 "
                           "logged steps (steps 20..25)"),
        qPrintable(curve.out));
    QVERIFY(curve.out.contains("k=0 ") && curve.out.contains("k=6 "));
}

void TestCli::followLiveThenInterruptAndResume()
{
    const auto dir = QString::fromStdString(lengen::test::scratchDir("cli-live"));
    QProcess trainer;
    trainer.start(LENGEN_CLI_PATH, {"train", tinyConfigFile(dir, 200000), "--out", dir, "--threads",
                                    "1", "--device", "cpu"});
    QVERIFY(trainer.waitForStarted());
    QString runFile;
    QString err;
    for (int i = 0; i < 600 && runFile.isEmpty(); ++i) {
        trainer.waitForReadyRead(100);
        err += QString::fromUtf8(trainer.readAllStandardError());
        auto m = QRegularExpression("run file: (\\S+)").match(err);
        if (m.hasMatch())
            runFile = m.captured(1);
    }
    QVERIFY2(!runFile.isEmpty(), qPrintable(err));
    // Read it twice while it trains: the reader never blocks or corrupts the writer.
    for (int i = 0; i < 2; ++i) {
        QTest::qWait(700);
        auto info = run({"info", runFile});
        QCOMPARE(info.code, 0);
        QVERIFY2(info.out.contains("status       running"), qPrintable(info.out + info.err));
    }
    QVERIFY(lengen::test::waitForCheckpointPast(runFile, 0) > 0);
    ::kill(static_cast<pid_t>(trainer.processId()), SIGINT);
    QVERIFY(trainer.waitForFinished(60000));
    QCOMPARE(trainer.exitCode(), 130);
    err += QString::fromUtf8(trainer.readAllStandardError());
    QVERIFY2(err.contains("--resume"), qPrintable(err));
    auto info = run({"info", runFile});
    QVERIFY2(info.out.contains("status       stopped"), qPrintable(info.out));

    // Resume with a smaller budget is not possible (steps are the run's own); so check that
    // --resume continues and can itself be interrupted, keeping the step count growing.
    const auto stepsBefore =
        QRegularExpression("checkpoint after (\\d+)").match(info.out).captured(1).toLongLong();
    QVERIFY(stepsBefore > 0);
    QProcess resumer;
    resumer.start(LENGEN_CLI_PATH,
                  {"train", "--resume", runFile, "--threads", "1", "--device", "cpu"});
    QVERIFY(resumer.waitForStarted());
    QString resumerErr;
    QVERIFY2(!lengen::test::waitForRunFile(resumer, resumerErr).isEmpty(), qPrintable(resumerErr));
    QVERIFY(lengen::test::waitForCheckpointPast(runFile, stepsBefore) > stepsBefore);
    ::kill(static_cast<pid_t>(resumer.processId()), SIGINT);
    QVERIFY(resumer.waitForFinished(60000));
    QCOMPARE(resumer.exitCode(), 130);
    auto after = run({"info", runFile});
    const auto stepsAfter =
        QRegularExpression("checkpoint after (\\d+)").match(after.out).captured(1).toLongLong();
    QVERIFY2(stepsAfter > stepsBefore, qPrintable(after.out));
}

void TestCli::resumesAfterAHardCrash()
{
    const auto dir = QString::fromStdString(lengen::test::scratchDir("cli-crash"));
    auto config =
        QString::fromStdString(lengen::test::tinyConfig("linear_regression", "rope", 200000))
            .replace("save_steps: 10", "save_steps: 50");
    const auto path = QString::fromStdString(
        lengen::test::writeFile(dir.toStdString(), "crash.yaml", config.toStdString()));
    QProcess trainer;
    trainer.start(LENGEN_CLI_PATH, {"train", path, "--out", dir, "--threads", "1"});
    QVERIFY(trainer.waitForStarted());
    QString err;
    const QString runFile = lengen::test::waitForRunFile(trainer, err);
    QVERIFY2(!runFile.isEmpty(), qPrintable(err));
    QVERIFY(lengen::test::waitForCheckpointPast(runFile, 0) > 0);  // a checkpoint to resume from
    ::kill(static_cast<pid_t>(trainer.processId()), SIGKILL);      // no chance to clean up
    QVERIFY(trainer.waitForFinished(10000));
    auto before = run({"info", runFile});
    QCOMPARE(before.code, 0);  // a crashed writer leaves a readable file
    const auto stepsBefore =
        QRegularExpression("checkpoint after (\\d+)").match(before.out).captured(1).toLongLong();
    QVERIFY2(stepsBefore > 0, qPrintable(before.out));

    QProcess resumer;
    resumer.start(LENGEN_CLI_PATH, {"train", "--resume", runFile, "--threads", "1"});
    QVERIFY(resumer.waitForStarted());
    QString resumerErr;  // it prints the run file once it holds the file's lock
    QVERIFY2(!lengen::test::waitForRunFile(resumer, resumerErr).isEmpty(), qPrintable(resumerErr));
    auto second = run({"train", "--resume", runFile});  // one writer at a time
    QCOMPARE(second.code, 3);
    QVERIFY2(second.err.contains("being written by another process"), qPrintable(second.err));
    QVERIFY(lengen::test::waitForCheckpointPast(runFile, stepsBefore) > stepsBefore);
    ::kill(static_cast<pid_t>(resumer.processId()), SIGINT);
    QVERIFY(resumer.waitForFinished(60000));
    QCOMPARE(resumer.exitCode(), 130);
    auto after = run({"info", runFile});
    const auto stepsAfter =
        QRegularExpression("checkpoint after (\\d+)").match(after.out).captured(1).toLongLong();
    QVERIFY2(stepsAfter > stepsBefore, qPrintable(after.out));
    QVERIFY(!QFile::exists(runFile + ".lock"));
}

// `lengen stop RUN` from a second process: the training writes its checkpoint and exits 130;
// resumed, its log equals an uninterrupted run of the same seed bit for bit. A second stop
// finds nothing training (exit 3).
void TestCli::stopFromAnotherShellResumesBitwise()
{
    const auto dir = QString::fromStdString(lengen::test::scratchDir("cli-stop"));
    const QString config = tinyConfigFile(dir, 3000);
    QProcess trainer;
    trainer.start(LENGEN_CLI_PATH, {"train", config, "--seed", "5", "--out", dir + "/a",
                                    "--threads", "1", "--device", "cpu"});
    QVERIFY(trainer.waitForStarted());
    QString runFile, err;
    for (int i = 0; i < 600 && runFile.isEmpty(); ++i) {
        trainer.waitForReadyRead(100);
        err += QString::fromUtf8(trainer.readAllStandardError());
        const auto m = QRegularExpression("run file: (\\S+)").match(err);
        if (m.hasMatch())
            runFile = m.captured(1);
    }
    QVERIFY2(!runFile.isEmpty(), qPrintable(err));
    QVERIFY(lengen::test::waitForCheckpointPast(runFile, 0) > 0);
    // `lengen jobs` finds it from the files, with the writer's pid.
    const auto jobs = run({"jobs", dir + "/a"});
    QVERIFY2(jobs.code == 0 && jobs.out.contains(QRegularExpression(
                                   "training +running .*:" + QString::number(trainer.processId()) +
                                   " .*run\\.h5")),
             qPrintable(jobs.out + jobs.err));
    const auto stop = run({"stop", runFile, "--wait", "60"});
    QVERIFY2(stop.code == 0 && stop.err.contains("checkpoint at step"), qPrintable(stop.err));
    QVERIFY(trainer.waitForFinished(60000));
    QCOMPARE(trainer.exitCode(), 130);
    QVERIFY2(!QFile::exists(runFile + ".stop"), "the training removes the request it answered");
    const auto stopped = lengen::engine::readRunInfo(runFile.toStdString());
    QCOMPARE(stopped.status, std::string("cancelled"));
    QVERIFY2(stopped.checkpointStep > 0 && stopped.checkpointStep < 3000,
             qPrintable(QString::number(stopped.checkpointStep)));
    QCOMPARE(run({"stop", runFile}).code, 3);  // nothing trains it now
    QVERIFY(run({"jobs", dir + "/a"}).err.contains("0 jobs under 1 folder"));

    const auto resumed =
        run({"train", "--resume", runFile, "--threads", "1", "--device", "cpu", "-q"}, 300000);
    QVERIFY2(resumed.code == 0, qPrintable(resumed.err));
    const auto plain = run({"train", config, "--seed", "5", "--out", dir + "/b", "--threads", "1",
                            "--device", "cpu", "-q"},
                           300000);
    QVERIFY2(plain.code == 0, qPrintable(plain.err));
    const auto a = lengen::engine::readTrainLog(runFile.toStdString());
    const auto b = lengen::engine::readTrainLog(plain.out.trimmed().toStdString());
    QCOMPARE(a.step, b.step);
    QCOMPARE(a.loss, b.loss);
}

// Issue 53: an evaluation or probes hold a marker beside the run for as long as they run, so
// `lengen jobs` in another process lists them with their holder; it goes with them.
void TestCli::analysesInProgressAreJobsOtherProcessesSee()
{
    const auto dir = lengen::test::scratchDir("cli-analysis-jobs");
    const auto runFile = lengen::test::trainTiny(dir, "rope");
    {
        const lengen::engine::AnalysisJobMarker marker(runFile, lengen::engine::JobKindId::Probe);
        const auto jobs = run({"jobs", QString::fromStdString(dir), "--json"});
        QCOMPARE(jobs.code, 0);
        const auto rows = QJsonDocument::fromJson(jobs.out.toUtf8()).array();
        QCOMPARE(rows.size(), 1);
        const auto row = rows.first().toObject();
        QCOMPARE(row["kind"].toString(), QString("probes"));
        QCOMPARE(row["holder"].toString(), QString::fromStdString(lengen::engine::thisHolder()));
        QCOMPARE(QFileInfo(row["subject"].toString()), QFileInfo(QString::fromStdString(runFile)));
    }
    QVERIFY(run({"jobs", QString::fromStdString(dir)}).err.contains("0 jobs under 1 folder"));
}

void TestCli::h5pyReadsLogAndCheckpoint()
{
    const QString python = lengen::test::pythonPath();
    QProcess probe;
    probe.start(python, {"-c", "import h5py"});
    if (!probe.waitForFinished(30000) || probe.exitCode() != 0)
        QSKIP("h5py is not installed (apt-get install python3-h5py)");
    const auto dir = QString::fromStdString(lengen::test::scratchDir("cli-h5py"));
    auto r = run({"train", tinyConfigFile(dir, 20), "--out", dir, "--seed", "1", "-q", "--threads",
                  "1", "--device", "cpu"});
    QCOMPARE(r.code, 0);
    const auto runFile = r.out.trimmed();
    const QString script = R"(
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], 'r')
assert f.attrs['format'] == b'lengen-run'  # fixed-length strings read as bytes (run-format.md)
log = f['log']
assert log['loss'].shape == (4,) and log['pointwise'].shape == (4, 7), log['pointwise'].shape
assert np.isfinite(log['loss'][:]).all()
slot = f['checkpoint/slot%d' % f['checkpoint/current'][()]]
assert slot['step'][()] == 20
names = []
slot['model'].visit(names.append)
for n in names:
    a = slot['model'][n][()]; b = slot['optimizer/exp_avg'][n][()]
    assert np.isfinite(a).all() and a.shape == b.shape
assert 'transformer.layers.0.self_attn.q_proj.weight' in names and len(names) == 21, len(names)
print('ok', len(names))
)";
    QProcess py;
    py.start(python, {"-c", script, runFile});
    QVERIFY(py.waitForFinished(60000));
    QVERIFY2(py.exitCode() == 0, qPrintable(QString::fromUtf8(py.readAllStandardError())));
    QVERIFY(QString::fromUtf8(py.readAllStandardOutput()).contains("ok 21"));
}

void TestCli::cudaWithoutAGpuExitsTwo()
{
    // --version names the LibTorch and whether a GPU is usable; on a machine without one,
    // --device cuda is a config error (exit 2) that names the flag and the fallback.
    const auto version = run({"--version"});
    QCOMPARE(version.code, 0);
    QVERIFY2(version.out.contains("LibTorch "), qPrintable(version.out));
    if (!version.out.contains("CPU only") && !version.out.contains("no GPU usable"))
        QSKIP("a CUDA GPU is usable here: --device cuda is valid");
    const auto dir = QString::fromStdString(lengen::test::scratchDir("cli-cuda"));
    auto r = run({"train", tinyConfigFile(dir, 5), "--out", dir, "--device", "cuda"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--device cuda") && r.err.contains("--device cpu"), qPrintable(r.err));
    QVERIFY2(!r.err.contains("internal"), qPrintable(r.err));
    auto trained = run({"train", tinyConfigFile(dir, 5), "--out", dir, "--device", "cpu", "-q"});
    QCOMPARE(trained.code, 0);
    const auto runFile = trained.out.trimmed().split('\n').last();
    auto ev = run({"eval", runFile, "--device", "cuda", "--prompts", "8"});
    QCOMPARE(ev.code, 2);
    QVERIFY2(ev.err.contains("--device cuda"), qPrintable(ev.err));
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"

void TestCli::evaluatesProbesAndReportsErrors()
{
    const auto dir = QString::fromStdString(lengen::test::scratchDir("cli-eval"));
    auto trained = run({"train", tinyConfigFile(dir, 10), "--out", dir, "--quiet", "--seed", "3"});
    QCOMPARE(trained.code, 0);
    const auto runFile = trained.out.trimmed().split('\n').last();
    auto ev = run({"eval", runFile, "--methods", "standard,ood_length", "--prompts", "16",
                   "--ood-factor", "2", "--bootstrap", "20", "-q"});
    QCOMPARE(ev.code, 0);
    QVERIFY2(ev.out.trimmed().endsWith("analysis.h5"), qPrintable(ev.out));
    auto again = run({"eval", runFile, "--methods", "standard,ood_length", "--prompts", "16",
                      "--ood-factor", "2", "--bootstrap", "20", "-q"});
    QVERIFY2(again.err.contains("already stored"), qPrintable(again.err));
    auto shown = run({"eval", runFile, "--show"});
    QCOMPARE(shown.code, 0);
    QVERIFY2(shown.out.contains("ood_length") && shown.out.contains("Least Squares"),
             qPrintable(shown.out));
    QCOMPARE(run({"eval", runFile, "--methods", "sideways"}).code, 2);
    QCOMPARE(run({"eval", runFile, "--methods", "scale-x=two"}).code, 2);
    QCOMPARE(run({"eval", dir + "/nothing-here"}).code, 3);
    auto probe = run({"probe", runFile, "--duplicated", "--serial-position", "--instruction", "4",
                      "--test-length", "24", "--prompts", "8", "--noise-counts", "2,3", "-q"});
    QCOMPARE(probe.code, 0);
    auto probes = run({"probe", runFile, "--show"});
    QVERIFY2(probes.out.contains("serial_position") && probes.out.contains("target block"),
             qPrintable(probes.out));
    QCOMPARE(run({"probe", runFile}).code, 64);  // no probe chosen
    QCOMPARE(run({"probe", runFile, "--serial-position", "--instruction", "9"}).code, 2);  // > N
    // `export` exists in builds with the Qt libraries (`export-run` in all of them).
    const QRegularExpression exportCommand("^\\s+export\\s", QRegularExpression::MultilineOption);
    if (run({"--help"}).out.contains(exportCommand)) {
        const auto base = dir + "/fig";
        auto ex = run({"export", runFile, "--figure", "ood_length", "--format", "png,svg,pdf,csv",
                       "--out", base + ".png"});
        QCOMPARE(ex.code, 0);
        for (const char* ext : {".png", ".svg", ".pdf", ".csv"})
            QVERIFY2(std::filesystem::exists((base + ext).toStdString()), ext);
        QFile csv(base + ".csv");
        QVERIFY(csv.open(QIODevice::ReadOnly));
        QVERIFY(csv.readLine().startsWith("series,x,y,band_low,band_high"));
        // pgfplots (issue 42): the .tex, a data file per curve, the document's preamble.
        ex = run({"export", runFile, "--figure", "ood_length", "--format", "tex", "--standalone",
                  "--out", base + ".tex"});
        QCOMPARE(ex.code, 0);
        QFile tex(base + ".tex");
        QVERIFY(tex.open(QIODevice::ReadOnly));
        const QString texText = QString::fromUtf8(tex.readAll());
        QVERIFY2(texText.contains("\\documentclass{article}") && texText.contains("\\addplot"),
                 qPrintable(texText.left(400)));
        QVERIFY(std::filesystem::exists((base + "-0.dat").toStdString()));
        // Provenance (issue 42): beside the figure, what made it; --from rebuilds the same data
        // byte for byte; a moved run is named, a changed one refused, a foreign file is usage.
        const QString prov = base + ".provenance.json";
        QFile provFile(prov);
        QVERIFY(provFile.open(QIODevice::ReadOnly));
        const auto provJson = QJsonDocument::fromJson(provFile.readAll()).object();
        provFile.close();
        const auto info = lengen::engine::readRunInfo(runFile.toStdString());
        QCOMPARE(provJson["runs"].toArray().first().toObject()["run_id"].toString(),
                 QString::fromStdString(info.runId));
        QVERIFY(provJson["runs"].toArray().first().toObject()["config_hash"].toString().startsWith(
            "fnv1a64:"));
        QCOMPARE(provJson["evaluations"].toArray().first().toObject()["method"].toString(),
                 QString("ood_length"));
        auto rebuilt =
            run({"export", "--from", prov, "--format", "csv", "--out", dir + "/rebuilt.csv"});
        QVERIFY2(rebuilt.code == 0, qPrintable(rebuilt.err));
        QFile a(base + ".csv"), b(dir + "/rebuilt.csv");
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        QCOMPARE(b.readAll(), a.readAll());
        // Issue 52: the provenance records the file's format; --out without an extension takes
        // it (PNG bytes went into an extensionless file), and a standalone TeX stays standalone.
        QCOMPARE(provJson["view"].toObject()["format"].toString(), QString("tex"));
        QVERIFY(provJson["view"].toObject()["standalone"].toBool());
        const auto noExtension = run({"export", "--from", prov, "--out", dir + "/again"});
        QVERIFY2(noExtension.code == 0 && !std::filesystem::exists((dir + "/again").toStdString()),
                 qPrintable(noExtension.err));
        QFile againTex(dir + "/again.tex");
        QVERIFY(againTex.open(QIODevice::ReadOnly));
        QVERIFY2(againTex.readAll().contains("\\documentclass{article}"),
                 "the rebuilt TeX is standalone");
        QJsonObject tampered = provJson;
        auto runs = tampered["runs"].toArray();
        auto first = runs.first().toObject();
        first["config_hash"] = "fnv1a64:0000000000000000";
        runs[0] = first;
        tampered["runs"] = runs;
        const auto changedProv =
            lengen::test::writeFile(dir.toStdString(), "changed.provenance.json",
                                    QJsonDocument(tampered).toJson().toStdString());
        const auto changed = run({"export", "--from", QString::fromStdString(changedProv)});
        QCOMPARE(changed.code, 3);
        QVERIFY2(changed.err.contains("changed since the figure was made"),
                 qPrintable(changed.err));
        first["path"] = dir + "/gone/run.h5";
        runs[0] = first;
        tampered["runs"] = runs;
        const auto movedProv =
            lengen::test::writeFile(dir.toStdString(), "moved.provenance.json",
                                    QJsonDocument(tampered).toJson().toStdString());
        const auto moved = run({"export", "--from", QString::fromStdString(movedProv)});
        QCOMPARE(moved.code, 3);
        QVERIFY2(moved.err.contains("is no longer at") &&
                     moved.err.contains(QString::fromStdString(info.runId)),
                 qPrintable(moved.err));
        QCOMPARE(run({"export", "--from", base + ".csv"}).code, 64);
        // Issue 54: a number in view.figure is named as such (it was blamed on 'runs').
        QJsonObject numbered = provJson;
        auto numberedView = numbered["view"].toObject();
        numberedView["figure"] = 3;
        numbered["view"] = numberedView;
        const auto numberedProv =
            lengen::test::writeFile(dir.toStdString(), "numbered.provenance.json",
                                    QJsonDocument(numbered).toJson().toStdString());
        const auto refused = run({"export", "--from", QString::fromStdString(numberedProv)});
        QVERIFY2(refused.code == 64 && refused.err.contains("key 'view.figure'") &&
                     !refused.err.contains("'runs'"),
                 qPrintable(refused.err));
        // Review: the run evaluated again (another seed) no longer draws the recorded results.
        QCOMPARE(run({"eval", runFile, "--methods", "ood_length", "--prompts", "16", "--seed", "9",
                      "--force", "--threads", "1", "--device", "cpu", "-q"})
                     .code,
                 0);
        const auto reevaluated = run({"export", "--from", prov});
        QCOMPARE(reevaluated.code, 3);
        QVERIFY2(reevaluated.err.contains("evaluations") && reevaluated.err.contains("changed"),
                 qPrintable(reevaluated.err));
        QVERIFY(run({"export", runFile, "--list"}).out.contains("lost_in_mid"));
        QCOMPARE(run({"export", runFile, "--figure", "sideways"}).code, 64);
        QCOMPARE(
            run({"export", runFile, "--figure", "ood_length", "--out", "/proc/lengen/x.png"}).code,
            4);
    }
    const auto json = lengen::test::writeFile(dir.toStdString(), "metrics.json", "{ broken");
    QCOMPARE(run({"import", QString::fromStdString(json), runFile}).code, 2);
}
