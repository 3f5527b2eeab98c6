// Where a sweep's cells stand, as `sweep status`, `sweep cancel`, the executors and the studio
// read them from the sweep folder: an executor that ended before starting its cells holds none
// of them, and a cell whose run file cannot be read is failed only when no process works on it.
// (tst_sweep runs sweeps through the CLI.)

#include <QProcess>
#include <QThread>

#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

#include "lengen/engine/jobs.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_run.h"
#include "sweep/job_record.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace lengen;

class TestSweepStates final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void anEndedExecutorHoldsNoCells();
    void anUnreadableRunFailsOnlyWhenNoCellWritesIt();
    void aCellRunByRunCellNamesItsProcess();
};

// An executor that returned before starting its cells (stopped at once, as the studio's Stop
// can) holds none of them, although its process lives on: the next one takes them all. It once
// counted them "queued" by the live pid, and a later Slurm submission took 1 cell of 2.
void TestSweepStates::anEndedExecutorHoldsNoCells()
{
    const auto dir = test::scratchDir("sweep-ended-executor");
    const std::string S = dir + "/S";
    engine::createSweep(test::tinySweep(S, {"rope", "nope"}, 1, 20));
    engine::LocalSweepOptions o;
    o.executable = LENGEN_CLI_PATH;
    o.jobs = 1;
    engine::RunControl control;
    control.requestCancel();  // leaves before starting any cell
    engine::SweepObserver quiet;
    const auto first = engine::makeLocalExecutor(S, o)->submit(control, quiet);
    QCOMPARE(first.taken, 2);
    const auto statuses = engine::makeLocalExecutor(S, o)->states();
    for (const auto& st : statuses) {
        QVERIFY(st.job && !st.job->scheduled);  // a local executor's
        QVERIFY2(!st.queued(), st.message.c_str());
    }
    engine::SweepRunSummary next;
    QCOMPARE(int(engine::chooseCells(statuses, false, next).size()), 2);
    QCOMPARE(next.elsewhere, 0);
}

// `sweep status` and `sweep cancel` read a cell whose run file cannot be read as failed. While
// the cell's own process is alive and at work, the file may only be between states (created,
// its writer's lock held past the readers' wait): the cell runs, and says why nothing more is
// shown. Once no process works on it, the file is damaged and the cell failed, naming it.
void TestSweepStates::anUnreadableRunFailsOnlyWhenNoCellWritesIt()
{
    const auto dir = test::scratchDir("sweep-unreadable-run");
    const std::string S = dir + "/S";
    engine::createSweep(test::tinySweep(S, {"rope"}, 1, 20));
    const auto index = engine::prepareSweep(S);
    const engine::SweepPaths paths{S};
    const auto& cell = index.cells.front().name;
    const auto runFile = paths.runFile(cell);
    fs::create_directories(fs::path(runFile).parent_path());
    std::ofstream(runFile) << "not an HDF5 file";
    engine::CellState training;
    training.stage = "train";
    training.host = engine::sweep::hostName();
    training.pid = ::getpid();
    engine::writeCellState(paths, cell, training);
    auto st = engine::sweepStatus(S, index).front();
    QCOMPARE(st.state, engine::SweepCellState::Running);
    QVERIFY2(st.message.find("not readable yet") != std::string::npos, st.message.c_str());
    const pid_t gone = ::fork();
    if (gone == 0)
        ::_exit(0);
    QVERIFY(gone > 0 && ::waitpid(gone, nullptr, 0) == gone);
    training.pid = gone;
    engine::writeCellState(paths, cell, training);
    st = engine::sweepStatus(S, index).front();
    QCOMPARE(st.state, engine::SweepCellState::Failed);
    QVERIFY2(st.message.find(runFile) != std::string::npos, st.message.c_str());
}

// Issue 70, defect 4: a cell `lengen sweep run-cell` runs (no submission records it) is held
// by that process, by name — "held by an unknown process" in the Jobs panel, HELD BY "-" in
// `lengen jobs` — and a `sweep run` beside it names whom it leaves the cell to.
void TestSweepStates::aCellRunByRunCellNamesItsProcess()
{
    const auto dir = test::scratchDir("sweep-run-cell-holder");
    const std::string S = dir + "/S";
    engine::createSweep(test::tinySweep(S, {"rope"}, 1, 5000000));
    QProcess cell;
    cell.start(LENGEN_CLI_PATH, {"sweep", "run-cell", QString::fromStdString(S), "0", "--threads",
                                 "1", "--device", "cpu", "-q"});
    QVERIFY(cell.waitForStarted());
    const engine::SweepPaths paths{S};
    const auto index = engine::readSweepIndex(S);
    bool training = false;
    for (int i = 0; i < 600 && !training; ++i) {
        QThread::msleep(100);
        try {
            training = engine::readRunInfo(paths.runFile(index.cells[0].name)).lastLoggedStep > 0;
        } catch (const engine::Error&) {
        }
    }
    QVERIFY2(training, "the cell trains");
    const std::string holder = engine::sweep::hostName() + ":" + std::to_string(cell.processId());
    QCOMPARE(engine::sweepJobStatus(S, index).at(0).holder(), holder);
    const auto jobs = engine::findJobs({dir});
    QCOMPARE(int(jobs.size()), 1);
    QCOMPARE(jobs[0].holder, holder);
    auto r = test::runLengen({"jobs", QString::fromStdString(dir)});
    QVERIFY2(r.code == 0 && r.out.contains(QString::fromStdString(holder)), qPrintable(r.out));
    r = test::runLengen({"sweep", "run", QString::fromStdString(S), "--jobs", "1"});
    QVERIFY2(r.err.contains(QString::fromStdString("1 running elsewhere (held by " + holder + ")")),
             qPrintable(r.err));
    cell.terminate();  // SIGTERM: the cell stops with its checkpoint
    QVERIFY(cell.waitForFinished(60000));
}

QTEST_GUILESS_MAIN(TestSweepStates)
#include "tst_sweep_states.moc"
