// Tags on many runs at once (issue 55), through the `lengen` executable: `lengen note RUN...`
// changes every run named, a missing run is named before any run changes, a run that refuses
// (a process trains it) is said while the others still change, and the tags survive a resume
// of each run (the resumed writer keeps the run file's notes).

#include <QTest>

#include <string>
#include <vector>

#include "lengen/engine/run_control.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/trainer.h"
#include "test_support.h"

using namespace lengen;

namespace {

struct Quiet final : engine::TrainObserver {};

// A tiny run stopped before its first step: resumable, as a run stopped from the studio is.
std::string stoppedRun(const std::string& dir, std::uint64_t seed)
{
    engine::TrainOptions o;
    o.outDir = dir;
    o.seed = seed;
    o.device = "cpu";
    o.threads = 1;
    o.maxSteps = 12;
    engine::RunControl control;
    control.requestCancel();
    Quiet quiet;
    return engine::train(test::loadOne(test::tinyConfig()), o, control, quiet).runFile;
}

std::vector<std::string> tagsOf(const std::string& run) { return engine::readRunInfo(run).tags; }

}  // namespace

class TestNotes final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void tagsOnManyRunsSurviveAResume();
};

void TestNotes::tagsOnManyRunsSurviveAResume()
{
    const auto dir = test::scratchDir("notes-bulk");
    const std::string a = stoppedRun(dir, 1), b = stoppedRun(dir, 2);
    const QString qa = QString::fromStdString(a), qb = QString::fromStdString(b);
    // The option before the runs: one value each time, the runs stay runs.
    auto r = test::runLengen({"note", "--add-tag", "bulk", qa, qb, "--add-tag", "lr-sweep"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(tagsOf(a), (std::vector<std::string>{"bulk", "lr-sweep"}));
    QCOMPARE(tagsOf(b), (std::vector<std::string>{"bulk", "lr-sweep"}));
    // Adding a tag a run has already leaves one copy; removing works on every run.
    QCOMPARE(
        test::runLengen({"note", qa, qb, "--add-tag", "bulk", "--remove-tag", "lr-sweep"}).code, 0);
    QCOMPARE(tagsOf(a), std::vector<std::string>{"bulk"});
    QCOMPARE(tagsOf(b), std::vector<std::string>{"bulk"});
    // A missing run: exit 3 naming it, and no run changed.
    r = test::runLengen(
        {"note", qa, QString::fromStdString(dir + "/nowhere"), "--add-tag", "late"});
    QVERIFY2(r.code == 3 && r.err.contains("nowhere"), qPrintable(r.err));
    QCOMPARE(tagsOf(a), std::vector<std::string>{"bulk"});
    // Printing several runs names each.
    r = test::runLengen({"note", qa, qb});
    QVERIFY2(r.code == 0 && r.out.contains(qa) && r.out.contains(qb) &&
                 r.out.count("tags   bulk") == 2,
             qPrintable(r.out));
    // Each run resumed to its end: the tags are still there.
    for (const auto& run : {a, b}) {
        engine::TrainOptions o;
        o.device = "cpu";
        o.threads = 1;
        engine::RunControl control;
        Quiet quiet;
        const auto done = engine::resume(run, o, control, quiet);
        QCOMPARE(done.stepsDone, std::int64_t(12));
        QCOMPARE(tagsOf(run), std::vector<std::string>{"bulk"});
    }
}

QTEST_GUILESS_MAIN(TestNotes)
#include "tst_notes.moc"
