// Issue 52, item 1: a run's training length is what it reached, not its curriculum's end. The
// quick RoPE preset's curriculum adds 2 points every 800 steps up to 9; trained 1500 steps it
// ends at 7 points and 3 dims. The run records that, `lengen info`, the run index, the stored
// evaluations and the warnings say it, and runs written before the record read it from their
// log or config.

#include <QTest>

#include "io/h5.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/run_index.h"
#include "lengen/engine/sweep_run.h"
#include "test_support.h"

using namespace lengen;

class TestTrainedLength final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void curriculumOverSteps();
    void shortfallNamesTheNumbers();
    void runRecordsWhatItReached();
    void evaluationsStoreTheTrainedLength();
    void infoAndIndexSayTheReachedLength();
    void validateAndTrainWarn();
    void sweepNewWarns();
    void runsWrittenBeforeTheRecordReadTheirLogOrConfig();

private:
    engine::RunConfig quick(std::int64_t steps) const;
    std::string m_dir, m_run;
};

// The quick RoPE preset's curriculum and schedule on a model small enough to train 1500 steps
// in seconds: what the run trains on is the curriculum, not the width.
engine::RunConfig TestTrainedLength::quick(std::int64_t steps) const
{
    auto c = engine::loadConfigFile(test::sourcePath("configs/quick/linear_regression_rope.yaml"))
                 .runs.at(0);
    c.model.hiddenSize = 16;
    c.model.numLayers = 1;
    c.model.numHeads = 2;
    c.model.intermediateSize = 64;
    c.training.batchSize = 2;
    c.training.maxSteps = steps;
    c.training.loggingSteps = 100;  // the last row is step 1400: the log does not see step 1499
    c.training.saveSteps = 1000;
    return c;
}

void TestTrainedLength::initTestCase()
{
    m_dir = test::scratchDir("trained_length");
    m_run = test::trainConfig(quick(1500), m_dir, 3);
}

void TestTrainedLength::curriculumOverSteps()
{
    const auto c = quick(1500);
    QCOMPARE(c.curriculumAt(0), (engine::CurriculumState{2, 5}));
    QCOMPARE(c.curriculumAt(799), (engine::CurriculumState{2, 5}));
    QCOMPARE(c.curriculumAt(800), (engine::CurriculumState{3, 7}));
    QCOMPARE(c.curriculumAt(1600), (engine::CurriculumState{4, 9}));
    QCOMPARE(c.curriculumAt(99999), (engine::CurriculumState{4, 9}));
    // After n steps the weights last trained at step n - 1.
    QCOMPARE(c.curriculumAfter(1500), (engine::CurriculumState{3, 7}));
    QCOMPARE(c.curriculumAfter(1600), (engine::CurriculumState{3, 7}));
    QCOMPARE(c.curriculumAfter(1601), (engine::CurriculumState{4, 9}));
    QCOMPARE(c.curriculumAfter(0), (engine::CurriculumState{2, 5}));
}

void TestTrainedLength::shortfallNamesTheNumbers()
{
    const auto text = engine::curriculumShortfall(quick(1500));
    QVERIFY2(text.find("the curriculum reaches 9 points at step 1600") == 0, text.c_str());
    QVERIFY2(text.find("with 1500 steps training ends at 7 points and 3 dims") != std::string::npos,
             text.c_str());
    QCOMPARE(engine::curriculumShortfall(quick(1601)), std::string());
    QCOMPARE(engine::curriculumShortfall(quick(15000)), std::string());
    QVERIFY(!engine::curriculumShortfall(quick(1600)).empty());  // step 1600 is never trained
    auto never = quick(1500);
    never.task.curriculum.points.increment = 0;
    const auto neverText = engine::curriculumShortfall(never);
    QVERIFY2(neverText.find("9 points never") != std::string::npos, neverText.c_str());
}

void TestTrainedLength::runRecordsWhatItReached()
{
    const auto info = engine::readRunInfo(m_run);
    QCOMPARE(info.reached.source, std::string("recorded"));
    QCOMPARE(info.reached.stepsDone, std::int64_t(1500));
    QCOMPARE(info.reached.points, 7);
    QCOMPARE(info.reached.dims, 3);
    QCOMPARE(info.lastLoggedStep, std::int64_t(1400));
}

void TestTrainedLength::evaluationsStoreTheTrainedLength()
{
    test::evaluateSmall(m_run, {"standard", "ood_length"}, 4, 2, 5);
    const auto evals = engine::readEvaluations(m_run);
    QCOMPARE(evals.size(), size_t(2));
    for (const auto& e : evals) {
        QCOMPARE(e.trainPoints, 9);    // the lengths' base: the curriculum's end, as before
        QCOMPARE(e.trainedPoints, 7);  // what the figures mark
    }
}

void TestTrainedLength::infoAndIndexSayTheReachedLength()
{
    const auto info = test::runLengen({"info", QString::fromStdString(m_run)});
    QCOMPARE(info.code, 0);
    QVERIFY2(info.out.contains("trained on   7 points, 3 dims: max_steps (1500) ends before the "
                               "curriculum's 9 points, 4 dims (step 1600)"),
             qPrintable(info.out));
    const auto pointwise =
        test::runLengen({"info", QString::fromStdString(m_run), "--pointwise", "1"});
    QVERIFY2(pointwise.out.contains("at 7 points") && pointwise.out.contains("k=6 ") &&
                 !pointwise.out.contains("k=7 "),
             qPrintable(pointwise.out));
    const auto runs = engine::indexRuns(m_dir);
    QCOMPARE(runs.size(), size_t(1));
    QCOMPARE(runs[0].points, 7);
    QCOMPARE(runs[0].dims, 3);
    QCOMPARE(runs[0].endPoints, 9);
    QCOMPARE(runs[0].endDims, 4);
    // The cache beside the folder keeps them.
    const auto again = engine::indexRuns(m_dir);
    QCOMPARE(again[0].points, 7);
    QCOMPARE(again[0].endPoints, 9);
}

void TestTrainedLength::validateAndTrainWarn()
{
    const auto preset =
        QString::fromStdString(test::sourcePath("configs/quick/linear_regression_rope.yaml"));
    // The preset itself trains to the end: no warning.
    const auto plain = test::runLengen({"validate", preset, "-q"});
    QCOMPARE(plain.code, 0);
    QVERIFY2(!plain.err.contains("curriculum reaches"), qPrintable(plain.err));
    // A config whose max_steps ends first warns at validate...
    auto text = test::tinyConfig("linear_regression", "rope", 10);  // N: 5 -> 7 at step 10
    const auto file = QString::fromStdString(test::writeFile(m_dir, "short.yaml", text));
    const auto v = test::runLengen({"validate", file, "-q"});
    QCOMPARE(v.code, 0);
    QVERIFY2(v.err.contains("training.max_steps: the curriculum reaches 7 points at step 10") &&
                 v.err.contains("with 10 steps training ends at 5 points"),
             qPrintable(v.err));
    // ... and `train --steps` warns with the steps it will run.
    const auto ok = test::runLengen({"train", file, "--steps", "3", "-q", "--threads", "1", "--out",
                                     QString::fromStdString(m_dir + "/steps")});
    QCOMPARE(ok.code, 0);
    QVERIFY2(ok.err.contains("with 3 steps training ends at 5 points"), qPrintable(ok.err));
}

void TestTrainedLength::sweepNewWarns()
{
    const auto short10 =
        engine::createSweep(test::tinySweep(m_dir + "/sweep10", {"rope", "alibi"}, 1, 10));
    const auto warnings = engine::sweepCurriculumWarnings(short10);
    QCOMPARE(warnings.size(), size_t(1));
    QVERIFY2(
        warnings[0].find("2 cells (") == 0 &&
            warnings[0].find("training.max_steps: the curriculum reaches 7 points at step 10") !=
                std::string::npos,
        warnings[0].c_str());
    const auto full = engine::createSweep(test::tinySweep(m_dir + "/sweep20", {"rope"}, 1, 20));
    QVERIFY(engine::sweepCurriculumWarnings(full).empty());
    // Through the CLI, a --set axis of max_steps warns for the cells it shortens only.
    const auto base = QString::fromStdString(test::tinyConfigFile(m_dir, 20));
    const auto cli = test::runLengen({"sweep", "new", base, "--pe", "rope", "--seeds", "1", "--set",
                                      "training.max_steps=10,20", "--out",
                                      QString::fromStdString(m_dir + "/sweep_set"), "-q"});
    QCOMPARE(cli.code, 0);
    QVERIFY2(cli.err.contains("warning: 1 cell (") &&
                 cli.err.contains("with 10 steps training ends at 5 points"),
             qPrintable(cli.err));
}

// A run and its evaluations as this build's predecessor wrote them: no /curriculum_reached, no
// trained_points. Their training length comes from the log's last row, or from the config at
// the checkpoint's step where the checkpoint is later than the log.
void TestTrainedLength::runsWrittenBeforeTheRecordReadTheirLogOrConfig()
{
    {
        engine::io::H5Lock lock(engine::io::h5Mutex());
        auto file = engine::io::openFile(m_run, engine::io::OpenMode::ReadWrite);
        engine::io::removeObject(file.id(), "curriculum_reached", m_run);
        const auto analysis = engine::analysisFileFor(m_run);
        auto a = engine::io::openFile(analysis, engine::io::OpenMode::ReadWrite);
        for (const char* group : {"eval/standard", "eval/ood_length"})
            engine::io::removeAttribute(a.id(), group, "trained_points", analysis);
    }
    const auto info = engine::readRunInfo(m_run);
    QCOMPARE(info.reached.source, std::string("config"));  // checkpoint 1500, last log row 1400
    QCOMPARE(info.reached.points, 7);
    QCOMPARE(info.reached.dims, 3);
    for (const auto& e : engine::readEvaluations(m_run))
        QCOMPARE(e.trainedPoints, 7);

    // Logged at every step, the log's last row is the last step: the log says it.
    auto text = test::tinyConfig("linear_regression", "rope", 10);
    text.replace(text.find("logging_steps: 5"), 16, "logging_steps: 1");
    const auto logged = test::trainConfig(test::loadOne(text), m_dir + "/logged", 5);
    {
        engine::io::H5Lock lock(engine::io::h5Mutex());
        auto file = engine::io::openFile(logged, engine::io::OpenMode::ReadWrite);
        engine::io::removeObject(file.id(), "curriculum_reached", logged);
    }
    const auto fromLog = engine::readRunInfo(logged);
    QCOMPARE(fromLog.reached.source, std::string("log"));
    QCOMPARE(fromLog.reached.stepsDone, std::int64_t(10));
    QCOMPARE(fromLog.reached.points, 5);
    QCOMPARE(fromLog.reached.dims, 2);
}

QTEST_GUILESS_MAIN(TestTrainedLength)
#include "tst_trained_length.moc"
