// Training end to end through the public engine API: pause/cancel control, the loss goes
// down, a seed reproduces a run bit for bit, cancel + resume equals an uninterrupted run,
// a diverging run fails cleanly and keeps its last checkpoint.

#include <filesystem>
#include <thread>

#include <cstdlib>

#include "io/h5.h"
#include "io/run_store.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/trainer.h"
#include "test_support.h"
#include "train/graph_step.h"
#include "train/train_loop.h"

using namespace lengen::engine;

namespace {

class Recorder : public TrainObserver {
public:
    explicit Recorder(RunControl* control = nullptr, std::int64_t cancelAt = -1)
        : m_control(control), m_cancelAt(cancelAt)
    {}
    void onStep(const StepProgress& p) override
    {
        ++steps;
        if (m_control && p.step == m_cancelAt)
            m_control->requestCancel();
    }
    void onLog(const LogRecord& r) override { logs.push_back(r); }
    void onCheckpoint(std::int64_t s) override { checkpoints.push_back(s); }
    int steps = 0;
    std::vector<LogRecord> logs;
    std::vector<std::int64_t> checkpoints;

private:
    RunControl* m_control;
    std::int64_t m_cancelAt;
};

// tinyConfig's model section for GPT-2 with the reference's dropout.
const char* kGpt2WithDropout =
    "model: {family: GPT2, max_length: [14], n_embd: 16, n_layer: 2, n_head: 2,"
    " resid_pdrop: 0.1, embd_pdrop: 0.1, attn_pdrop: 0.1}\n";

RunConfig tinyRun(std::int64_t steps, const std::string& task = "linear_regression")
{
    return lengen::test::loadOne(lengen::test::tinyConfig(task, "rope", static_cast<int>(steps)));
}

TrainOptions options(const std::string& tag, std::uint64_t seed)
{
    TrainOptions o;
    o.outDir = lengen::test::scratchDir(tag);
    o.seed = seed;
    o.device = "cpu";
    o.threads = 1;
    return o;
}

// `call` must throw Error of `kind` whose message holds every one of `needles`.
template <typename Call>
void expectError(Call call, ErrorKind kind, std::initializer_list<std::string> needles)
{
    try {
        call();
        QFAIL("no error was thrown");
    } catch (const Error& e) {
        QCOMPARE(e.kind(), kind);
        for (const auto& needle : needles)
            QVERIFY2(std::string(e.what()).find(needle) != std::string::npos, e.what());
    }
}

void expectSameCheckpoint(const std::string& a, const std::string& b)
{
    const auto ca = io::readCheckpoint(a), cb = io::readCheckpoint(b);
    QCOMPARE(ca.stepsDone, cb.stepsDone);
    QCOMPARE(ca.optimizerSteps, cb.optimizerSteps);
    QVERIFY(torch::equal(ca.rngState, cb.rngState));
    QCOMPARE(ca.model.size(), cb.model.size());
    for (size_t i = 0; i < ca.model.size(); ++i) {
        QCOMPARE(ca.model[i].name, cb.model[i].name);
        QVERIFY2(torch::equal(ca.model[i].value, cb.model[i].value), ca.model[i].name.c_str());
        QVERIFY(torch::equal(ca.expAvg[i].value, cb.expAvg[i].value));
        QVERIFY(torch::equal(ca.expAvgSq[i].value, cb.expAvgSq[i].value));
    }
}

void expectSameLog(const TrainLog& a, const TrainLog& b)
{
    QCOMPARE(a.step, b.step);
    QCOMPARE(a.loss, b.loss);  // bitwise: same doubles
    QCOMPARE(a.excessLoss, b.excessLoss);
    QCOMPARE(a.learningRate, b.learningRate);
    QCOMPARE(a.nPoints, b.nPoints);
    QCOMPARE(a.pointwise.size(), b.pointwise.size());
    for (size_t i = 0; i < a.pointwise.size(); ++i)
        QVERIFY(a.pointwise[i] == b.pointwise[i] ||
                (std::isnan(a.pointwise[i]) && std::isnan(b.pointwise[i])));
}

}  // namespace

class TestTraining final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }
    void pauseBlocksAndCancelWakes();
    void shortRunLowersTheLoss();
    void sameSeedSameRun();
    void cancelThenResumeEqualsUninterrupted();
    void aResumeThatLogsNothingReportsTheLastLoggedLoss();
    void notesAndTagsSurviveAResume();
    void divergingRunFailsAndKeepsCheckpoint();
    void logsTheGradientNormBeforeClipping();
    void trainsOnCudaWhenAvailable();
    void cudaWithoutAGpuIsAConfigError();
    void precisionIsCheckedAgainstTheDevice();
    void resumeKeepsTheStoredPrecision();
    void graphedStepsEqualEagerSteps_data();
    void graphedStepsEqualEagerSteps();
    void checkpointsMoveBetweenDevicesBitwise();
    void aBatchDrawnAheadChangesNothing_data();
    void aBatchDrawnAheadChangesNothing();
};

void TestTraining::pauseBlocksAndCancelWakes()
{
    RunControl control;
    QVERIFY(control.shouldContinue());
    control.setPaused(true);
    std::atomic<int> state{0};
    std::thread loop([&] { state = control.shouldContinue() ? 1 : 2; });
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    QCOMPARE(state.load(), 0);  // still blocked while paused
    control.requestCancel();
    loop.join();
    QCOMPARE(state.load(), 2);  // cancel wakes a paused loop and stops it
}

void TestTraining::shortRunLowersTheLoss()
{
    // Boolean majority on D = 3: the label statistics are learnable within a few hundred steps.
    auto config = tinyRun(300, "majority");
    RunControl control;
    Recorder rec;
    const auto summary = train(config, options("lower", 5), control, rec);
    QCOMPARE(summary.outcome, RunOutcome::Finished);
    QCOMPARE(summary.stepsDone, std::int64_t(300));
    QCOMPARE(rec.steps, 300);
    const auto log = readTrainLog(summary.runFile);
    QCOMPARE(log.step.size(), size_t(60));
    auto meanLoss = [&](size_t from, size_t to) {
        double s = 0;
        for (size_t i = from; i < to; ++i)
            s += log.loss[i];
        return s / static_cast<double>(to - from);
    };
    const double first = meanLoss(0, 6), last = meanLoss(50, 60);
    QVERIFY2(last < 0.8 * first, qPrintable(QString("%1 -> %2").arg(first).arg(last)));
    const auto info = readRunInfo(summary.runFile);
    QCOMPARE(info.status, std::string("finished"));
    QCOMPARE(info.checkpointStep, std::int64_t(300));  // saved after the last step too
    // Issue 13, defect 5: one "final loss": the last log row's (step 295 here, not step 299),
    // the same number the summary, `lengen info` and the studio's run table show.
    QCOMPARE(summary.finalLoss, info.lastLoss);
    QCOMPARE(summary.finalLoss, log.loss.back());
    // Issue 80 defect 27: the first row's steps/s is measured (it was 0, and every steps/s
    // curve ramped up from it), and no later row is 0.
    for (size_t i = 0; i < log.stepsPerSecond.size(); ++i)
        QVERIFY2(log.stepsPerSecond[i] > 0,
                 qPrintable(QString("row %1: %2 steps/s").arg(i).arg(log.stepsPerSecond[i])));
}

void TestTraining::sameSeedSameRun()
{
    RunControl c1, c2;
    Recorder r1, r2;
    const auto a = train(tinyRun(25), options("seedA", 77), c1, r1);
    const auto b = train(tinyRun(25), options("seedB", 77), c2, r2);
    expectSameLog(readTrainLog(a.runFile), readTrainLog(b.runFile));
    expectSameCheckpoint(a.runFile, b.runFile);
    RunControl c3;
    Recorder r3;
    const auto c = train(tinyRun(25), options("seedC", 78), c3, r3);
    QVERIFY(readTrainLog(c.runFile).loss != readTrainLog(a.runFile).loss);
}

void TestTraining::cancelThenResumeEqualsUninterrupted()
{
    RunControl whole;
    Recorder wholeRec;
    const auto full = train(tinyRun(40), options("whole", 21), whole, wholeRec);

    RunControl control;
    Recorder stopRec(&control, 24);  // cancel after step 24: 25 steps done
    const auto stopped = train(tinyRun(40), options("stopped", 21), control, stopRec);
    QCOMPARE(stopped.outcome, RunOutcome::Cancelled);
    QCOMPARE(stopped.stepsDone, std::int64_t(25));
    auto info = readRunInfo(stopped.runFile);
    QCOMPARE(info.status, std::string("cancelled"));
    QCOMPARE(info.checkpointStep, std::int64_t(25));

    RunControl again;
    Recorder resumeRec;
    const auto resumed = resume(stopped.runFile, options("unused", 0), again, resumeRec);
    QCOMPARE(resumed.outcome, RunOutcome::Finished);
    QCOMPARE(resumed.stepsDone, std::int64_t(40));
    QCOMPARE(readRunInfo(stopped.runFile).status, std::string("finished"));
    expectSameLog(readTrainLog(full.runFile), readTrainLog(stopped.runFile));
    expectSameCheckpoint(full.runFile, stopped.runFile);
}

void TestTraining::aResumeThatLogsNothingReportsTheLastLoggedLoss()
{
    // Logs at steps 0, 5, …, 25; cancelled after step 26; the resume runs step 27 only, which
    // logs nothing. The final loss is the step-25 row's (it was step 27's loss, a number no
    // log, `lengen info` or run table shows).
    RunControl control;
    Recorder stopRec(&control, 26);
    const auto stopped = train(tinyRun(28), options("shortresume", 5), control, stopRec);
    QCOMPARE(stopped.stepsDone, std::int64_t(27));
    RunControl again;
    Recorder resumeRec;
    const auto resumed = resume(stopped.runFile, options("unused", 0), again, resumeRec);
    QCOMPARE(resumed.stepsDone, std::int64_t(28));
    QVERIFY(resumeRec.logs.empty());
    const auto log = readTrainLog(stopped.runFile);
    QCOMPARE(log.step.back(), std::int64_t(25));
    QCOMPARE(resumed.finalLoss, log.loss.back());
    QCOMPARE(resumed.finalLoss, readRunInfo(stopped.runFile).lastLoss);
}

// Issue 41: notes and tags written to a stopped run are still there after it is resumed and
// finished, and the training records are the same as without them.
void TestTraining::notesAndTagsSurviveAResume()
{
    RunControl control;
    Recorder stopRec(&control, 9);
    const auto stopped = train(tinyRun(20), options("notes", 4), control, stopRec);
    QCOMPARE(stopped.stepsDone, std::int64_t(10));
    writeRunNotes(stopped.runFile,
                  {"  lr 1e-3 looks fine\nsecond line ", {"baseline", " rope ", "", "baseline"}});
    auto info = readRunInfo(stopped.runFile);
    QCOMPARE(info.notes, std::string("lr 1e-3 looks fine\nsecond line"));
    QCOMPARE(info.tags, (std::vector<std::string>{"baseline", "rope"}));
    RunControl again;
    Recorder resumeRec;
    QCOMPARE(resume(stopped.runFile, options("unused", 0), again, resumeRec).stepsDone,
             std::int64_t(20));
    info = readRunInfo(stopped.runFile);
    QCOMPARE(info.status, std::string("finished"));
    QCOMPARE(info.notes, std::string("lr 1e-3 looks fine\nsecond line"));
    QCOMPARE(info.tags, (std::vector<std::string>{"baseline", "rope"}));
    RunControl whole;
    Recorder wholeRec;
    const auto plain = train(tinyRun(20), options("nonotes", 4), whole, wholeRec);
    expectSameLog(readTrainLog(plain.runFile), readTrainLog(stopped.runFile));
    expectSameCheckpoint(plain.runFile, stopped.runFile);
}

void TestTraining::divergingRunFailsAndKeepsCheckpoint()
{
    auto yaml = QString::fromStdString(lengen::test::tinyConfig("linear_regression", "rope", 200))
                    .replace("learning_rate: 1.0e-3", "learning_rate: 1.0e+30")
                    .replace("warmup_ratio: 0.1", "warmup_ratio: 0.0")
                    .replace("save_steps: 10", "save_steps: 1")
                    .toStdString() +
                "";
    auto config = lengen::test::loadOne(yaml);
    config.training.maxGradNorm = 0;
    RunControl control;
    Recorder rec;
    try {
        train(config, options("nan", 3), control, rec);
        QFAIL("expected a Runtime error");
    } catch (const Error& e) {
        QCOMPARE(e.kind(), ErrorKind::Runtime);
        QVERIFY2(QString(e.what()).contains("the training loss became"), e.what());
    }
    QVERIFY(!rec.checkpoints.empty());
    // Find the run file through the output folder and check it is intact and marked failed.
    std::string runFile;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(
             std::filesystem::path(lengen::test::scratchDir("probe")).parent_path()))
        if (entry.path().filename() == "run.h5" &&
            entry.path().string().find("/nan-") != std::string::npos)
            runFile = entry.path().string();
    QVERIFY(!runFile.empty());
    const auto info = readRunInfo(runFile);
    QCOMPARE(info.status, std::string("failed"));
    QCOMPARE(info.checkpointStep, rec.checkpoints.back());
}

// Issue 41: /log/grad_norm is the norm before clipping, measured whether or not clipping is on.
// Step 0 sees the same weights and prompts under any max_grad_norm, so its norm is the same;
// with a clip far below it the later steps differ (the update was clipped).
void TestTraining::logsTheGradientNormBeforeClipping()
{
    auto clipped = tinyRun(20);
    clipped.training.maxGradNorm = 1e-6;
    auto unclipped = tinyRun(20);
    unclipped.training.maxGradNorm = 0;
    RunControl c1, c2;
    Recorder r1, r2;
    const auto a = train(clipped, options("gradclip", 9), c1, r1);
    const auto b = train(unclipped, options("gradfree", 9), c2, r2);
    const auto la = readTrainLog(a.runFile), lb = readTrainLog(b.runFile);
    QCOMPARE(la.gradNorm.size(), la.step.size());
    QCOMPARE(la.gradNorm.size(), size_t(4));  // steps 0, 5, 10, 15
    for (size_t i = 0; i < la.gradNorm.size(); ++i) {
        QVERIFY2(std::isfinite(la.gradNorm[i]) && la.gradNorm[i] > 1e-3,
                 qPrintable(QString::number(la.gradNorm[i])));
        QVERIFY2(std::isfinite(lb.gradNorm[i]) && lb.gradNorm[i] > 1e-3,
                 qPrintable(QString::number(lb.gradNorm[i])));
    }
    QCOMPARE(la.gradNorm[0], lb.gradNorm[0]);
    QVERIFY(la.gradNorm[3] != lb.gradNorm[3]);
    QCOMPARE(r1.logs.front().gradNorm, la.gradNorm[0]);  // the observer sees what is stored
}

void TestTraining::trainsOnCudaWhenAvailable()
{
    if (!torch::cuda::is_available())
        QSKIP("no CUDA device (CPU-only LibTorch or no GPU)");
    RunControl control;
    Recorder rec;
    auto o = options("cuda", 9);
    o.device = "cuda";
    const auto summary = train(tinyRun(30), o, control, rec);
    QCOMPARE(summary.outcome, RunOutcome::Finished);
    QCOMPARE(readRunInfo(summary.runFile).device, std::string("cuda:0"));
    QVERIFY(std::isfinite(summary.finalLoss));
}

void TestTraining::cudaWithoutAGpuIsAConfigError()
{
    // Device selection, on every build: "" and "auto" pick the best device, unknown names are
    // usage errors, and CUDA without a usable GPU is a config error (exit 2) naming the flag
    // and the fallback.
    expectError([] { resolveDevice("tpu"); }, ErrorKind::Usage, {"tpu"});
    QCOMPARE(resolveDevice("cpu"), std::string("cpu"));
    if (torch::cuda::is_available()) {
        QCOMPARE(resolveDevice(""), std::string("cuda:0"));
        QCOMPARE(resolveDevice("cuda"), std::string("cuda:0"));
        return;
    }
    QCOMPARE(resolveDevice(""), std::string("cpu"));
    QCOMPARE(resolveDevice("auto"), std::string("cpu"));
    for (const std::string device : {"cuda", "cuda:1"})
        expectError([&] { resolveDevice(device); }, ErrorKind::Config,
                    {"--device " + device, "--device cpu", "LibTorch"});
}

void TestTraining::precisionIsCheckedAgainstTheDevice()
{
    RunControl control;
    Recorder rec;
    auto o = options("precision", 3);
    o.precision = "tf32";  // a GPU setting: refused on the CPU before anything is written
    expectError([&] { train(tinyRun(5), o, control, rec); }, ErrorKind::Config,
                {"--precision tf32"});
    o.precision = "fp16";
    expectError([&] { train(tinyRun(5), o, control, rec); }, ErrorKind::Usage,
                {"fp32, tf32, bf16"});
    QCOMPARE(rec.steps, 0);
}

// Issue 40: --precision is stored in the run, and a resume takes the stored one unless told
// otherwise. On the CPU only fp32 trains, so the run's attribute is set to what a GPU session
// would have written: the resume then refuses for the CPU (proving it read bf16) and names the
// way out; an explicit fp32 continues and is recorded.
void TestTraining::resumeKeepsTheStoredPrecision()
{
    RunControl control;
    Recorder rec;
    const auto first = train(tinyRun(6), options("stored-precision", 3), control, rec);
    QCOMPARE(readRunInfo(first.runFile).precision, std::string("fp32"));
    auto setStored = [&](const std::string& value) {
        io::H5Lock lock(io::h5Mutex());
        auto file = io::openFile(first.runFile, io::OpenMode::ReadWrite);
        io::writeAttribute(file.id(), "precision", value, first.runFile);
    };
    setStored("bf16");
    QCOMPARE(readRunInfo(first.runFile).precision, std::string("bf16"));
    TrainOptions o;
    o.device = "cpu";
    o.threads = 1;
    expectError([&] { resume(first.runFile, o, control, rec); }, ErrorKind::Config,
                {"--precision bf16", "--precision fp32 to continue it on the CPU"});
    o.precision = "fp32";
    resume(first.runFile, o, control, rec);  // finished already: continues nothing, records fp32
    QCOMPARE(readRunInfo(first.runFile).precision, std::string("fp32"));
    setStored("fp8");
    expectError([&] { readRunInfo(first.runFile); }, ErrorKind::RunFile, {"precision", "fp8"});
}

void TestTraining::graphedStepsEqualEagerSteps_data()
{
    QTest::addColumn<QString>("model");
    QTest::newRow("llama") << "llama";
    // Issue 58 item 3: dropout captured too; the masks follow from the run's generator.
    QTest::newRow("gpt2 with dropout") << "gpt2";
}

void TestTraining::graphedStepsEqualEagerSteps()
{
    if (!torch::cuda::is_available())
        QSKIP("needs a CUDA GPU and a LibTorch with CUDA (CUDA graph capture)");
    QFETCH(QString, model);
    // Same kernels, same order: a graphed run and an eager run log the same losses bit for bit,
    // across a curriculum shape change (a new capture). First: the graphed run is graphed.
    auto yaml = lengen::test::tinyConfig("linear_regression", "rope", 40);
    if (model == "gpt2")
        yaml.replace(0, yaml.find("task:"), kGpt2WithDropout);
    auto config = lengen::test::loadOne(yaml);
    config.training.loggingSteps = 1;
    {
        training::TrainSession s;
        training::setupSession(s, config, 5, "cuda:0");
        QVERIFY2(training::graphsApply(s), "a CUDA run of the tiny config should use graphs");
    }
    auto run = [&](bool graphs, std::uint64_t seed) {
        RunControl control;
        Recorder rec;
        auto o = options(model.toStdString() + "-graphs-" + (graphs ? "1" : "0") + "-" +
                             std::to_string(seed),
                         seed);
        o.device = "cuda";
        o.switches.cudaGraphs = graphs;
        train(config, o, control, rec);
        return rec.logs;
    };
    const auto graphed = run(true, 5), eager = run(false, 5);
    QCOMPARE(graphed.size(), eager.size());
    for (size_t i = 0; i < graphed.size(); ++i)
        QCOMPARE(graphed[i].loss, eager[i].loss);
    if (model == "gpt2") {  // the masks change with the seed, and again at every replay
        const auto again = run(true, 5), other = run(true, 6);
        QCOMPARE(again.back().loss, graphed.back().loss);
        QVERIFY(other.back().loss != graphed.back().loss);
    }
}

void TestTraining::checkpointsMoveBetweenDevicesBitwise()
{
    if (!torch::cuda::is_available())
        QSKIP("needs a CUDA GPU and a LibTorch with CUDA");
    // A checkpoint written on one device restores on the other with the same bits, weights and
    // optimiser moments alike.
    for (const std::string from : {"cuda", "cpu"}) {
        RunControl control;
        Recorder rec;
        auto o = options("move-" + from, 6);
        o.device = from;
        const auto summary = train(tinyRun(12), o, control, rec);
        const auto saved = io::readCheckpoint(summary.runFile);
        training::TrainSession s;
        const auto config =
            storedRunConfig(readRunInfo(summary.runFile).configYaml, summary.runFile);
        training::setupSession(s, config, 1, from == "cuda" ? "cpu" : "cuda:0");
        training::restoreCheckpoint(s, saved, summary.runFile);
        const auto restored = training::captureCheckpoint(s, 0);
        QCOMPARE(restored.model.size(), saved.model.size());
        for (size_t i = 0; i < saved.model.size(); ++i)
            QVERIFY2(torch::equal(restored.model[i].value, saved.model[i].value) &&
                         torch::equal(restored.expAvg[i].value, saved.expAvg[i].value) &&
                         torch::equal(restored.expAvgSq[i].value, saved.expAvgSq[i].value),
                     saved.model[i].name.c_str());
        QCOMPARE(restored.optimizerSteps, saved.optimizerSteps);
    }
}

void TestTraining::aBatchDrawnAheadChangesNothing_data()
{
    QTest::addColumn<QString>("model");
    QTest::newRow("llama") << "llama";
    QTest::newRow("gpt2-dropout") << "gpt2";  // its masks draw from the run's generator too
}

// Issue 74: the next step's batch drawn while this step computes (LENGEN_PREFETCH=1) draws the
// same prompts in the same order: the run is the one without it, bit for bit, and a run stopped
// with a batch drawn ahead checkpoints the generator before that batch, so its resume is too.
void TestTraining::aBatchDrawnAheadChangesNothing()
{
    QFETCH(QString, model);
    auto yaml = lengen::test::tinyConfig("linear_regression", "rope", 40);
    if (model == "gpt2")
        yaml.replace(0, yaml.find("task:"), kGpt2WithDropout);
    const auto config = lengen::test::loadOne(yaml);
    const auto run = [&](const std::string& tag, bool ahead, std::int64_t cancelAt) {
        RunControl control;
        Recorder rec(&control, cancelAt);
        auto o = options("ahead-" + model.toStdString() + "-" + tag, 21);
        o.switches.prefetchBatch = ahead;
        return train(config, o, control, rec);
    };
    const auto plain = run("off", false, -1);
    const auto ahead = run("on", true, -1);
    expectSameLog(readTrainLog(plain.runFile), readTrainLog(ahead.runFile));
    expectSameCheckpoint(plain.runFile, ahead.runFile);
    // Stopped after step 24 (25 done), step 25's batch drawn already; resumed with it on.
    const auto stopped = run("stopped", true, 24);
    QCOMPARE(stopped.stepsDone, std::int64_t(25));
    RunControl again;
    Recorder rec;
    auto o = options("unused-ahead", 0);
    o.switches.prefetchBatch = true;
    QCOMPARE(resume(stopped.runFile, o, again, rec).stepsDone, std::int64_t(40));
    expectSameLog(readTrainLog(plain.runFile), readTrainLog(stopped.runFile));
    expectSameCheckpoint(plain.runFile, stopped.runFile);
}

QTEST_APPLESS_MAIN(TestTraining)
#include "tst_training.moc"
