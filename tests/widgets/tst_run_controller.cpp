// The run controller's state machine on fake engine jobs (start, pause, resume, stop, failure,
// a queue; exactly one terminal signal per run), and one real short training through the same
// path the studio uses.

#include <QLabel>
#include <QSignalSpy>
#include <QTest>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <thread>

#include "analysis_progress.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/trainer.h"
#include "run_controller.h"
#include "test_support.h"

using namespace lengen;
using lengen::ui::RunController;

namespace {

// A job that reports `steps` steps, checking the control between them like the trainer does.
ui::JobWorker::Job fakeJob(int steps, std::atomic<int>* counter = nullptr, int sleepMs = 5)
{
    return [=](engine::RunControl& control, engine::TrainObserver& obs) {
        engine::RunStarted started;
        started.totalSteps = steps;
        obs.onStarted(started);
        engine::RunSummary summary;
        for (int i = 0; i < steps; ++i) {
            if (!control.shouldContinue()) {
                summary.outcome = engine::RunOutcome::Cancelled;
                return summary;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(sleepMs));
            if (counter)
                ++*counter;
            engine::StepProgress p;
            p.step = i;
            p.totalSteps = steps;
            obs.onStep(p);
            summary.stepsDone = i + 1;
        }
        return summary;
    };
}

struct Terminals {
    explicit Terminals(RunController& c)
        : finished(&c, &RunController::runFinished), cancelled(&c, &RunController::runCancelled),
          failed(&c, &RunController::runFailed)
    {}
    int total() const { return int(finished.count() + cancelled.count() + failed.count()); }
    QSignalSpy finished, cancelled, failed;
};

// The job record a signal carried (every signal's first argument).
ui::JobInfo jobOf(const QList<QVariant>& args) { return args.at(0).value<ui::JobInfo>(); }
QString labelOf(const QList<QVariant>& args) { return QString::fromStdString(jobOf(args).label); }

bool waitIdle(RunController& c, int ms = 20000)
{
    return QTest::qWaitFor([&] { return c.state() == RunController::State::Idle; }, ms);
}

}  // namespace

class TestRunController final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void finishesWithOneTerminalSignal();
    void stopCancelsOnce();
    void pauseHoldsTheJobAndResumeContinues();
    void failuresBecomeReadableErrors();
    void queueRunsInOrder();
    void destroyingWhileRunningCancels();
    void realTrainingThroughTheWorker();
    void analysisJobsReportStagesNotSteps();
    void aQueuedJobOfAnotherKindIsAnnounced();
    void jobsOnOtherRunsRunSideBySide();
    void jobsOnOneRunWaitAndSayWhy();
    void perJobControlsTouchOnlyThatJob();
    void aNewUnitCountIsNeverThrottled();
    void theEtaCountsDownWhileTheBarStands();
    void theBarFollowsTheEnginesShareByCost();
    void theEtaLeavesOutLoadingTheRun();
};

void TestRunController::finishesWithOneTerminalSignal()
{
    RunController c;
    Terminals t(c);
    QSignalSpy started(&c, &RunController::runStarted);
    QSignalSpy states(&c, &RunController::stateChanged);
    c.enqueue("a", fakeJob(5));
    QCOMPARE(c.state(), RunController::State::Running);
    QVERIFY(waitIdle(c));
    QTest::qWait(50);  // nothing else may arrive
    QCOMPARE(t.finished.count(), 1);
    QCOMPARE(t.total(), 1);
    QCOMPARE(started.count(), 1);
    QCOMPARE(labelOf(t.finished.at(0)), QString("a"));
    QCOMPARE(jobOf(t.finished.at(0)).result.done, std::int64_t{5});
    QCOMPARE(jobOf(t.finished.at(0)).kind, ui::JobKind::Training);
    QCOMPARE(jobOf(started.at(0)).id, jobOf(t.finished.at(0)).id);
    QCOMPARE(states.count(), 2);  // Running, Idle
}

void TestRunController::stopCancelsOnce()
{
    RunController c;
    Terminals t(c);
    std::atomic<int> steps{0};
    c.enqueue("long", fakeJob(100000, &steps, 1));
    QVERIFY(QTest::qWaitFor([&] { return steps > 3; }));
    c.stop();
    QCOMPARE(c.state(), RunController::State::Stopping);
    c.stop();  // a second press changes nothing
    QVERIFY(waitIdle(c));
    QTest::qWait(50);
    QCOMPARE(t.cancelled.count(), 1);
    QCOMPARE(t.total(), 1);
    QVERIFY(steps < 100000);
}

void TestRunController::pauseHoldsTheJobAndResumeContinues()
{
    RunController c;
    Terminals t(c);
    std::atomic<int> steps{0};
    c.enqueue("p", fakeJob(400, &steps, 2));
    QVERIFY(QTest::qWaitFor([&] { return steps > 2; }));
    c.pause();
    QCOMPARE(c.state(), RunController::State::Paused);
    QTest::qWait(150);  // let the step in flight finish
    const int held = steps;
    QTest::qWait(300);
    QCOMPARE(int(steps), held);  // paused: no step advanced
    c.resume();
    QCOMPARE(c.state(), RunController::State::Running);
    QVERIFY(QTest::qWaitFor([&] { return steps > held; }));
    c.pause();
    c.stop();  // stopping a paused job wakes and cancels it
    QVERIFY(waitIdle(c));
    QCOMPARE(t.cancelled.count(), 1);
    QCOMPARE(t.total(), 1);
}

void TestRunController::failuresBecomeReadableErrors()
{
    RunController c;
    Terminals t(c);
    c.enqueue("bad", [](engine::RunControl&, engine::TrainObserver&) -> engine::RunSummary {
        throw engine::Error(engine::ErrorKind::Runtime, "loss became NaN at step 12", "detail");
    });
    c.enqueue("worse", [](engine::RunControl&, engine::TrainObserver&) -> engine::RunSummary {
        throw std::runtime_error("boom");
    });
    QVERIFY(QTest::qWaitFor([&] { return t.failed.count() == 2; }, 10000));
    QVERIFY(waitIdle(c));
    const auto first = t.failed.at(0).at(1).value<ui::RunError>();
    QCOMPARE(first.message, QString("loss became NaN at step 12"));
    QCOMPARE(first.detail, QString("detail"));
    QCOMPARE(first.exitKind, int(engine::ErrorKind::Runtime));
    QVERIFY(t.failed.at(1).at(1).value<ui::RunError>().message.contains("boom"));
    QCOMPARE(t.total(), 2);
}

void TestRunController::queueRunsInOrder()
{
    RunController c;
    Terminals t(c);
    QSignalSpy queue(&c, &RunController::queueChanged);
    c.enqueue("rope", fakeJob(3));
    c.enqueue("alibi", fakeJob(3));
    c.enqueue("nope", fakeJob(3));
    QCOMPARE(c.queuedCount(), 2);
    QCOMPARE(c.queuedLabels(), (QStringList{"alibi", "nope"}));
    QVERIFY(QTest::qWaitFor([&] { return t.finished.count() == 3; }, 10000));
    QVERIFY(waitIdle(c));
    QStringList order;
    for (const auto& args : t.finished)
        order << labelOf(args);
    QCOMPARE(order, (QStringList{"rope", "alibi", "nope"}));
    QCOMPARE(queue.last().at(0).toInt(), 0);
}

void TestRunController::destroyingWhileRunningCancels()
{
    std::atomic<int> steps{0};
    {
        RunController c;
        c.enqueue("x", fakeJob(1000000, &steps, 1));
        QVERIFY(QTest::qWaitFor([&] { return steps > 2; }));
    }  // must return: the destructor cancels and joins
    const int after = steps;
    QTest::qWait(50);
    QCOMPARE(int(steps), after);
}

void TestRunController::realTrainingThroughTheWorker()
{
    auto config = test::loadOne(test::tinyConfig());
    engine::TrainOptions o;
    o.outDir = test::scratchDir("controller");
    o.seed = 3;
    o.device = "cpu";
    o.threads = 1;
    RunController c;
    Terminals t(c);
    QSignalSpy logs(&c, &RunController::logRecord);
    c.enqueue("tiny", [=](engine::RunControl& control, engine::TrainObserver& obs) {
        return engine::train(config, o, control, obs);
    });
    QVERIFY(QTest::qWaitFor([&] { return t.total() == 1; }, 60000));
    QCOMPARE(t.finished.count(), 1);
    const auto job = jobOf(t.finished.at(0));
    QCOMPARE(job.result.done, std::int64_t{20});
    QVERIFY(std::isfinite(job.result.finalLoss));
    QVERIFY(std::filesystem::exists(job.subject));  // the run file, known since it started
    QCOMPARE(logs.count(), 4);                      // logging every 5 of 20 steps
    QCOMPARE(logs.last().at(1).value<engine::LogRecord>().step, std::int64_t{15});  // 0, 5, 10, 15
    QCOMPARE(jobOf(logs.last()).id, job.id);
}

// Issue 13, defect 4: an evaluation or probe used to fake training signals (the Train header
// became "(seed 0, , 0 parameters)", the bar restarted per stage and a probe ended at 66 %).
// Now it reports stages: no runStarted/stepProgress, a fraction over the whole job that only
// grows and ends at 100 %, its own progress area, and its kind at the terminal signal.
void TestRunController::analysisJobsReportStagesNotSteps()
{
    RunController c;
    ui::AnalysisProgressArea area(c);
    QSignalSpy started(&c, &RunController::runStarted);
    QSignalSpy steps(&c, &RunController::stepProgress);
    QSignalSpy progress(&c, &RunController::analysisProgress);
    QSignalSpy finished(&c, &RunController::runFinished);
    ui::JobKind kindAtEnd = ui::JobKind::Training;
    QString areaText;
    bool shown = false;
    connect(&c, &RunController::analysisProgress, this, [&] {
        areaText = area.text();
        shown = !area.isHidden();
    });
    connect(&c, &RunController::runFinished, this,
            [&](const ui::JobInfo& j) { kindAtEnd = j.kind; });
    c.enqueue(ui::JobKind::Probe, "probe x", [](engine::RunControl&, engine::AnalysisObserver& o) {
        for (int s = 0; s < 3; ++s) {
            o.onStage(s, 3, s == 2 ? "serial position" : "stage");
            for (int i = 0; i <= 10; ++i) {
                o.onProgress("stage", i, 10);
                std::this_thread::sleep_for(std::chrono::milliseconds(3));
            }
        }
        engine::JobResult r;
        r.done = 3;
        return r;
    });
    QVERIFY(finished.wait(20000));
    QCOMPARE(started.count(), 0);
    QCOMPARE(steps.count(), 0);
    QVERIFY(progress.count() >= 3);
    double last = -1;
    for (const auto& args : progress) {
        QCOMPARE(jobOf(args).kind, ui::JobKind::Probe);
        const auto p = args.at(1).value<ui::AnalysisProgress>();
        QVERIFY2(p.fraction >= last, qPrintable(QString::number(p.fraction)));
        last = p.fraction;
    }
    const auto end = progress.last().at(1).value<ui::AnalysisProgress>();
    QCOMPARE(end.fraction, 1.0);
    QCOMPARE(end.stage, 2);
    QCOMPARE(end.stages, 3);
    QCOMPARE(kindAtEnd, ui::JobKind::Probe);
    QCOMPARE(QString::fromStdString(jobOf(finished.at(0)).message), QString("3 probes computed"));
    QVERIFY2(areaText.contains("probe x · serial position (probe 3 of 3)"), qPrintable(areaText));
    QVERIFY(shown);
    QVERIFY(area.isHidden());  // gone with the job; the status bar says how it ended
    // Issue 52: the label keeps a bounded width, elided, so the status bar's messages are not
    // drawn under it; the whole text is its tooltip.
    auto* label = area.findChild<QLabel*>();
    QVERIFY(label && label->maximumWidth() <= 360);
    QCOMPARE(label->toolTip(), areaText);
    QVERIFY(label->fontMetrics().horizontalAdvance(label->text()) <= 360);
}

// A training followed by a queued evaluation: Running -> Running, but views whose controls belong
// to one kind (the Train tab's Pause/Stop) must hear that the job changed (review of issue 29:
// Pause stayed enabled during the evaluation and froze it).
void TestRunController::aQueuedJobOfAnotherKindIsAnnounced()
{
    RunController c;
    QList<ui::JobKind> kindsAtRunning;
    connect(&c, &RunController::stateChanged, this,
            [&](RunController::State s, const ui::JobInfo& focus) {
                if (s == RunController::State::Running)
                    kindsAtRunning << focus.kind;  // the signal carries the job it is about
            });
    c.enqueue("train", fakeJob(5));
    c.enqueue(ui::JobKind::Evaluation, "evaluate",
              [](engine::RunControl&, engine::AnalysisObserver&) { return engine::JobResult{}; });
    QVERIFY(waitIdle(c));
    QCOMPARE(kindsAtRunning, (QList<ui::JobKind>{ui::JobKind::Training, ui::JobKind::Evaluation}));
}

// Issue 39, lanes: an evaluation of run A starts while a training of run B runs, and a sweep
// while the evaluation runs; each ends with its own terminal signal.
void TestRunController::jobsOnOtherRunsRunSideBySide()
{
    RunController c;
    c.setMaxConcurrent(2);
    Terminals t(c);
    std::atomic<int> trainSteps{0}, evalTicks{0}, sweepTicks{0};
    const quint64 train =
        c.enqueue("train B", fakeJob(100000, &trainSteps, 1), ui::newRunSubject("train B"));
    auto ticking = [](std::atomic<int>* ticks) {
        return [ticks](engine::RunControl& control, engine::AnalysisObserver&) {
            while (control.shouldContinue()) {
                ++*ticks;
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
            return engine::JobResult{};
        };
    };
    const quint64 eval =
        c.enqueue(ui::JobKind::Evaluation, "evaluate A", ticking(&evalTicks), "/runs/A/run.h5");
    const quint64 sweep =
        c.enqueue(ui::JobKind::Sweep, "sweep S", ticking(&sweepTicks), "/sweeps/S");
    QVERIFY(
        QTest::qWaitFor([&] { return trainSteps > 3 && evalTicks > 3 && sweepTicks > 3; }, 10000));
    QCOMPARE(c.queuedCount(), 0);
    QCOMPARE(c.focusJob(),
             train);  // the training is the focus: the Train tab and Run menu act on it
    QCOMPARE(c.job(eval)->state, ui::JobState::Running);
    for (quint64 id : {sweep, eval, train})
        QVERIFY(c.stop(id));
    QVERIFY(waitIdle(c));
    QTest::qWait(50);
    QCOMPARE(t.cancelled.count(), 3);
    QCOMPARE(t.total(), 3);
    QCOMPARE(c.job(eval)->state, ui::JobState::Cancelled);
}

// Two jobs on one run, and a third training behind the first: they wait, in order, and say for
// what; a queued job can be cancelled without a terminal signal.
void TestRunController::jobsOnOneRunWaitAndSayWhy()
{
    RunController c;
    c.setMaxConcurrent(4);
    Terminals t(c);
    std::atomic<int> steps{0};
    const quint64 first = c.enqueue("resume A", fakeJob(100000, &steps, 1), "/runs/A/run.h5");
    const quint64 eval = c.enqueue(
        ui::JobKind::Evaluation, "evaluate A",
        [](engine::RunControl&, engine::AnalysisObserver&) { return engine::JobResult{}; },
        "/runs/A/run.h5");
    const quint64 other = c.enqueue("train C", fakeJob(3), ui::newRunSubject("train C"));
    QVERIFY(QTest::qWaitFor([&] { return steps > 2; }));
    QCOMPARE(c.job(eval)->state, ui::JobState::Queued);
    const QString evalWaits = QString::fromStdString(c.job(eval)->waitingFor);
    const QString otherWaits = QString::fromStdString(c.job(other)->waitingFor);
    QVERIFY2(evalWaits.contains("“resume A”, on the same files"), qPrintable(evalWaits));
    QVERIFY2(otherWaits.contains("one training at a time"), qPrintable(otherWaits));
    QVERIFY(c.stop(other));  // cancelled while queued
    QCOMPARE(c.job(other)->state, ui::JobState::Cancelled);
    QVERIFY(c.stop(first));
    QVERIFY(
        QTest::qWaitFor([&] { return t.finished.count() == 1; }, 10000));  // the evaluation, after
    QVERIFY(waitIdle(c));
    QCOMPARE(t.cancelled.count(), 1);
    QCOMPARE(t.total(), 2);
    QCOMPARE(labelOf(t.finished.at(0)), QString("evaluate A"));
}

// Pausing job X by id leaves job Y running; an analysis job does not pause.
void TestRunController::perJobControlsTouchOnlyThatJob()
{
    RunController c;
    c.setMaxConcurrent(2);
    std::atomic<int> steps{0}, ticks{0};
    const quint64 train =
        c.enqueue("train B", fakeJob(100000, &steps, 2), ui::newRunSubject("train B"));
    const quint64 eval = c.enqueue(
        ui::JobKind::Evaluation, "evaluate A",
        [&ticks](engine::RunControl& control, engine::AnalysisObserver&) {
            while (control.shouldContinue()) {
                ++ticks;
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
            return engine::JobResult{};
        },
        "/runs/A/run.h5");
    QVERIFY(QTest::qWaitFor([&] { return steps > 2 && ticks > 2; }));
    QVERIFY(!c.pause(eval));
    QVERIFY(c.pause(train));
    QCOMPARE(c.state(), RunController::State::Paused);
    QTest::qWait(100);
    const int held = steps, ticked = ticks;
    QTest::qWait(200);
    QCOMPARE(int(steps), held);
    QVERIFY(ticks > ticked);  // the evaluation went on
    QVERIFY(c.resume(train));
    QVERIFY(QTest::qWaitFor([&] { return steps > held; }));
    c.stop(train);
    c.stop(eval);
    QVERIFY(waitIdle(c));
}

// A sweep job reports "0 of 1" as its stage starts, then "0 of 2 cells" as soon as the executor
// knows them: the second came within the 50 ms throttle and was dropped, so the status bar said
// "0 of 1 cells ended" until a cell ended (seen under Xvfb while reviewing issue 39).
void TestRunController::aNewUnitCountIsNeverThrottled()
{
    RunController c;
    QSignalSpy progress(&c, &RunController::analysisProgress);
    QSignalSpy finished(&c, &RunController::runFinished);
    c.enqueue(
        ui::JobKind::Sweep, "sweep S",
        [](engine::RunControl&, engine::AnalysisObserver& obs) {
            obs.onStage(0, 1, "cells");
            obs.onProgress("cells", 0, 2);  // at once: within the throttle's interval
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
            return engine::JobResult{};
        },
        "/sweeps/S");
    QVERIFY(finished.wait(10000));
    QVERIFY(progress.count() >= 2);
    QCOMPARE(progress.last().at(1).value<ui::AnalysisProgress>().total, qint64{2});
}

// Issue 80, defect 22: a probe's bar stood at 64 % while its ETA climbed 0:02 → 0:21 (the
// estimate was the elapsed time over the fraction, the fraction standing). While the fraction
// stands the estimate counts down from its last value; the text says where in the stage it is.
void TestRunController::theEtaCountsDownWhileTheBarStands()
{
    RunController c;
    QSignalSpy progress(&c, &RunController::analysisProgress);
    QSignalSpy finished(&c, &RunController::runFinished);
    c.enqueue(ui::JobKind::Probe, "probe y", [](engine::RunControl&, engine::AnalysisObserver& o) {
        o.onStage(0, 1, "duplicated");
        o.onProgress("duplicated: count sweep", 1, 4);
        std::this_thread::sleep_for(std::chrono::milliseconds(80));
        for (int i = 0; i < 6; ++i) {  // a long unit: reports, the fraction standing
            o.onProgress("duplicated: count sweep", 1, 4);
            std::this_thread::sleep_for(std::chrono::milliseconds(80));
        }
        return engine::JobResult{};
    });
    QVERIFY(finished.wait(10000));
    std::vector<double> etas;
    for (const auto& args : progress) {
        const auto p = args.at(1).value<ui::AnalysisProgress>();
        if (p.done == 1 && p.etaSeconds >= 0)
            etas.push_back(p.etaSeconds);
    }
    QVERIFY2(etas.size() >= 3, qPrintable(QString::number(etas.size())));
    for (size_t i = 1; i < etas.size(); ++i)
        QVERIFY2(etas[i] <= etas[i - 1],
                 qPrintable(QStringLiteral("%1 after %2").arg(etas[i]).arg(etas[i - 1])));
    QCOMPARE(QString::fromStdString(jobOf(progress.last()).progress),
             QStringLiteral("duplicated: count sweep, 1 of 4"));
}

// Issue 80, defect 22 (the Xvfb pass): the ETA still climbed across a probe's parts, its bar
// counting the 16 short count-sweep layouts like the long ones after them. The engine's share
// by cost (onFraction) is the bar, where it says one.
void TestRunController::theBarFollowsTheEnginesShareByCost()
{
    RunController c;
    QSignalSpy progress(&c, &RunController::analysisProgress);
    QSignalSpy finished(&c, &RunController::runFinished);
    c.enqueue(ui::JobKind::Probe, "probe z", [](engine::RunControl&, engine::AnalysisObserver& o) {
        o.onFraction(0);
        o.onStage(0, 2, "duplicated");
        o.onFraction(0.05);  // 16 of 24 units, a twentieth of the cost
        o.onProgress("duplicated: random points", 16, 24);
        return engine::JobResult{};
    });
    QVERIFY(finished.wait(10000));
    const auto last = progress.last().at(1).value<ui::AnalysisProgress>();
    QCOMPARE(last.done, qint64{16});
    QCOMPARE(last.fraction, 0.05);  // not (16 / 24) / 2 = 0.33
}

// The Xvfb check of defect 22: a 52 s probe's first estimate said 1:08 with 48 s to go, the
// time it took to load the run counted as work. The share by cost weighs the work after it.
void TestRunController::theEtaLeavesOutLoadingTheRun()
{
    RunController c;
    QSignalSpy progress(&c, &RunController::analysisProgress);
    QSignalSpy finished(&c, &RunController::runFinished);
    c.enqueue(ui::JobKind::Probe, "probe w", [](engine::RunControl&, engine::AnalysisObserver& o) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // loading the run
        o.onFraction(0);
        o.onStage(0, 1, "duplicated");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        o.onFraction(0.5);
        o.onProgress("duplicated: count sweep", 1, 2);
        return engine::JobResult{};
    });
    QVERIFY(finished.wait(10000));
    const auto last = progress.last().at(1).value<ui::AnalysisProgress>();
    QCOMPARE(last.fraction, 0.5);
    // Half the work took about 50 ms: the other half about as long, not the 1.5 s of loading.
    QVERIFY2(last.etaSeconds >= 0 && last.etaSeconds < 1.2,
             qPrintable(QString::number(last.etaSeconds)));
}

QTEST_MAIN(TestRunController)
#include "tst_run_controller.moc"
