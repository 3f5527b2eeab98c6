// `lengen sweep submit` on a real one-node Slurm (tests/slurm/cluster-up): a sweep submitted as
// a job array completes; a cell requeued while it trains resumes its checkpoint and ends
// bitwise equal to an uninterrupted run; scancel leaves every run readable; `lengen sweep cancel`
// from another process ends a running and two PENDING tasks as "cancelled"; a scheduler that
// does not answer exits 9 with a message. Skips only where slurmctld cannot start here (not
// root, packages missing), and fails instead when LENGEN_REQUIRE_SLURM is set (CI sets it).

#include <QtTest>

#include <QElapsedTimer>
#include <QProcess>
#include <QThread>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace lengen;

namespace {

using Result = test::ProcessResult;

Result run(const QString& program, const QStringList& args, int timeoutMs = 120000)
{
    return test::runProgram(program, args, timeoutMs);
}

Result lengenCli(const QStringList& args) { return run(LENGEN_CLI_PATH, args); }

QString script(const char* name)
{
    return QStringLiteral(LENGEN_SOURCE_DIR "/tests/slurm/") + name;
}

std::string tinyFile(const std::string& dir, int steps) { return test::tinyConfigFile(dir, steps); }

// Polls `sweep status` until it exits `code` (0 all done, 8 unfinished) and Slurm holds no task.
// States, not a fixed time (issue 54: on a machine at load 8-15 the requeue test ran out of
// its 300 s while the cell still trained): it waits as long as what `sweep status` says keeps
// changing (steps, stages, the queue), and gives up after `stallSeconds` without a change, or
// after 20 minutes in all (a status that changed every poll forever would otherwise run into
// ctest's timeout without saying what it saw).
bool waitForStatus(const QString& sweep, int code, int stallSeconds)
{
    QString last;
    QElapsedTimer still, total;
    still.start();
    total.start();
    for (;;) {
        if (total.elapsed() > 20 * 60 * 1000) {
            qWarning("sweep status still changing after 20 minutes:\n%s", qPrintable(last));
            return false;
        }
        const auto r = lengenCli({"sweep", "status", sweep});
        if (r.code == code && r.err.contains("0 tasks in the queue"))
            return true;
        if (r.out + r.err != last) {
            last = r.out + r.err;
            still.restart();
        } else if (still.elapsed() > stallSeconds * 1000) {
            qWarning("sweep status unchanged for %d s:\n%s", stallSeconds, qPrintable(last));
            return false;
        }
        QThread::sleep(1);
    }
}

// Up to 4 minutes: on a loaded machine Slurm may start the second task late.
bool waitForCheckpoints(const engine::SweepPaths& paths, const std::vector<std::string>& cells,
                        int atLeast)
{
    for (int i = 0; i < 2400; ++i) {
        bool all = true;
        for (const auto& cell : cells) {
            try {
                all = all && engine::readRunInfo(paths.runFile(cell)).checkpointStep >= atLeast;
            } catch (const engine::Error&) {
                all = false;
            }
        }
        if (all)
            return true;
        QThread::msleep(100);
    }
    return false;
}

}  // namespace

class TestSlurm final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void submittedSweepCompletes();
    void requeuedCellResumesBitwise();
    void scancelLeavesRunsReadable();
    void sweepCancelFromAnotherProcess();
    void deadSchedulerExitsNine();

private:
    QString m_cluster;
    bool m_up = false;
};

void TestSlurm::initTestCase()
{
    m_cluster = QString::fromStdString(test::scratchDir("slurm-cluster"));
    // A port of its own, so that a cluster someone runs on this machine is not in the way.
    qputenv("LENGEN_SLURM_PORT", QByteArray::number(20000 + (getpid() % 5000) * 2));
    // The daemons stop with this process even when a test aborts it.
    const auto up =
        run(script("cluster-up"), {m_cluster, "--stop-with", QString::number(getpid())}, 120000);
    if (up.code != 0) {
        const QString why = "Slurm cannot start here: " + (up.err + up.out).trimmed();
        if (qEnvironmentVariableIsSet("LENGEN_REQUIRE_SLURM"))
            QFAIL(qPrintable(why));
        QSKIP(qPrintable(why));
    }
    m_up = true;
    qputenv("SLURM_CONF", (m_cluster + "/slurm.conf").toUtf8());
}

void TestSlurm::cleanupTestCase()
{
    if (m_up)
        run(script("cluster-down"), {m_cluster});
}

void TestSlurm::submittedSweepCompletes()
{
    const auto dir = test::scratchDir("slurm-grid");
    const QString S = QString::fromStdString(dir + "/S");
    auto r =
        lengenCli({"sweep", "new", QString::fromStdString(tinyFile(dir, 300)), "--pe", "rope,nope",
                   "--seeds", "2", "--methods", "standard", "--prompts", "64", "--out", S});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    r = lengenCli({"sweep", "submit", S, "--dry-run"});
    QVERIFY2(r.code == 0 && r.out.contains("#SBATCH --array=0-3\n") &&
                 r.out.contains("--signal=B:USR1@120") && r.out.contains("--requeue"),
             qPrintable(r.out + r.err));
    QVERIFY(!fs::exists(dir + "/S/jobs.json"));  // a dry run submits nothing
    r = lengenCli({"sweep", "submit", S, "--max-parallel", "2"});
    QVERIFY2(r.code == 0 && r.err.contains("submitted 4 cells"), qPrintable(r.err));
    const QString job = r.out.trimmed();
    QVERIFY2(!job.isEmpty(), "sbatch's job id on stdout");
    QVERIFY(waitForStatus(S, 0, 240));
    const auto index = engine::readSweepIndex(S.toStdString());
    const engine::SweepPaths paths{S.toStdString()};
    for (const auto& cell : index.cells) {
        const auto info = engine::readRunInfo(paths.runFile(cell.name));
        QCOMPARE(info.status, std::string("finished"));
        QCOMPARE(info.totalSteps, std::int64_t(300));
        QCOMPARE(info.sweepCell, cell.name);
        std::ifstream log(paths.logFile(cell.name));
        const std::string text((std::istreambuf_iterator<char>(log)), {});
        QVERIFY2(text.find("Slurm job " + job.toStdString() + "_" + std::to_string(cell.index)) !=
                     std::string::npos,
                 text.c_str());
    }
    r = lengenCli({"sweep", "status", S, "--json"});
    QVERIFY2(r.out.count("\"eval_done\": true") == 4, qPrintable(r.out));
    // Nothing left: a second submit says so and submits nothing.
    r = lengenCli({"sweep", "submit", S});
    QVERIFY2(r.code == 0 && r.err.contains("nothing to submit"), qPrintable(r.err));
}

void TestSlurm::requeuedCellResumesBitwise()
{
    const auto dir = test::scratchDir("slurm-requeue");
    const QString S = QString::fromStdString(dir + "/S");
    const QString config = QString::fromStdString(tinyFile(dir, 20000));  // ~15 s: requeued mid-run
    auto r = lengenCli(
        {"sweep", "new", config, "--pe", "rope", "--seeds", "1", "--no-eval", "--out", S});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    r = lengenCli({"sweep", "submit", S});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QString task = r.out.trimmed() + "_0";
    const engine::SweepPaths paths{S.toStdString()};
    QVERIFY2(waitForCheckpoints(paths, {"000-rope-s1"}, 500), "the cell trained past a checkpoint");
    r = run("scontrol", {"requeue", task});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    QVERIFY(waitForStatus(S, 0, 240));
    std::ifstream log(paths.logFile("000-rope-s1"));
    const std::string text((std::istreambuf_iterator<char>(log)), {});
    QVERIFY2(text.find("(restart 1)") != std::string::npos, text.c_str());  // it ran twice
    QVERIFY2(text.find("checkpoint written") != std::string::npos, text.c_str());
    QVERIFY2(text.find("resum") != std::string::npos, text.c_str());
    // Equal to a run that was never interrupted (same seed, one thread as the array task).
    r = lengenCli({"train", config, "--seed", "1", "--threads", "1", "--out",
                   QString::fromStdString(dir + "/plain"), "-q"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const auto plain = engine::readTrainLog(r.out.trimmed().toStdString());
    const auto resumed = engine::readTrainLog(paths.runFile("000-rope-s1"));
    QCOMPARE(resumed.step, plain.step);
    QCOMPARE(resumed.loss, plain.loss);
}

void TestSlurm::scancelLeavesRunsReadable()
{
    const auto dir = test::scratchDir("slurm-cancel");
    const QString S = QString::fromStdString(dir + "/S");
    auto r = lengenCli({"sweep", "new", QString::fromStdString(tinyFile(dir, 5000000)), "--pe",
                        "rope,alibi", "--seeds", "1", "--no-eval", "--out", S});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    r = lengenCli({"sweep", "submit", S});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QString job = r.out.trimmed();
    const engine::SweepPaths paths{S.toStdString()};
    // Far more steps than the test waits for: both cells still train when scancel comes, however
    // late Slurm starts the second.
    QVERIFY2(waitForCheckpoints(paths, {"000-rope-s1", "001-alibi-s1"}, 100), "both cells trained");
    r = run("scancel", {job});
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));
    // Slurm may drop the cancelled tasks from the queue while the cells still write their
    // checkpoints: wait for both to say so.
    int stopped = 0;
    for (int i = 0; i < 60 && stopped < 2; ++i) {
        r = lengenCli({"sweep", "status", S});
        stopped = int(r.out.count(
            QRegularExpression("^\\d{3}-\\S+ +stopped ", QRegularExpression::MultilineOption)));
        if (stopped < 2)
            QThread::sleep(1);
    }
    if (stopped != 2 || r.code != 8) {  // say what each cell and Slurm did
        QString logs;
        for (const char* cell : {"000-rope-s1", "001-alibi-s1"}) {
            std::ifstream log(paths.logFile(cell));
            logs += QString::fromStdString(std::string((std::istreambuf_iterator<char>(log)), {}));
        }
        QFAIL(qPrintable(r.out + r.err + logs + run("squeue", {"-r"}).out));
    }
    for (const char* cell : {"000-rope-s1", "001-alibi-s1"}) {
        const auto info = engine::readRunInfo(paths.runFile(cell));
        QCOMPARE(info.status, std::string("cancelled"));
        QVERIFY(info.checkpointStep >= 100);
        QVERIFY(!engine::readTrainLog(paths.runFile(cell)).loss.empty());
    }
}

// Issue 39: one task runs, two wait PENDING behind --max-parallel 1; `sweep status` shows the
// scheduler's PENDING, and `lengen sweep cancel` (another process than the submitter) ends all
// three: the running cell with its checkpoint, the pending ones before they start.
void TestSlurm::sweepCancelFromAnotherProcess()
{
    const auto dir = test::scratchDir("slurm-sweep-cancel");
    const QString S = QString::fromStdString(dir + "/S");
    auto r = lengenCli({"sweep", "new", QString::fromStdString(tinyFile(dir, 5000000)), "--pe",
                        "rope,alibi,nope", "--seeds", "1", "--no-eval", "--out", S});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    r = lengenCli({"sweep", "submit", S, "--max-parallel", "1"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QString job = r.out.trimmed();
    const engine::SweepPaths paths{S.toStdString()};
    QVERIFY2(waitForCheckpoints(paths, {"000-rope-s1"}, 100), "the first cell trained");
    r = lengenCli({"sweep", "status", S, "--json"});
    QVERIFY2(r.code == 8 && r.out.count("\"scheduler_state\": \"PENDING\"") == 2 &&
                 r.out.count("\"state\": \"pending\"") == 2 &&
                 r.out.contains("\"job_id\": \"" + job + "_1\""),
             qPrintable(r.out + r.err));
    r = lengenCli({"sweep", "cancel", S, "--wait", "120"});
    QVERIFY2(r.code == 0 && r.err.contains("scancel " + job + "_0, " + job + "_1, " + job + "_2") &&
                 r.err.contains("every cancelled cell has ended"),
             qPrintable(r.err));
    QVERIFY(waitForStatus(S, 8, 120));
    r = lengenCli({"sweep", "status", S});
    QVERIFY2(r.out.count(QRegularExpression("^\\d{3}-\\S+ +cancelled ",
                                            QRegularExpression::MultilineOption)) == 3,
             qPrintable(r.out + r.err));
    const auto info = engine::readRunInfo(paths.runFile("000-rope-s1"));
    QCOMPARE(info.status, std::string("cancelled"));
    QVERIFY(info.checkpointStep >= 100);
    QVERIFY(!fs::exists(paths.runFile("002-nope-s1")));  // never started
}

void TestSlurm::deadSchedulerExitsNine()
{
    const auto dir = test::scratchDir("slurm-dead");
    const QString S = QString::fromStdString(dir + "/S");
    auto r = lengenCli(
        {"sweep", "new", QString::fromStdString(tinyFile(dir, 20)), "--no-eval", "--out", S});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    // The same cluster's config with a controller port where nothing listens.
    std::ifstream in((m_cluster + "/slurm.conf").toStdString());
    std::string conf((std::istreambuf_iterator<char>(in)), {});
    const size_t at = conf.find("SlurmctldPort=");
    QVERIFY(at != std::string::npos);
    conf.replace(at, conf.find('\n', at) - at, "SlurmctldPort=9");
    const auto dead = test::writeFile(dir, "dead.conf", conf);
    QProcess p;
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert("SLURM_CONF", QString::fromStdString(dead));
    p.setProcessEnvironment(env);
    p.start(LENGEN_CLI_PATH, {"sweep", "submit", S});
    QVERIFY(p.waitForFinished(120000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(p.exitCode() == 9, qPrintable(err));
    QVERIFY2(err.contains("sbatch failed") || err.contains("did not answer"), qPrintable(err));
    QVERIFY(!fs::exists(dir + "/S/jobs.json"));
}

QTEST_GUILESS_MAIN(TestSlurm)
#include "tst_slurm.moc"
