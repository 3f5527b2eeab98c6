// Several cells per device (issue 44): `sweep run` spreads its cells over the devices it is
// given, K at a time on each, every new cell on the least busy one; a private MPS daemon starts
// before the first cell and quits after the last when asked; --device lists resolve to GPUs
// that exist or are refused (exit 2/64) before anything runs. The executor runs a stand-in for
// `lengen sweep run-cell` that records its cell, device, start and end, so the bookkeeping is
// checked here without a GPU; tst_sweep's interrupted sweep trains real cells through the
// option's CPU path and resumes one of them alone.

#include <QFile>
#include <QProcess>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "lengen/engine/core_budget.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/jobs.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_run.h"
#include "lengen/engine/trainer.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace lengen;

namespace {

struct Line {
    std::string what, cell, device, pipe;
    long long ns = 0;
};

// The stand-in's lines: "start INDEX DEVICE NS PIPE" and "end INDEX DEVICE NS".
std::vector<Line> readLines(const std::string& file)
{
    std::vector<Line> lines;
    std::ifstream in(file);
    std::string text;
    while (std::getline(in, text)) {
        std::istringstream words(text);
        Line l;
        words >> l.what >> l.cell >> l.device >> l.ns >> l.pipe;
        lines.push_back(l);
    }
    return lines;
}

// A shell script dir/name, executable.
std::string script(const std::string& dir, const std::string& name, const std::string& text)
{
    const auto path = test::writeFile(dir, name, "#!/bin/sh\n" + text);
    fs::permissions(path, fs::perms::owner_all);
    return path;
}

// A stand-in for `lengen sweep run-cell DIR INDEX --threads T --device D` that appends its
// start and end to `log`, running `seconds` in between, and before it waits (5 s at most) until
// `together` cells have started, so that the first ones overlap however slowly they start.
std::string fakeCell(const std::string& dir, const std::string& log, double seconds,
                     int together = 1)
{
    return script(dir, "cell.sh",
                  "echo \"start $4 $8 $(date +%s%N) ${CUDA_MPS_PIPE_DIRECTORY:-none}\" >> " + log +
                      "\n"
                      "n=0; while [ \"$(grep -c ^start " +
                      log + ")\" -lt " + std::to_string(together) +
                      " ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done\n"
                      "sleep " +
                      std::to_string(seconds) +
                      "\n"
                      "echo \"end $4 $8 $(date +%s%N)\" >> " +
                      log + "\n");
}

struct Messages final : engine::SweepObserver {
    std::string all;
    void onMessage(const std::string& line) override { all += line + "\n"; }
};

}  // namespace

class TestSweepDevices final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void cellsShareDevicesKAtATime();
    void mpsDaemonBracketsTheCells();
    void refusedBeforeAnythingRuns();
    void quietSaysOnlyWhatFailed();
    void coreBudgetServesWaitingJobsFirst();
    void cellsWaitingForACoreAreCounted();
    void everyKindSaysItsResultInItsUnits();
};

void TestSweepDevices::cellsShareDevicesKAtATime()
{
    const auto dir = test::scratchDir("sweep-devices");
    const std::string S = dir + "/S", log = dir + "/cells.log";
    engine::createSweep(test::tinySweep(S, {"rope", "nope", "alibi"}, 2, 20));  // 6 cells
    engine::LocalSweepOptions o;
    o.executable = fakeCell(dir, log, 0.3, 4);
    o.devices = {"cuda:0", "cuda:1"};
    o.cellsPerDevice = 2;
    o.threadsPerJob = 1;
    engine::RunControl control;
    Messages messages;
    const auto summary = engine::makeLocalExecutor(S, o)->submit(control, messages);
    QCOMPARE(summary.finished, 6);
    QVERIFY2(messages.all.find("4 at a time (2 per device) on cuda:0, cuda:1") != std::string::npos,
             messages.all.c_str());
    QVERIFY2(messages.all.find("started on cuda:1") != std::string::npos, messages.all.c_str());

    auto lines = readLines(log);
    QCOMPARE(int(lines.size()), 12);
    std::map<std::string, std::string> deviceOf;
    for (const auto& l : lines)
        if (l.what == "start")
            QVERIFY2(deviceOf.emplace(l.cell, l.device).second,
                     ("cell " + l.cell + " ran twice").c_str());
    QCOMPARE(int(deviceOf.size()), 6);
    // The first four start together, alternating: the least busy device, the first of equals.
    QCOMPARE(deviceOf["0"], std::string("cuda:0"));
    QCOMPARE(deviceOf["1"], std::string("cuda:1"));
    QCOMPARE(deviceOf["2"], std::string("cuda:0"));
    QCOMPARE(deviceOf["3"], std::string("cuda:1"));
    // Never more than two at once on a device, four in all, and four at some moment.
    std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {  // ends first on ties
        return std::make_pair(a.ns, a.what == "start") < std::make_pair(b.ns, b.what == "start");
    });
    std::map<std::string, int> now;
    int total = 0, most = 0;
    for (const auto& l : lines) {
        const int step = l.what == "start" ? 1 : -1;
        now[l.device] += step;
        total += step;
        most = std::max(most, total);
        QVERIFY2(now[l.device] <= 2, ("three at once on " + l.device).c_str());
    }
    QCOMPARE(most, 4);
    QCOMPARE(total, 0);
}

void TestSweepDevices::mpsDaemonBracketsTheCells()
{
    const auto dir = test::scratchDir("sweep-mps");
    const std::string S = dir + "/S", log = dir + "/cells.log";
    engine::createSweep(test::tinySweep(S, {"rope"}, 2, 20));
    auto control = [&](int startCode) {
        return script(dir, "mps-control",
                      "if [ \"$1\" = -d ]; then echo \"daemon - - $(date +%s%N) "
                      "$CUDA_MPS_PIPE_DIRECTORY\" >> " +
                          log + "; exit " + std::to_string(startCode) +
                          "; fi\n"
                          "read command; echo \"$command - - $(date +%s%N)\" >> " +
                          log + "\n");
    };
    engine::LocalSweepOptions o;
    o.executable = fakeCell(dir, log, 0.2);
    o.devices = {"cuda:0"};
    o.cellsPerDevice = 2;
    o.mps = true;
    o.mpsControl = control(0);
    engine::RunControl run;
    Messages messages;
    QCOMPARE(engine::makeLocalExecutor(S, o)->submit(run, messages).finished, 2);
    QVERIFY2(messages.all.find("MPS:") != std::string::npos, messages.all.c_str());
    const auto lines = readLines(log);
    QCOMPARE(int(lines.size()), 6);  // daemon, 2 x (start, end), quit
    QCOMPARE(lines.front().what, std::string("daemon"));
    QCOMPARE(lines.back().what, std::string("quit"));
    const std::string pipe = lines.front().pipe;
    QVERIFY(pipe.rfind("/tmp/lengen-mps-", 0) == 0);
    for (const auto& l : lines)
        if (l.what == "start")
            QCOMPARE(l.pipe, pipe);  // the cells found the daemon
    QVERIFY(!std::getenv("CUDA_MPS_PIPE_DIRECTORY"));
    QVERIFY(!fs::exists(pipe));

    // A daemon that will not start: a clear error, no cell runs, nothing left behind.
    fs::remove(log);
    engine::createSweep(test::tinySweep(dir + "/T", {"rope"}, 1, 20));
    o.mpsControl = control(3);
    try {
        engine::makeLocalExecutor(dir + "/T", o)->submit(run, messages);
        QFAIL("a daemon that does not start is an error");
    } catch (const engine::Error& e) {
        QCOMPARE(e.kind(), engine::ErrorKind::Runtime);
        QVERIFY2(std::string(e.what()).find("--mps: " + o.mpsControl + " -d exited 3") !=
                     std::string::npos,
                 e.what());
    }
    QCOMPARE(int(readLines(log).size()), 1);  // the daemon's try only
    QVERIFY(!std::getenv("CUDA_MPS_PIPE_DIRECTORY"));
}

void TestSweepDevices::refusedBeforeAnythingRuns()
{
    const auto dir = test::scratchDir("sweep-device-refusals");
    const std::string S = dir + "/S";
    engine::createSweep(test::tinySweep(S, {"rope"}, 1, 20));
    engine::LocalSweepOptions o;
    o.executable = LENGEN_CLI_PATH;
    o.jobs = 2;
    o.cellsPerDevice = 2;
    try {
        engine::makeLocalExecutor(S, o);
        QFAIL("--jobs with --cells-per-device");
    } catch (const engine::Error& e) {
        QCOMPARE(e.kind(), engine::ErrorKind::Usage);
    }
    o.jobs = 0;
    o.devices = {"cpu"};
    o.mps = true;
    try {
        engine::makeLocalExecutor(S, o);
        QFAIL("--mps on the CPU");
    } catch (const engine::Error& e) {
        QCOMPARE(e.kind(), engine::ErrorKind::Config);
        QVERIFY2(std::string(e.what()).find(
                     "--mps shares GPUs between cells, and cpu is not one") != std::string::npos,
                 e.what());
    }
    QCOMPARE(engine::resolveSweepDevices("cpu"), std::vector<std::string>{"cpu"});

    const QString s = QString::fromStdString(S);
    auto r = test::runLengen({"sweep", "run", s, "--jobs", "2", "--cells-per-device", "2"});
    QVERIFY2(r.code == 64 && r.err.contains("give one of them"), qPrintable(r.err));
    r = test::runLengen({"sweep", "run", s, "--device", "cpu,cpu"});
    QVERIFY2(r.code == 64 && r.err.contains("names cpu twice"), qPrintable(r.err));
    r = test::runLengen({"sweep", "run", s, "--device", "cpu,"});
    QVERIFY2(r.code == 64 && r.err.contains("an empty name"), qPrintable(r.err));
    r = test::runLengen({"sweep", "run", s, "--device", "cpu", "--mps"});
    QVERIFY2(r.code == 2 && r.err.contains("--mps"), qPrintable(r.err));
    if (engine::resolveSweepDevices("") == std::vector<std::string>{""}) {  // no GPU here (CI)
        r = test::runLengen({"sweep", "run", s, "--device", "cuda", "--cells-per-device", "2"});
        QVERIFY2(r.code == 2 && r.err.contains("no CUDA GPU is usable"), qPrintable(r.err));
    }
    QVERIFY(
        !fs::exists(engine::SweepPaths{S}.runFile(engine::readSweepIndex(S).cells.front().name)));
}

// `sweep run -q` prints a cell that failed and the closing counts, nothing else (it printed the
// opening line too, whose "0 failed before" matched). Cells are stand-ins through $LENGEN_CLI.
void TestSweepDevices::quietSaysOnlyWhatFailed()
{
    const auto dir = test::scratchDir("sweep-quiet");
    const std::string S = dir + "/S";
    engine::createSweep(test::tinySweep(S, {"rope"}, 3, 20));
    const auto cell = script(
        dir, "cell.sh",
        "if [ \"$4\" = 1 ]; then echo 'lengen: error: the stand-in fails' >&2; exit 5; fi\n");
    qputenv("LENGEN_CLI", QByteArray::fromStdString(cell));
    auto r = test::runLengen({"sweep", "run", QString::fromStdString(S), "--jobs", "1", "-q"});
    qunsetenv("LENGEN_CLI");
    QCOMPARE(r.code, 5);
    const auto lines = r.err.trimmed().split('\n');
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines[0].startsWith("001-rope-s2 failed (exit 5): error: the stand-in fails"),
             qPrintable(r.err));
    QVERIFY2(lines[1].contains("2 cells finished now") && lines[1].contains("1 failed"),
             qPrintable(r.err));
}

// Issue 53: the cores the studio's jobs and a sweep's cells share. A cell takes what is free
// (up to its threads); cores queued jobs wait for are not free to a cell, so a freed core goes
// to the waiting job, not back to the sweep that gave it; a job wider than the limit runs alone.
void TestSweepDevices::coreBudgetServesWaitingJobsFirst()
{
    engine::CoreBudget b(2);
    QCOMPARE(b.tryTakeUpTo(4), 2);  // a cell that wants 4 threads runs with 2
    QCOMPARE(b.tryTake(1), 0);      // none free
    b.give(1);
    b.setWaiting(1);                // a queued training waits for it
    QCOMPARE(b.tryTakeUpTo(1), 0);  // the sweep's next cell does not take it
    QCOMPARE(b.tryTake(1), 1);      // the training does
    b.setWaiting(0);
    QCOMPARE(b.inUse(), 2);
    b.give(2);
    QCOMPARE(b.tryTake(5), 2);  // wider than the limit: all of it, alone
    int freed = 0;
    b.setOnFreed([&] { ++freed; });
    b.give(2);
    QCOMPARE(freed, 1);
    QCOMPARE(b.inUse(), 0);
}

// Issue 53: the cells of a local sweep that wait for a core are counted on the budget the
// studio shows ("· 2 waiting for one"), and taken back as they start and when the sweep ends.
void TestSweepDevices::cellsWaitingForACoreAreCounted()
{
    const auto dir = test::scratchDir("sweep-cells-waiting");
    const std::string S = dir + "/S", log = dir + "/cells.log";
    engine::createSweep(test::tinySweep(S, {"rope", "nope"}, 1, 20));
    engine::LocalSweepOptions o;
    o.executable = fakeCell(dir, log, 0.5);
    o.jobs = 2;
    o.threadsPerJob = 1;
    o.cores = std::make_shared<engine::CoreBudget>(1);
    QCOMPARE(o.cores->tryTake(1), 1);  // the studio's training holds the only core
    engine::RunControl control;
    Messages messages;
    engine::SweepRunSummary summary;
    std::thread sweep(
        [&] { summary = engine::makeLocalExecutor(S, o)->submit(control, messages); });
    QTRY_COMPARE_WITH_TIMEOUT(o.cores->cellsWaiting(), 2, 10000);
    o.cores->give(1);  // the training ends: one cell runs at a time, the other waits
    QTRY_COMPARE_WITH_TIMEOUT(o.cores->cellsWaiting(), 1, 10000);
    sweep.join();
    QCOMPARE(summary.finished, 2);
    QCOMPARE(o.cores->cellsWaiting(), 0);
    QCOMPARE(o.cores->inUse(), 0);
}

// Issue 53: one job-kind table, and a typed result each kind counts in its own units; what a job
// said in its own words replaces the count.
void TestSweepDevices::everyKindSaysItsResultInItsUnits()
{
    using engine::JobKindId;
    std::set<std::string> names;
    for (const auto& row : engine::jobKindTable()) {
        QVERIFY(names.insert(row.name).second);
        QCOMPARE(engine::jobKindNamed(row.name), std::optional<JobKindId>(row.kind));
        QCOMPARE(&engine::jobKindRow(row.kind), &row);
    }
    QCOMPARE(names.size(), size_t(7));
    QVERIFY(!engine::jobKindRow(JobKindId::Sweep).cpuHeavy);  // its cells are the heavy work
    QVERIFY(engine::jobKindRow(JobKindId::SweepCell).cpuHeavy);
    engine::JobResult r;
    r.done = 1200;
    r.finalLoss = 0.03125;
    QCOMPARE(engine::jobResultText(JobKindId::Training, r),
             std::string("1200 steps, final loss 0.03125"));
    QCOMPARE(engine::jobResultText(JobKindId::Training, r, engine::JobState::Cancelled),
             std::string("stopped after 1200 steps, last logged loss 0.03125"));
    r = {};
    r.done = 1;
    QCOMPARE(engine::jobResultText(JobKindId::Evaluation, r), std::string("1 method computed"));
    QCOMPARE(engine::jobResultText(JobKindId::Export, r), std::string("1 file written"));
    QCOMPARE(engine::jobResultText(JobKindId::Probe, r, engine::JobState::Cancelled),
             std::string("stopped after 1 probe computed"));
    r = {};
    r.done = 3;
    r.failed = 1;
    QCOMPARE(engine::jobResultText(JobKindId::Sweep, r), std::string("3 cells ended, 1 failed"));
    // Progress in the row's units: a sweep counts cells ended, an evaluation its methods.
    QCOMPARE(engine::jobProgressText(JobKindId::Sweep, "", 0, 1, 2, 8),
             std::string("2 of 8 cells ended"));
    // Where in the stage, so a long one shows it is alive (issue 80, defect 22): its units,
    // and its part where it has parts.
    QCOMPARE(engine::jobProgressText(JobKindId::Evaluation, "ood_length", 1, 3, 5, 10),
             std::string("ood_length (method 2 of 3): 5 of 10"));
    QCOMPARE(engine::jobProgressText(JobKindId::Probe, "lost_in_mid", 0, 1, 5, 10),
             std::string("lost_in_mid: 5 of 10"));
    QCOMPARE(engine::jobProgressText(JobKindId::Probe, "duplicated", 1, 3, 14, 25,
                                     "instruction position"),
             std::string("duplicated (probe 2 of 3): instruction position, 14 of 25"));
    QCOMPARE(engine::jobProgressText(JobKindId::Probe, "attention", 0, 3, 0, 1),
             std::string("attention (probe 1 of 3)"));
    r.said = "took no cell";
    QCOMPARE(engine::jobResultText(JobKindId::Sweep, r), std::string("took no cell"));
    QCOMPARE(std::string(engine::jobStateName(engine::JobState::Queued, JobKindId::SweepCell)),
             std::string("pending"));
    QCOMPARE(std::string(engine::jobStateName(engine::JobState::Cancelled)),
             std::string("stopped"));
}

QTEST_GUILESS_MAIN(TestSweepDevices)
#include "tst_sweep_devices.moc"
