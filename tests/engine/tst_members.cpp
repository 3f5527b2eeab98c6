// Seeds trained as one batched model (issue 58; trainer.h trainMembers, model/member_model.h):
// each member matches its solo run (the module path, the same seed) within float rounding over
// 300 steps; a member stopped mid-run leaves with its checkpoint while the others finish, and
// still match their solo runs; its run file is an ordinary run that `resume` continues alone;
// a position encoding with weights of its own is refused before anything is written. Issue 71:
// a sweep's group stopped together resumes together, bit for bit as if it had not stopped; a
// member stopped at another step resumes alone, and `sweep status` says so.

#include <QDirIterator>
#include <QProcess>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>

#include "io/run_store.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_run.h"
#include "lengen/engine/trainer.h"
#include "test_support.h"
#include "train/memory_estimate.h"

using namespace lengen;

namespace {

constexpr int kSteps = 300;

engine::MemberRun member(std::uint64_t seed, const std::string& runDir)
{
    engine::MemberRun m;
    m.seed = seed;
    m.runDir = runDir;
    return m;
}

engine::TrainOptions cpuOptions(const std::string& dir)
{
    engine::TrainOptions o;
    o.outDir = dir;
    o.device = "cpu";
    o.threads = 1;
    o.switches.fused = false;  // the solo runs take the module path, whose math members batch
    return o;
}

std::string solo(const std::string& dir, const std::string& pe, std::uint64_t seed)
{
    auto o = cpuOptions(dir);
    o.seed = seed;
    engine::RunControl control;
    engine::TrainObserver quiet;
    return engine::train(test::loadOne(test::tinyConfig("linear_regression", pe, kSteps)), o,
                         control, quiet)
        .runFile;
}

// Largest relative difference of the logged losses (same rows), and of the final weights.
double lossDifference(const std::string& a, const std::string& b)
{
    const auto la = engine::readTrainLog(a), lb = engine::readTrainLog(b);
    if (la.step != lb.step)
        return INFINITY;
    double worst = 0;
    for (size_t i = 0; i < la.loss.size(); ++i)
        worst = std::max(worst, std::abs(la.loss[i] - lb.loss[i]) / std::abs(lb.loss[i]));
    return worst;
}

double weightDifference(const std::string& a, const std::string& b)
{
    const auto ca = engine::io::readCheckpoint(a), cb = engine::io::readCheckpoint(b);
    if (ca.stepsDone != cb.stepsDone || ca.model.size() != cb.model.size())
        return INFINITY;
    double worst = 0;
    for (size_t i = 0; i < ca.model.size(); ++i) {
        const auto& x = ca.model[i].value;
        const auto& y = cb.model[i].value;
        worst = std::max(worst, ((x - y).abs().max() / y.abs().max()).item<double>());
    }
    return worst;
}

// Stops its member once it has logged `at` steps.
class StopAt final : public engine::TrainObserver {
public:
    StopAt(engine::RunControl& control, std::int64_t at) : m_control(control), m_at(at) {}
    void onStep(const engine::StepProgress& p) override
    {
        if (p.step + 1 == m_at)
            m_control.requestCancel();
    }

private:
    engine::RunControl& m_control;
    std::int64_t m_at;
};

}  // namespace

class TestMembers final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void membersMatchTheirSoloRuns_data();
    void membersMatchTheirSoloRuns();
    void oneMemberStopsTheOthersFinish();
    void stoppedMembersResumeBitwise();
    void encodingsWithWeightsAreRefused();
    void commandLineTrainsMembers();
    void sweepRunsFreshCellsAsMembers();
    void stopFromAnotherShellStopsOneMember();
    void sweepCancelOfOneMemberStopsItAlone();
    void aStoppedSweepGroupResumesTogetherBitwise();
    void membersStoppedAtOtherStepsResumeApart();
    void graphedMembersEqualEagerMembers();
    void aBatchDrawnAheadChangesNoMember();
};

void TestMembers::membersMatchTheirSoloRuns_data()
{
    QTest::addColumn<QString>("pe");
    QTest::newRow("rope") << "rope";
    QTest::newRow("alibi") << "alibi";
    QTest::newRow("xpos") << "xpos";          // the keys' own tables
    QTest::newRow("sandwich") << "sandwich";  // a bias from sinusoids
    QTest::newRow("dynamic") << "dynamic";    // dynamic NTK: tables that follow the length
}

void TestMembers::membersMatchTheirSoloRuns()
{
    QFETCH(QString, pe);
    const auto dir = test::scratchDir("members-" + pe.toStdString());
    const std::vector<std::uint64_t> seeds{11, 12, 13};
    std::vector<engine::MemberRun> members;
    for (auto seed : seeds)
        members.push_back(member(seed, dir + "/m" + std::to_string(seed)));
    engine::RunControl all;
    const auto out = engine::trainMembers(
        test::loadOne(test::tinyConfig("linear_regression", pe.toStdString(), kSteps)), members,
        cpuOptions(dir), all);
    QCOMPARE(out.size(), seeds.size());
    for (size_t k = 0; k < seeds.size(); ++k) {
        QVERIFY2(out[k].error.empty(), out[k].error.c_str());
        QCOMPARE(out[k].summary.stepsDone, std::int64_t(kSteps));
        QVERIFY(out[k].summary.outcome == engine::RunOutcome::Finished);
        const auto info = engine::readRunInfo(out[k].summary.runFile);
        QCOMPARE(info.status, std::string("finished"));
        QCOMPARE(info.seed, seeds[k]);
        const auto alone = solo(dir + "/solo", pe.toStdString(), seeds[k]);
        const double loss = lossDifference(out[k].summary.runFile, alone);
        const double weights = weightDifference(out[k].summary.runFile, alone);
        qInfo("%s seed %llu: losses within %.2g, weights within %.2g", qPrintable(pe),
              static_cast<unsigned long long>(seeds[k]), loss, weights);
        QVERIFY2(loss < 1e-4, qPrintable(QString::number(loss)));
        QVERIFY2(weights < 1e-4, qPrintable(QString::number(weights)));
    }
    // Members are not one run repeated: different seeds, different curves.
    QVERIFY(lossDifference(out[0].summary.runFile, out[1].summary.runFile) > 1e-3);
}

void TestMembers::oneMemberStopsTheOthersFinish()
{
    const auto dir = test::scratchDir("members-stop");
    engine::RunControl middle;
    StopAt stopper(middle, 120);
    std::vector<engine::MemberRun> members{member(21, dir + "/a"), member(22, dir + "/b"),
                                           member(23, dir + "/c")};
    members[1].control = &middle;
    members[1].observer = &stopper;
    engine::RunControl all;
    const auto config = test::loadOne(test::tinyConfig("linear_regression", "rope", kSteps));
    const auto out = engine::trainMembers(config, members, cpuOptions(dir), all);
    QVERIFY(out[1].summary.outcome == engine::RunOutcome::Cancelled);
    QCOMPARE(out[1].summary.stepsDone, std::int64_t(120));
    const auto stopped = engine::readRunInfo(out[1].summary.runFile);
    QCOMPARE(stopped.checkpointStep, std::int64_t(120));
    QCOMPARE(stopped.status, std::string("cancelled"));
    // The others trained on without it, as they would have alone.
    for (size_t k : {size_t(0), size_t(2)}) {
        QVERIFY(out[k].summary.outcome == engine::RunOutcome::Finished);
        QCOMPARE(out[k].summary.stepsDone, std::int64_t(kSteps));
        const auto alone = solo(dir + "/solo", "rope", members[k].seed);
        QVERIFY(lossDifference(out[k].summary.runFile, alone) < 1e-4);
        QVERIFY(weightDifference(out[k].summary.runFile, alone) < 1e-4);
    }
    // The stopped member's file is an ordinary run: resumed alone it finishes near its solo run.
    engine::RunControl control;
    engine::TrainObserver quiet;
    const auto resumed = engine::resume(out[1].summary.runFile, cpuOptions(dir), control, quiet);
    QCOMPARE(resumed.stepsDone, std::int64_t(kSteps));
    const auto alone = solo(dir + "/solo", "rope", 22);
    QVERIFY(lossDifference(out[1].summary.runFile, alone) < 1e-4);
}

void TestMembers::stoppedMembersResumeBitwise()
{
    const auto dir = test::scratchDir("members-resume");
    const auto config = test::loadOne(test::tinyConfig("linear_regression", "rope", kSteps));
    engine::RunControl all;
    const auto whole = engine::trainMembers(
        config, {member(31, dir + "/w31"), member(32, dir + "/w32")}, cpuOptions(dir), all);
    // The same members stopped together (Ctrl-C) after 137 steps, then continued together.
    engine::RunControl stopping;
    StopAt stopper(stopping, 137);
    std::vector<engine::MemberRun> members{member(31, dir + "/s31"), member(32, dir + "/s32")};
    members[0].observer = &stopper;
    const auto stopped = engine::trainMembers(config, members, cpuOptions(dir), stopping);
    std::vector<std::string> files;
    for (const auto& s : stopped) {
        QVERIFY(s.summary.outcome == engine::RunOutcome::Cancelled);
        QCOMPARE(s.summary.stepsDone, std::int64_t(137));
        files.push_back(s.summary.runFile);
    }
    // Runs that cannot be members are refused, and the files stay as they were.
    const auto other = test::trainTiny(dir + "/other", "alibi", 5, 20);
    engine::RunControl again;
    try {
        engine::resumeMembers({files[0], other}, cpuOptions(dir), again);
        QFAIL("another config");
    } catch (const engine::Error& e) {
        QCOMPARE(e.kind(), engine::ErrorKind::Usage);
        QVERIFY2(std::string(e.what()).find("another config") != std::string::npos, e.what());
    }
    QCOMPARE(engine::readRunInfo(files[0]).status, std::string("cancelled"));
    const auto resumed = engine::resumeMembers(files, cpuOptions(dir), again);
    for (size_t k = 0; k < files.size(); ++k) {
        QVERIFY2(resumed[k].error.empty(), resumed[k].error.c_str());
        QCOMPARE(resumed[k].summary.stepsDone, std::int64_t(kSteps));
        const auto a = engine::readTrainLog(files[k]);
        const auto b = engine::readTrainLog(whole[k].summary.runFile);
        QCOMPARE(a.step, b.step);
        QVERIFY(a.loss == b.loss);  // bit for bit
        QVERIFY(a.gradNorm == b.gradNorm);
        QCOMPARE(weightDifference(files[k], whole[k].summary.runFile), 0.0);
    }
}

void TestMembers::encodingsWithWeightsAreRefused()
{
    const auto dir = test::scratchDir("members-fire");
    engine::RunControl all;
    try {
        engine::trainMembers(test::loadOne(test::tinyConfig("linear_regression", "fire", 10)),
                             {member(1, dir + "/a"), member(2, dir + "/b")}, cpuOptions(dir), all);
        QFAIL("FIRE has an MLP in every layer");
    } catch (const engine::Error& e) {
        QCOMPARE(e.kind(), engine::ErrorKind::Config);
        QVERIFY2(std::string(e.what()).find("FIRE") != std::string::npos, e.what());
    }
    QVERIFY(!std::filesystem::exists(dir + "/a"));  // nothing written
}

void TestMembers::commandLineTrainsMembers()
{
    const auto dir = QString::fromStdString(test::scratchDir("members-cli"));
    const auto config = QString::fromStdString(test::tinyConfigFile(dir.toStdString(), 20));
    auto r = test::runLengen(
        {"train", config, "--members", "2", "--seed", "40", "--out", dir, "--device", "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const auto files = r.out.trimmed().split('\n');
    QCOMPARE(files.size(), 2);  // one run file each, on stdout
    QCOMPARE(engine::readRunInfo(files[0].toStdString()).seed, std::uint64_t(40));
    QCOMPARE(engine::readRunInfo(files[1].toStdString()).seed, std::uint64_t(41));
    QVERIFY2(r.err.contains("member 1 (seed 41) finished 20 steps"), qPrintable(r.err));
    QVERIFY2(r.err.contains("separate runs are faster"), qPrintable(r.err));  // the CPU's note

    r = test::runLengen({"train", "--resume", files[0], "--members", "2"});
    QCOMPARE(r.code, 64);
    r = test::runLengen({"train", "--resume", files[0], files[1]});  // members, together
    QCOMPARE(r.code, 64);
    QVERIFY2(r.err.contains("has finished its 20 steps"), qPrintable(r.err));
    const auto fire = test::writeFile(dir.toStdString(), "fire.yaml",
                                      test::tinyConfig("linear_regression", "fire"));
    r = test::runLengen({"train", QString::fromStdString(fire), "--members", "2", "--out", dir});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("members: FIRE"), qPrintable(r.err));
}

void TestMembers::sweepRunsFreshCellsAsMembers()
{
    // Two encodings x 3 seeds; one cell trained already (by run-cell) is not taken again.
    const auto dir = test::scratchDir("members-sweep");
    const std::string S = dir + "/S";
    engine::createSweep(test::tinySweep(S, {"rope", "fire"}, 3, 20));
    const engine::SweepPaths paths{S};
    const auto index = engine::readSweepIndex(S);
    QCOMPARE(int(index.cells.size()), 6);
    auto r = test::runLengen({"sweep", "run-cell", QString::fromStdString(S), "0", "-q"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    r = test::runLengen(
        {"sweep", "run", QString::fromStdString(S), "--members", "3", "--jobs", "1"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    // rope-s2 and rope-s3 are the one group; FIRE's cells run alone (an MLP in every layer).
    QVERIFY2(r.err.contains("[1/4] " + QString::fromStdString(index.cells[1].name) + ", " +
                            QString::fromStdString(index.cells[2].name) +
                            " started as members of one batched model"),
             qPrintable(r.err));
    QVERIFY2(r.err.contains("5 to run (4 processes"), qPrintable(r.err));
    for (const auto& cell : index.cells) {
        QCOMPARE(engine::readCellState(paths, cell.name)->stage, std::string("done"));
        const auto info = engine::readRunInfo(paths.runFile(cell.name));
        QCOMPARE(info.sweepCell, cell.name);  // each member's run is its cell's
        QCOMPARE(info.seed, *cell.config.seed);
        QCOMPARE(info.status, std::string("finished"));
    }
    // The second member's log points at the first's.
    QFile log(QString::fromStdString(paths.logFile(index.cells[2].name)));
    QVERIFY(log.open(QIODevice::ReadOnly));
    QVERIFY(log.readAll().contains("trained as a member with " + index.cells[1].name));
}

// `lengen stop RUN` from another process while `train --members 3` trains: that member writes
// its checkpoint and leaves; the others train on until Ctrl-C stops them all (exit 130).
void TestMembers::stopFromAnotherShellStopsOneMember()
{
    const auto dir = QString::fromStdString(test::scratchDir("members-stop-cli"));
    const auto config = QString::fromStdString(test::tinyConfigFile(dir.toStdString(), 200000));
    QProcess trainer;
    trainer.start(LENGEN_CLI_PATH, {"train", config, "--members", "3", "--seed", "7", "--out",
                                    dir + "/runs", "--device", "cpu", "--threads", "1", "-q"});
    QVERIFY(trainer.waitForStarted());
    std::vector<QString> files;
    QVERIFY(QTest::qWaitFor(
        [&] {
            files.clear();
            QDirIterator it(dir + "/runs", {"run.h5"}, QDir::Files, QDirIterator::Subdirectories);
            while (it.hasNext())
                files.push_back(it.next());
            return files.size() == 3;
        },
        60000));
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
        QVERIFY(test::waitForCheckpointPast(f, 0) > 0);
    auto r = test::runLengen({"stop", files[1], "--wait", "60"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const auto stopped = engine::readRunInfo(files[1].toStdString());
    QCOMPARE(stopped.status, std::string("cancelled"));
    // The others go on past the stopped one's checkpoint.
    for (size_t k : {size_t(0), size_t(2)})
        QVERIFY(test::waitForCheckpointPast(files[k], stopped.checkpointStep + 20) >
                stopped.checkpointStep + 20);
    QCOMPARE(engine::readRunInfo(files[1].toStdString()).checkpointStep, stopped.checkpointStep);
    ::kill(static_cast<pid_t>(trainer.processId()), SIGINT);
    QVERIFY(trainer.waitForFinished(60000));
    QCOMPARE(trainer.exitCode(), 130);
    const auto err = QString::fromUtf8(trainer.readAllStandardError());
    QVERIFY2(err.contains("continue them together with: lengen train --resume"), qPrintable(err));
    for (size_t k : {size_t(0), size_t(2)})
        QCOMPARE(engine::readRunInfo(files[k].toStdString()).status, std::string("cancelled"));
}

// `sweep cancel --cells C` while C trains as a member: C alone stops with its checkpoint (a
// SIGTERM to the shared process would have stopped all three); the others train on.
void TestMembers::sweepCancelOfOneMemberStopsItAlone()
{
    const auto dir = test::scratchDir("members-sweep-cancel");
    const std::string S = dir + "/S";
    engine::createSweep(test::tinySweep(S, {"rope"}, 3, 200000));
    const engine::SweepPaths paths{S};
    const auto index = engine::readSweepIndex(S);
    QProcess sweep;
    sweep.start(LENGEN_CLI_PATH, {"sweep", "run", QString::fromStdString(S), "--members", "3",
                                  "--jobs", "1", "--device", "cpu"});
    QVERIFY(sweep.waitForStarted());
    std::vector<QString> runs;
    for (const auto& cell : index.cells)
        runs.push_back(QString::fromStdString(paths.runFile(cell.name)));
    for (const auto& run : runs) {
        QVERIFY(QTest::qWaitFor([&] { return QFile::exists(run); }, 60000));
        QVERIFY(test::waitForCheckpointPast(run, 0) > 0);
    }
    const QString middle = QString::fromStdString(index.cells[1].name);
    auto r = test::runLengen(
        {"sweep", "cancel", QString::fromStdString(S), "--cells", middle, "--wait", "60"});
    QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
    const auto stopped = engine::readRunInfo(runs[1].toStdString());
    QCOMPARE(stopped.status, std::string("cancelled"));
    for (size_t k : {size_t(0), size_t(2)})
        QVERIFY(test::waitForCheckpointPast(runs[k], stopped.checkpointStep + 20) >
                stopped.checkpointStep + 20);
    ::kill(static_cast<pid_t>(sweep.processId()), SIGINT);
    QVERIFY(sweep.waitForFinished(60000));
    QCOMPARE(sweep.exitCode(), 130);
    const auto err = QString::fromUtf8(sweep.readAllStandardError());
    QVERIFY2(err.contains(middle + " cancelled (checkpoint written)"), qPrintable(err));
    QCOMPARE(engine::readCellState(paths, index.cells[0].name)->stage, std::string("stopped"));
}

namespace {

// The cells of a one-encoding sweep of 3 seeds, trained as one group that every member leaves
// at step `at` (the sweep's stop: Ctrl-C or `sweep cancel`), on one thread.
std::vector<std::string> stopSweepGroup(const std::string& S, std::int64_t at)
{
    engine::createSweep(test::tinySweep(S, {"rope"}, 3, kSteps));
    engine::CellRunOptions options;
    options.threads = 1;
    options.device = "cpu";
    engine::RunControl all;
    StopAt stopper(all, at);
    engine::AnalysisObserver quiet;
    const auto out = engine::runSweepMembers(S, {0, 1, 2}, options, all, stopper, quiet);
    std::vector<std::string> files;
    const engine::SweepPaths paths{S};
    for (size_t k = 0; k < out.size(); ++k) {
        const auto file = paths.runFile(engine::readSweepIndex(S).cells[k].name);
        if (out[k] == engine::CellOutcome::Stopped &&
            engine::readRunInfo(file).checkpointStep == at)
            files.push_back(file);
    }
    return files;  // all three when each stopped at `at`
}

test::ProcessResult runSweep(const std::string& S)
{
    return test::runLengen({"sweep", "run", QString::fromStdString(S), "--members", "3", "--jobs",
                            "1", "--threads-per-job", "1", "--device", "cpu"});
}

}  // namespace

// Issue 71: after the sweep stopped its group (every member at one checkpoint), `sweep run
// --members` resumed each cell in a process of its own, and the cells no longer equalled the
// uninterrupted group. Now the group resumes together: every cell's log and weights equal those
// of the same sweep run without a stop, bit for bit.
void TestMembers::aStoppedSweepGroupResumesTogetherBitwise()
{
    const auto dir = test::scratchDir("members-sweep-resume");
    const auto files = stopSweepGroup(dir + "/S", 137);
    QCOMPARE(files.size(), size_t(3));
    auto r = runSweep(dir + "/S");
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("[1/1]") && r.err.contains("started as members"), qPrintable(r.err));
    engine::createSweep(test::tinySweep(dir + "/W", {"rope"}, 3, kSteps));
    r = runSweep(dir + "/W");
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const engine::SweepPaths whole{dir + "/W"};
    const auto cells = engine::readSweepIndex(dir + "/W").cells;
    for (size_t k = 0; k < cells.size(); ++k) {
        const auto uninterrupted = whole.runFile(cells[k].name);
        const auto a = engine::readTrainLog(files[k]), b = engine::readTrainLog(uninterrupted);
        QCOMPARE(a.step, b.step);
        QVERIFY2(a.loss == b.loss, qPrintable(QString("cell %1").arg(k)));  // bit for bit
        QCOMPARE(weightDifference(files[k], uninterrupted), 0.0);
        QCOMPARE(engine::readRunInfo(files[k]).status, std::string("finished"));
    }
}

// A member stopped at another step than the rest of its group (a SIGKILL while the group wrote
// its checkpoints left 160, 160, 140; here the third trained on alone: 120, 120, 150): `sweep
// status` says the two resume together and the third alone, and why; `sweep run --members`
// does that and finishes all three.
void TestMembers::membersStoppedAtOtherStepsResumeApart()
{
    const auto dir = test::scratchDir("members-sweep-apart");
    const std::string S = dir + "/S";
    const auto files = stopSweepGroup(S, 120);
    QCOMPARE(files.size(), size_t(3));
    engine::RunControl control;
    StopAt stopper(control, 150);
    auto o = cpuOptions(dir);
    o.switches.fused = true;  // as a cell alone trains
    QVERIFY(engine::resume(files[2], o, control, stopper).outcome == engine::RunOutcome::Cancelled);
    QCOMPARE(engine::readRunInfo(files[2]).checkpointStep, std::int64_t(150));
    const auto cells = engine::readSweepIndex(S).cells;
    const QString together = QString::fromStdString(cells[0].name + ", " + cells[1].name);
    QString said;
    auto saysThePlan = [&] {
        const auto r = test::runLengen({"sweep", "status", QString::fromStdString(S)});
        said = r.err;
        QCOMPARE(r.code, 8);  // unfinished
        QVERIFY2(
            r.err.contains("sweep run --members resumes " + together + " together from step 120"),
            qPrintable(r.err));
        QVERIFY2(r.err.contains(QString::fromStdString(
                     "sweep run --members resumes " + cells[2].name +
                     " alone from step 150 (the other stopped cells of its config stopped at step "
                     "120; members take every step together)")),
                 qPrintable(r.err));
    };
    saysThePlan();
    if (QTest::currentTestFailed())
        return;
    // Issue 81, item 9: cells `sweep cancel` stopped read "cancelled", and the plan was not said.
    auto r = test::runLengen({"sweep", "cancel", QString::fromStdString(S)});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    saysThePlan();
    QVERIFY2(said.contains("3 cancelled"), qPrintable(said));
    r = runSweep(S);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains(together + " started as members"), qPrintable(r.err));
    QVERIFY2(r.err.contains("3 to run (2 processes"), qPrintable(r.err));
    for (const auto& f : files)
        QCOMPARE(engine::readRunInfo(f).status, std::string("finished"));
}

// On a GPU the members' step is one CUDA graph (member_loop.cpp, graph_step.h). Same kernels,
// same order: graphed members log the losses of eager members bit for bit, across curriculum
// shape changes (new captures) and a member leaving mid-run (a new stack, a new graph); and
// each stays near its solo run on the device.
void TestMembers::graphedMembersEqualEagerMembers()
{
    if (!torch::cuda::is_available())
        QSKIP("needs a CUDA GPU and a LibTorch with CUDA (CUDA graph capture)");
    const auto dir = test::scratchDir("members-graphs");
    auto config = test::loadOne(test::tinyConfig("linear_regression", "rope", 40));
    config.training.loggingSteps = 1;
    auto run = [&](bool graphs) {
        const std::string tag = graphs ? "g" : "e";
        engine::RunControl middle;
        StopAt stopper(middle, 25);
        std::vector<engine::MemberRun> members{member(41, dir + "/" + tag + "41"),
                                               member(42, dir + "/" + tag + "42"),
                                               member(43, dir + "/" + tag + "43")};
        members[1].control = &middle;
        members[1].observer = &stopper;
        auto o = cpuOptions(dir);
        o.device = "cuda";
        o.switches.cudaGraphs = graphs;
        engine::RunControl all;
        return engine::trainMembers(config, members, o, all);
    };
    const auto graphed = run(true), eager = run(false);
    for (size_t k = 0; k < graphed.size(); ++k) {
        QVERIFY2(graphed[k].error.empty(), graphed[k].error.c_str());
        QCOMPARE(graphed[k].summary.stepsDone, k == 1 ? std::int64_t(25) : std::int64_t(40));
        const auto a = engine::readTrainLog(graphed[k].summary.runFile);
        const auto b = engine::readTrainLog(eager[k].summary.runFile);
        QCOMPARE(a.step, b.step);
        QVERIFY2(a.loss == b.loss, qPrintable(QString("member %1").arg(k)));
    }
    engine::RunControl control;
    engine::TrainObserver quiet;
    auto o = cpuOptions(dir + "/solo");
    o.device = "cuda";
    o.seed = 43;
    const auto alone = engine::train(config, o, control, quiet).runFile;
    const double loss = lossDifference(graphed[2].summary.runFile, alone);
    qInfo("graphed member against its solo run on the device: losses within %.2g", loss);
    QVERIFY2(loss < 1e-3, qPrintable(QString::number(loss)));
}

// Issue 74: each member's next prompts drawn while the stacked step computes (LENGEN_PREFETCH=1)
// change nothing: the members without it bit for bit, and members stopped with prompts drawn
// ahead checkpoint their generators before them, so their resume is too.
void TestMembers::aBatchDrawnAheadChangesNoMember()
{
    const auto dir = test::scratchDir("members-ahead");
    const auto config = test::loadOne(test::tinyConfig("linear_regression", "rope", kSteps));
    auto ahead = cpuOptions(dir);
    ahead.switches.prefetchBatch = true;
    engine::RunControl c1, c2, stopping, again;
    const auto plain = engine::trainMembers(
        config, {member(31, dir + "/p31"), member(32, dir + "/p32")}, cpuOptions(dir), c1);
    const auto drawn = engine::trainMembers(
        config, {member(31, dir + "/a31"), member(32, dir + "/a32")}, ahead, c2);
    StopAt stopper(stopping, 137);
    std::vector<engine::MemberRun> members{member(31, dir + "/s31"), member(32, dir + "/s32")};
    members[0].observer = &stopper;
    std::vector<std::string> files;
    for (const auto& s : engine::trainMembers(config, members, ahead, stopping)) {
        QCOMPARE(s.summary.stepsDone, std::int64_t(137));
        files.push_back(s.summary.runFile);
    }
    const auto resumed = engine::resumeMembers(files, ahead, again);
    for (size_t k = 0; k < 2; ++k) {
        QVERIFY2(resumed[k].error.empty(), resumed[k].error.c_str());
        for (const auto& other : {drawn[k].summary.runFile, files[k]}) {
            const auto a = engine::readTrainLog(other);
            const auto b = engine::readTrainLog(plain[k].summary.runFile);
            QCOMPARE(a.step, b.step);
            QVERIFY(a.loss == b.loss);  // bit for bit
            QCOMPARE(weightDifference(other, plain[k].summary.runFile), 0.0);
        }
    }
}

QTEST_GUILESS_MAIN(TestMembers)
#include "tst_members.moc"
