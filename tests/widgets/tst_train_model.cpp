// The Train tab's model (widgets/panels/train/train_model.h, issue 70): what Pause, Stop,
// Resume and "open the training run" do for the run shown and the studio's training, which
// log rows join the curves, and the loss figure as chosen. No window, no training: the runs
// and the job are values.

#include <QtTest>

#include <cmath>

#include "lengen/engine/jobs.h"
#include "train_model.h"

using namespace lengen;

namespace {

// A stored run's header and a log of `rows` rows (loss 1/(step+1), pointwise [step, step]).
std::pair<engine::RunFileInfo, engine::TrainLog> storedRun(const std::string& status,
                                                           const std::string& writer, int rows)
{
    engine::RunFileInfo info;
    info.runId = "ab12cd34";
    info.status = status;
    info.writer = writer;
    info.positionEncoding = "rope";
    info.totalSteps = 100;
    engine::TrainLog log;
    for (int i = 0; i < rows; ++i) {
        log.step.push_back(i * 5);
        log.loss.push_back(1.0 / (i + 1));
        log.excessLoss.push_back(2.0 / (i + 1));
        log.learningRate.push_back(1e-3);
        log.wallSeconds.push_back(i);
        log.stepsPerSecond.push_back(10);
        log.gradNorm.push_back(1);
        log.nPoints.push_back(7);
        log.nDims.push_back(3);
        log.pointwise.insert(log.pointwise.end(), {double(i), double(i)});
    }
    log.pointwiseWidth = 2;
    return {info, log};
}

ui::JobInfo trainingJob(quint64 id, engine::JobState state)
{
    ui::JobInfo j;
    j.id = id;
    j.kind = engine::JobKindId::Training;
    j.state = state;
    j.label = "linear_regression · RoPE";
    return j;
}

}  // namespace

class TstTrainModel final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void controlsFollowTheTrainingAndTheRunShown();
    void logRowsJoinTheLiveRunOnce();
    void lossFigureAsChosen();
};

void TstTrainModel::controlsFollowTheTrainingAndTheRunShown()
{
    using S = engine::JobState;
    ui::TrainModel m;
    m.startLive(7, "/r/a/run.h5", "a", "linear_regression · RoPE", "header");
    QVERIFY(m.showingLive());
    auto c = m.controls(trainingJob(7, S::Running));
    QVERIFY(c.pause && c.stop && !c.offerLive && !c.resume);
    QCOMPARE(c.pauseText, QStringLiteral("Pause"));
    QCOMPARE(m.controls(trainingJob(7, S::Paused)).pauseText, QStringLiteral("Continue"));
    c = m.controls(trainingJob(7, S::Stopping));
    QVERIFY(!c.pause && !c.stop);
    // Another run opened while it trains: the buttons leave the training alone, and offer it.
    const auto [info, log] = storedRun("cancelled", "", 4);
    m.showStored("/r/b/run.h5", info, log, 0);
    QVERIFY(!m.showingLive());
    c = m.controls(trainingJob(7, S::Running));
    QVERIFY(!c.pause && !c.stop && c.offerLive && !c.resume);
    QVERIFY2(c.liveText.contains("linear_regression · RoPE"), qPrintable(c.liveText));
    m.endLive();
    c = m.controls(std::nullopt);  // nothing trains: the stopped run is resumed
    QVERIFY(c.resume && !c.offerLive);
    // A run another process trains: Stop asks it, Pause says whose controls it needs.
    const auto [running, runningLog] = storedRun("running", "elsewhere:42", 4);
    m.showStored("/r/c/run.h5", running, runningLog, 0);
    QCOMPARE(m.trainedElsewhereBy(), QStringLiteral("elsewhere:42"));
    c = m.controls(std::nullopt);
    QVERIFY(c.stop && !c.pause && !c.resume);
    QVERIFY(c.stopTip.contains("elsewhere:42") && c.pauseTip.contains("elsewhere:42"));
}

void TstTrainModel::logRowsJoinTheLiveRunOnce()
{
    ui::TrainModel m;
    const auto [info, log] = storedRun("running", "", 3);  // steps 0, 5, 10 read from the file
    m.showStored("/r/a/run.h5", info, log, 0);
    m.startLive(7, "/r/a/run.h5", "a", "label", "header");
    QVERIFY(!m.acceptsLog(7, 10));  // read from the file already
    QVERIFY(!m.acceptsLog(8, 15));  // another job's
    QVERIFY(m.acceptsLog(7, 15));
    for (int step = 15; step < 15 + 5 * 30; step += 5) {
        engine::LogRecord r;
        r.step = step;
        r.loss = 0.5;
        r.excessLoss = 1;
        r.pointwise = {double(step), 1.0};
        m.appendLog(r);
    }
    QCOMPARE(m.steps().size(), qsizetype(33));
    QCOMPARE(m.columns().rows(), 33);
    // The per-position curve is the mean of the last 20 rows: steps 65..160 at position 0.
    const auto [k, v] = m.pointwise();
    QCOMPARE(k, (QVector<double>{0, 1}));
    QCOMPARE(v[0], (65.0 + 160.0) / 2);
    QCOMPARE(v[1], 1.0);
    m.showStored("/r/b/run.h5", info, log, 0);  // another run: its rows only
    QVERIFY(!m.acceptsLog(7, 1000));
    QCOMPARE(m.steps().size(), qsizetype(3));
}

void TstTrainModel::lossFigureAsChosen()
{
    ui::TrainModel m;
    const auto [info, log] = storedRun("finished", "", 10);
    m.showStored("/r/run-7/run.h5", info, log, 0);
    m.setSmoothing(0);
    auto f = m.lossFigure();
    QCOMPARE(f.series.size(), size_t(2));    // raw and EMA
    QCOMPARE(f.series[1].y, f.series[0].y);  // no smoothing
    QVERIFY(f.y.log);
    QVERIFY2(f.title.rfind("run-7\ntraining loss", 0) == 0, f.title.c_str());
    m.setExcess(true);
    m.setLogScale(false);
    m.setSmoothing(0.9);
    f = m.lossFigure();
    QCOMPARE(f.y.label, std::string("excess loss"));
    QVERIFY(!f.y.log);
    QCOMPARE(f.series[0].y.front(), 2.0);
    QVERIFY(f.series[1].y.back() > f.series[0].y.back());  // the EMA lags the falling loss
}

QTEST_GUILESS_MAIN(TstTrainModel)
#include "tst_train_model.moc"
