// Tags on many runs at once (issue 55), through the `lengen` executable: `lengen note RUN...`
// changes every run named, a missing run is named before any run changes, a run that refuses
// (a process trains it) is said while the others still change, and the tags survive a resume
// of each run (the resumed writer keeps the run file's notes). Issue 72: `lengen delete`,
// `archive` and `restore` move runs out of the lists and back, the same bytes, and refuse a
// run a process trains, naming it.

#include <sys/stat.h>
#include <unistd.h>

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTest>

#include <string>
#include <vector>

#include "io/h5.h"
#include "io/writer_lock.h"
#include "lengen/engine/jobs.h"
#include "lengen/engine/run_control.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_run.h"
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

QByteArray sha256Of(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly)
               ? QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256)
               : QByteArray();
}

// Whether `lengen runs FOLDER --json` lists a run in the folder `runDir`.
bool listed(const std::string& folder, const QString& runDir)
{
    const auto r = test::runLengen({"runs", QString::fromStdString(folder), "--json"});
    return r.out.contains(QFileInfo(runDir).fileName());
}

}  // namespace

class TestNotes final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void tagsOnManyRunsSurviveAResume();
    void deleteMovesToTheTrashAndRestoreIsBitForBit();
    void archiveTakesRunsOutOfTheList();
    void onlyARunsFolderMoves();
    void theUndoLineRestoresTheWholeBatch();
    void aRunLeftOpenForWritingIsNamedAndRepaired();
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

void TestNotes::deleteMovesToTheTrashAndRestoreIsBitForBit()
{
    const auto dir = test::scratchDir("runs-delete");
    const std::string runs = dir + "/runs";
    const std::string a = test::trainTiny(runs + "/a", "rope", 5, 20);
    test::evaluateSmall(a, {"standard"});
    const std::string b = stoppedRun(runs + "/b", 2);
    const QString qa = QString::fromStdString(a), qb = QString::fromStdString(b);
    const QString folderA = QFileInfo(qa).absolutePath();
    const QByteArray runHash = sha256Of(qa), analysisHash = sha256Of(folderA + "/analysis.h5");
    QVERIFY(!runHash.isEmpty() && !analysisHash.isEmpty());
    {  // a run another process trains: refused, naming it, and left where it is
        engine::io::WriterLock training(b);
        const auto r = test::runLengen({"delete", qb, "--yes"});
        QVERIFY2(r.code == 3 &&
                     r.err.contains(QString::fromStdString("trained by " + engine::thisHolder())),
                 qPrintable(r.err));
        QVERIFY(QFile::exists(qb));
    }
    // Off a terminal without --yes: nothing moves; the message says how much would.
    auto r = test::runLengen({"delete", qa});
    QVERIFY2(r.code == 64 && r.err.contains("moves 1 run (") && r.err.contains("--yes"),
             qPrintable(r.err));
    QVERIFY(QFile::exists(qa));
    QVERIFY(listed(runs, folderA));
    r = test::runLengen({"delete", qa, "--yes"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QString moved = r.out.trimmed();
    QVERIFY2(moved.contains("/.lengen-trash/") && QFile::exists(moved + "/run.h5"),
             qPrintable(moved));
    QVERIFY(!QFile::exists(folderA));
    QVERIFY(!listed(runs, folderA));  // out of `lengen runs` (and the Runs list: scanFolder)
    // Undo: the batch the message names puts it back, the same bytes.
    const QString batch = QFileInfo(moved).absolutePath();
    QVERIFY2(r.err.contains("lengen restore " + batch), qPrintable(r.err));
    r = test::runLengen({"restore", batch});
    QVERIFY2(r.code == 0 && r.out.trimmed() == folderA, qPrintable(r.out + r.err));
    QCOMPARE(sha256Of(qa), runHash);
    QCOMPARE(sha256Of(folderA + "/analysis.h5"), analysisHash);
    QVERIFY(!QFileInfo::exists(batch));
    // The trash, empty now, goes too (an empty .lengen-trash/ stayed beside the runs).
    QVERIFY(!QFileInfo::exists(QFileInfo(batch).absolutePath()));
    QVERIFY(listed(runs, folderA));
    // Something already at the old place: restore refuses (exit 4) and moves nothing.
    r = test::runLengen({"delete", qa, "-y"});
    QCOMPARE(r.code, 0);
    const QString again = r.out.trimmed();
    QVERIFY(QDir().mkpath(folderA));
    r = test::runLengen({"restore", again});
    QVERIFY2(r.code == 4 && r.err.contains("exists"), qPrintable(r.err));
    QVERIFY(QFile::exists(again + "/run.h5"));
    // The trash folder itself is no batch.
    QCOMPARE(test::runLengen({"restore", QFileInfo(again).absolutePath().section('/', 0, -2)}).code,
             64);
}

void TestNotes::archiveTakesRunsOutOfTheList()
{
    const auto dir = test::scratchDir("runs-archive");
    const std::string runs = dir + "/runs";
    const QString a = QString::fromStdString(stoppedRun(runs, 3));
    const QString folder = QFileInfo(a).absolutePath();
    auto r = test::runLengen({"archive", folder, "--yes"});
    QVERIFY2(r.code == 0 &&
                 r.out.trimmed().endsWith("/.lengen-archive/" + QFileInfo(folder).fileName()),
             qPrintable(r.out + r.err));
    QVERIFY(!listed(runs, folder));
    // `lengen runs` on the archive itself lists it.
    QVERIFY(listed(QFileInfo(r.out.trimmed()).absolutePath().toStdString(), folder));
    const QString archive = QFileInfo(r.out.trimmed()).absolutePath();
    r = test::runLengen({"restore", r.out.trimmed()});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(QFile::exists(a));
    QVERIFY(!QFileInfo::exists(archive));  // emptied: gone
    QVERIFY(listed(runs, folder));
    QCOMPARE(test::runLengen({"restore", folder}).code, 64);  // not in a trash or an archive
    // A sweep's cell is the sweep's: refused, and the cell stays.
    engine::createSweep(test::tinySweep(dir + "/S", {"rope"}, 1, 5));
    const engine::SweepPaths paths{dir + "/S"};
    const QString cell =
        QString::fromStdString(paths.cellDir(engine::readSweepIndex(dir + "/S").cells[0].name));
    QCOMPARE(test::runLengen({"sweep", "run-cell", QString::fromStdString(dir + "/S"), "0", "-q",
                              "--threads", "1"})
                 .code,
             0);
    r = test::runLengen({"delete", cell, "--yes"});
    QVERIFY2(r.code == 3 && r.err.contains("a cell of the sweep"), qPrintable(r.err));
    QVERIFY(QFileInfo::exists(cell + "/config.yaml"));
}

// Issue 81 items 1-3 and 11: what is not a run's folder is refused (exit 3, naming it and what
// it is) before anything moves, absolute or relative: a file beside a run (its folder moved
// whole, the run with it), a FIFO, a device, symbolic links to a run.h5 or a run's folder (only
// the link moved, "moved 1 run" said), a folder whose run.h5 is text or a FIFO, another HDF5
// file. Nothing is created beside them; the real run stays listed. A damaged run.h5 (HDF5 that
// does not open) is still a run that delete clears away.
void TestNotes::onlyARunsFolderMoves()
{
    const auto dir = test::scratchDir("not-a-run");
    const std::string project = dir + "/P/project";
    const QString run = QString::fromStdString(stoppedRun(project, 5));
    const QString runDir = QFileInfo(run).absolutePath();
    const QString p = QString::fromStdString(project);
    test::writeFile(project, "notes.txt", "x\n");
    QVERIFY(::mkfifo((project + "/fifo").c_str(), 0600) == 0);
    QVERIFY(QFile::link(run, p + "/link-to-run.h5"));
    QVERIFY(QFile::link(runDir, p + "/link-to-run"));
    test::writeFile(project + "/textrun", "run.h5", "not a run\n");
    QVERIFY(QDir().mkpath(p + "/fiforun"));
    QVERIFY(::mkfifo((project + "/fiforun/run.h5").c_str(), 0600) == 0);
    QVERIFY(QDir().mkpath(p + "/empty"));
    struct Case {
        QString path, says;
    };
    const std::vector<Case> cases = {
        {p + "/notes.txt", "not an HDF5 file"},
        {p + "/fifo", "a FIFO"},
        {p + "/link-to-run.h5", "symbolic link"},
        {p + "/link-to-run", "symbolic link"},
        {p + "/textrun", "not an HDF5 file"},
        {p + "/textrun/run.h5", "not an HDF5 file"},
        {p + "/fiforun", "a FIFO"},
        {p + "/empty", "holds no run"},
        {p + "/foreign.h5", "not a LenGen run"},
        {"/dev/zero", "a device"},
        {p + "/nothing-here", "no such file"},
    };
    // Another program's HDF5 file, and a second run file under another name.
    engine::io::createFile(project + "/foreign.h5");
    QVERIFY(QFile::copy(run, runDir + "/copy.h5"));
    for (const auto& verb : {"delete", "archive"})
        for (const auto& c : cases) {
            const auto r = test::runLengen({verb, c.path, "--yes"});
            QVERIFY2(r.code == 3 && r.err.contains(c.says) &&
                         r.err.contains(QFileInfo(c.path).fileName()),
                     qPrintable(QString(verb) + " " + c.path + ": " + QString::number(r.code) +
                                " " + r.err));
        }
    // Relative paths: the same refusals, no "internal error".
    const QString was = QDir::currentPath();
    QVERIFY(QDir::setCurrent(p));
    for (const auto& name : {"notes.txt", "fifo", "link-to-run.h5"})
        for (const auto& verb : {"delete", "archive"}) {
            const auto r = test::runLengen({verb, name, "--yes"});
            QVERIFY2(r.code == 3 && !r.err.contains("internal"), qPrintable(r.err));
        }
    auto r = test::runLengen({"restore", ""});
    QVERIFY2(r.code == 64 && !r.err.contains("internal"), qPrintable(r.err));
    r = test::runLengen({"delete", "", "--yes"});
    QVERIFY2(r.code == 64 && !r.err.contains("internal"), qPrintable(r.err));
    QVERIFY(QDir::setCurrent(was));
    // Nothing moved, nothing made beside them.
    QVERIFY(QFile::exists(run));
    QVERIFY(!QFileInfo::exists(QString::fromStdString(dir) + "/P/.lengen-trash"));
    QVERIFY(!QFileInfo::exists(p + "/.lengen-trash") && !QFileInfo::exists(p + "/.lengen-archive"));
    QVERIFY(!QFileInfo::exists("/.lengen-trash") && !QFileInfo::exists("/dev/.lengen-trash"));
    QVERIFY(listed(project, runDir));
    // A run file under another name names its folder when it opens as a run.
    r = test::runLengen({"archive", runDir + "/copy.h5", "--yes"});
    QVERIFY2(r.code == 0 && r.err.contains("moved 1 run"), qPrintable(r.err));
    r = test::runLengen({"restore", r.out.trimmed()});
    QVERIFY2(r.code == 0 && QFile::exists(run), qPrintable(r.err));
    {  // item 11: a notes edit holds it: said as one, not as a training
        engine::io::WriterLock editing(run.toStdString(), engine::io::LockRole::Notes);
        r = test::runLengen({"delete", runDir, "--yes"});
        QVERIFY2(r.code == 3 && r.err.contains("notes are being edited by " +
                                               QString::fromStdString(engine::thisHolder())),
                 qPrintable(r.err));
    }
    // A damaged run.h5 (truncated: HDF5's signature, no longer opens) is cleared away.
    QFile damaged(run);
    QVERIFY(damaged.open(QIODevice::ReadWrite) && damaged.resize(4096));
    damaged.close();
    r = test::runLengen({"delete", runDir, "--yes"});
    QVERIFY2(r.code == 0 && r.err.contains("moved 1 run"), qPrintable(r.err));
    QVERIFY(!QFileInfo::exists(runDir));
    QVERIFY(QFile::exists(p + "/notes.txt"));  // the folder around it stays
}

// Issue 81 item 4: the undo line a removal prints is one command that puts the whole batch
// back: three archived runs, and two runs of two folders deleted at once.
void TestNotes::theUndoLineRestoresTheWholeBatch()
{
    const auto dir = test::scratchDir("undo-batch");
    std::vector<QString> runs;
    for (int i = 0; i < 3; ++i)
        runs.push_back(
            QFileInfo(QString::fromStdString(stoppedRun(dir + "/runs", 10 + i))).absolutePath());
    const QString other =
        QFileInfo(QString::fromStdString(stoppedRun(dir + "/other runs", 20))).absolutePath();
    for (const bool trash : {false, true}) {
        QStringList args = {trash ? "delete" : "archive"};
        for (const auto& r : runs)
            args << r;
        if (trash)
            args << other;
        args << "--yes";
        const auto r = test::runLengen(args);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const int at = r.err.indexOf("lengen restore ");
        QVERIFY2(at >= 0, qPrintable(r.err));
        // The line as a shell runs it (the folder with a space is quoted).
        const QString line = r.err.mid(at).trimmed().replace(
            "lengen restore", QString("'%1' restore").arg(LENGEN_CLI_PATH));
        const auto undo = test::runProgram("/bin/sh", {"-c", line});
        QVERIFY2(undo.code == 0, qPrintable(line + ": " + undo.err));
        for (const auto& run : runs)
            QVERIFY2(QFile::exists(run + "/run.h5"), qPrintable(run));
        QVERIFY(QFile::exists(other + "/run.h5"));
    }
}

// Issue 81 item 10: a training killed between opening its run for writing and the switch to
// SWMR left run.h5 flagged "open for writing": `lengen info` and `train --resume` exited 3 with
// HDF5's "file is not already open for SWMR writing". The file is made here as such a kill
// leaves it (a copy taken while this process holds the run open for writing): the message says
// what happened and what repairs it, and resume repairs it.
void TestNotes::aRunLeftOpenForWritingIsNamedAndRepaired()
{
    const auto dir = test::scratchDir("left-open");
    const QString run = QString::fromStdString(stoppedRun(dir + "/a", 31));
    const QString copy = QString::fromStdString(dir) + "/b/run.h5";
    QVERIFY(QDir().mkpath(QFileInfo(copy).absolutePath()));
    {
        const auto open = engine::io::openFile(run.toStdString(), engine::io::OpenMode::ReadWrite);
        QVERIFY(QFile::copy(run, copy));
    }
    auto r = test::runLengen({"info", copy});
    QVERIFY2(r.code == 3 && r.err.contains("left open for writing by a training killed") &&
                 r.err.contains("--resume"),
             qPrintable(r.err));
    r = test::runLengen({"train", "--resume", copy, "--threads", "1", "-q"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    r = test::runLengen({"info", copy});
    QVERIFY2(r.code == 0 && r.out.contains("finished"), qPrintable(r.out + r.err));
}

QTEST_GUILESS_MAIN(TestNotes)
#include "tst_notes.moc"
