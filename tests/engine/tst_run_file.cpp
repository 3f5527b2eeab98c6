// run.h5 (docs/run-format.md): checkpoint round trip is bitwise, slots alternate so the
// previous checkpoint survives a torn write, the log is truncated on reopen, and missing,
// damaged or foreign files give Error(RunFile) naming the path.

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "io/h5.h"
#include "io/run_store.h"
#include "lengen/engine/run_control.h"
#include "lengen/engine/run_file.h"
#include "test_support.h"
#include "train/train_loop.h"

using namespace lengen::engine;
namespace fs = std::filesystem;

namespace {

struct Fixture {
    training::TrainSession session;
    std::string path;
};

// A run being written (the writer open). `beforeCreate` sees run.h5's path first, with its
// folder made: what lies beside the file before any writer does.
std::unique_ptr<Fixture> makeRun(const std::string& tag,
                                 const std::function<void(const std::string&)>& beforeCreate = {})
{
    auto f = std::make_unique<Fixture>();
    auto config = lengen::test::loadOne(lengen::test::tinyConfig("conjunction", "alibi"));
    config.seed = 11;
    training::setupSession(f->session, config, 11, "cpu");
    f->path = lengen::test::scratchDir(tag) + "/run.h5";
    io::RunHeader h;
    h.runId = "testrun1";
    h.configYaml = toYaml(config);
    h.task = config.task.name;
    h.positionEncoding = config.peDisplayName();
    h.backbone = config.model.family;
    h.device = "cpu";
    h.seed = 11;
    h.totalSteps = 20;
    h.pointwiseWidth = config.trainPoints();
    h.positionConstants = f->session.model->positionConstants();
    std::vector<io::ParameterShape> shapes;
    for (const auto& [name, p] : f->session.optimizer->params())
        shapes.push_back({name, p.sizes().vec()});
    if (beforeCreate)
        beforeCreate(f->path);
    f->session.writer =
        io::RunWriter::create(f->path, h, shapes, f->session.gen.get_state().numel());
    return f;
}

void expectRunFileError(const std::string& path, const char* needle)
{
    try {
        readRunInfo(path);
        QFAIL("expected Error(RunFile)");
    } catch (const Error& e) {
        QCOMPARE(e.kind(), ErrorKind::RunFile);
        const QString msg = e.what();
        QVERIFY2(msg.contains(needle) && msg.contains(QString::fromStdString(path)), e.what());
    }
}

}  // namespace

class TestRunFile final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }
    void checkpointRoundTripIsBitwise();
    void slotsAlternate();
    void reopenTruncatesTheLog();
    void aRunFromBeforeGradNormGainsTheColumn();
    void notesWaitUntilNoProcessWrites();
    void aStopRequestedBeforeTheWatchHolds();
    void aReaderWaitsOutAWritersOpening();
    void infoDescribesTheRun();
    void infoAlignsLongConstantNames();
    void badFilesGiveClearErrors();
    void stringsUseNoGlobalHeap();
    void damagedGlobalHeapIsRefused();
    void hdf5PrintsNoErrorStackOnAnyThread();
};

void TestRunFile::checkpointRoundTripIsBitwise()
{
    auto f = makeRun("roundtrip");
    // Make the optimiser state non-trivial: one real step.
    auto& s = f->session;
    auto fn = s.sampler->sample(s.gen);
    auto xs = fn->sampleXs(7, 3, s.gen);
    auto ys = fn->evaluate(xs);
    s.sampler->loss(s.model->forward(xs, ys).predictions, ys).backward();
    s.optimizer->step(1e-3);
    s.stepsDone = 1;
    const auto saved = training::captureCheckpoint(s, 1.25);
    s.writer->writeCheckpoint(saved);
    s.writer.reset();

    const auto loaded = io::readCheckpoint(f->path);
    QCOMPARE(loaded.stepsDone, std::int64_t(1));
    QCOMPARE(loaded.optimizerSteps, std::int64_t(1));
    QCOMPARE(loaded.wallSeconds, 1.25);
    QVERIFY(torch::equal(loaded.rngState, saved.rngState));
    QCOMPARE(loaded.model.size(), saved.model.size());
    auto find = [](const std::vector<io::NamedTensor>& list, const std::string& name) {
        for (const auto& t : list)
            if (t.name == name)
                return t.value;
        return torch::Tensor();
    };
    for (const auto& t : saved.model) {
        QVERIFY2(torch::equal(find(loaded.model, t.name), t.value), t.name.c_str());
        QVERIFY(torch::equal(find(loaded.expAvgSq, t.name), find(saved.expAvgSq, t.name)));
    }
    // Restoring into a fresh session reproduces parameters, moments and the generator.
    training::TrainSession fresh;
    training::setupSession(fresh, s.config, 999, "cpu");
    training::restoreCheckpoint(fresh, loaded, "<test>");
    QVERIFY(torch::equal(fresh.gen.get_state(), s.gen.get_state()));
    for (size_t i = 0; i < fresh.optimizer->params().size(); ++i) {
        QVERIFY(torch::equal(fresh.optimizer->params()[i].second, s.optimizer->params()[i].second));
        QVERIFY(torch::equal(fresh.optimizer->expAvg()[i], s.optimizer->expAvg()[i]));
    }
    // A damaged checkpoint is refused before anything is copied: an optimizer moment of a
    // broadcastable but wrong shape (copy_ would have spread it over the tensor), a generator
    // state of the wrong size, a step past the run's end.
    auto refused = [&](io::CheckpointState bad, const char* needle) {
        training::TrainSession other;
        training::setupSession(other, s.config, 999, "cpu");
        const auto before = other.optimizer->params()[0].second.clone();
        try {
            training::restoreCheckpoint(other, bad, "/runs/x/run.h5");
            QFAIL("a damaged checkpoint was restored");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::RunFile);
            QVERIFY2(QString(e.what()).contains(needle) &&
                         QString(e.what()).contains("/runs/x/run.h5"),
                     e.what());
        }
        QVERIFY(torch::equal(other.optimizer->params()[0].second, before));
    };
    auto broadcast = loaded;
    broadcast.expAvg.back().value = broadcast.expAvg.back().value.flatten()[0].reshape({1});
    refused(broadcast, "optimizer/exp_avg/");
    auto shortRng = loaded;
    shortRng.rngState = loaded.rngState.narrow(0, 0, 100).clone();
    refused(shortRng, "rng_state");
    auto late = loaded;
    late.stepsDone = 21;
    late.optimizerSteps = 21;
    refused(late, "past the run's");
}

void TestRunFile::slotsAlternate()
{
    auto f = makeRun("slots");
    auto& s = f->session;
    auto readCurrent = [&] {
        io::H5Lock lock(io::h5Mutex());
        auto file = io::openFile(f->path, io::OpenMode::ReadSwmr);
        return io::readIntScalar(file.id(), "checkpoint/current", f->path);
    };
    s.writer.reset();
    QCOMPARE(readCurrent(), std::int64_t(-1));
    s.writer = io::RunWriter::reopen(f->path, 0, "cpu", "fp32");
    s.stepsDone = 5;
    s.writer->writeCheckpoint(training::captureCheckpoint(s, 0));
    s.stepsDone = 10;
    s.writer->writeCheckpoint(training::captureCheckpoint(s, 0));
    s.writer.reset();
    QCOMPARE(readCurrent(), std::int64_t(1));
    // The previous checkpoint (step 5) is still whole in slot 0: the next write goes there,
    // never into the slot that `current` names.
    io::H5Lock lock(io::h5Mutex());
    auto file = io::openFile(f->path, io::OpenMode::ReadSwmr);
    QCOMPARE(io::readIntScalar(file.id(), "checkpoint/slot0/step", f->path), std::int64_t(5));
}

void TestRunFile::reopenTruncatesTheLog()
{
    auto f = makeRun("truncate");
    for (std::int64_t step : {0, 10, 20, 30}) {
        LogRecord r;
        r.step = step;
        r.loss = static_cast<double>(step);
        r.pointwise = {1.0, 2.0};
        r.nPoints = 2;
        f->session.writer->appendLog(r);
    }
    f->session.writer.reset();
    QCOMPARE(readTrainLog(f->path).step, (std::vector<std::int64_t>{0, 10, 20, 30}));
    io::RunWriter::reopen(f->path, 20, "cpu", "fp32").reset();
    const auto log = readTrainLog(f->path);
    QCOMPARE(log.step, (std::vector<std::int64_t>{0, 10}));
    QCOMPARE(log.pointwiseWidth, 7);
    QCOMPARE(log.pointwise.size(), size_t(14));
    QCOMPARE(log.pointwise[1], 2.0);
    QVERIFY(std::isnan(log.pointwise[2]));  // positions past n_points are NaN
}

// A run written before /log/grad_norm existed reads as not measured, and resuming it adds the
// column NaN-filled, so every column keeps one row per logged step.
void TestRunFile::aRunFromBeforeGradNormGainsTheColumn()
{
    auto f = makeRun("gradnorm");
    for (std::int64_t step : {0, 10}) {
        LogRecord r;
        r.step = step;
        r.gradNorm = 1.5 + static_cast<double>(step);
        r.pointwise = {1.0};
        r.nPoints = 1;
        f->session.writer->appendLog(r);
    }
    f->session.writer.reset();
    QCOMPARE(readTrainLog(f->path).gradNorm, (std::vector<double>{1.5, 11.5}));
    {
        auto file = io::openFile(f->path, io::OpenMode::ReadWrite);
        io::removeObject(file.id(), "log/grad_norm", f->path);
    }
    auto old = readTrainLog(f->path);
    QCOMPARE(old.gradNorm.size(), size_t(2));
    QVERIFY(std::isnan(old.gradNorm[0]) && std::isnan(old.gradNorm[1]));
    auto writer = io::RunWriter::reopen(f->path, 100, "cpu", "fp32");
    LogRecord r;
    r.step = 20;
    r.gradNorm = 3.0;
    r.pointwise = {1.0};
    r.nPoints = 1;
    writer->appendLog(r);
    writer.reset();
    const auto log = readTrainLog(f->path);
    QCOMPARE(log.step, (std::vector<std::int64_t>{0, 10, 20}));
    QCOMPARE(log.gradNorm.size(), size_t(3));
    QVERIFY(std::isnan(log.gradNorm[0]) && std::isnan(log.gradNorm[1]));
    QCOMPARE(log.gradNorm[2], 3.0);
    // Review: an older LenGen resuming the run leaves grad_norm short; the log keeps its rows.
    {
        auto file = io::openFile(f->path, io::OpenMode::ReadWrite);
        io::truncateRows(io::openDataset(file.id(), "log/grad_norm", f->path).id(), 1, f->path);
    }
    const auto shortened = readTrainLog(f->path);
    QCOMPARE(shortened.step, (std::vector<std::int64_t>{0, 10, 20}));
    QCOMPARE(shortened.gradNorm.size(), size_t(3));
    QVERIFY(std::isnan(shortened.gradNorm[2]));
}

// A run that a process writes is in SWMR-write mode, which takes no new attributes: its notes
// are refused with the reason, and accepted once the writer has gone. Bad tags are usage errors.
void TestRunFile::notesWaitUntilNoProcessWrites()
{
    auto f = makeRun("notes");
    try {
        writeRunNotes(f->path, {"text", {"a"}});
        QFAIL("notes were written into a run being written");
    } catch (const Error& e) {
        QCOMPARE(e.kind(), ErrorKind::RunFile);
        QVERIFY2(QString(e.what()).contains("cannot change while it trains"), e.what());
    }
    f->session.writer.reset();
    writeRunNotes(f->path, {"text", {"a", "b"}});
    QCOMPARE(readRunInfo(f->path).tags, (std::vector<std::string>{"a", "b"}));
    writeRunNotes(f->path, {"", {}});  // cleared
    QVERIFY(readRunInfo(f->path).tags.empty() && readRunInfo(f->path).notes.empty());
    for (const auto& bad :
         {std::vector<std::string>{"a,b"}, std::vector<std::string>{std::string(41, 'x')},
          std::vector<std::string>(33, "t")}) {
        std::vector<std::string> tags = bad;
        if (tags.size() == 33)
            for (size_t i = 0; i < tags.size(); ++i)
                tags[i] += std::to_string(i);
        try {
            writeRunNotes(f->path, {"", tags});
            QFAIL("a bad tag list was accepted");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Usage);
        }
    }
    try {  // review: not UTF-8 (a Latin-1 file) would break the run index and --json later
        writeRunNotes(f->path, {"caf\xe9", {}});
        QFAIL("Latin-1 notes were written");
    } catch (const Error& e) {
        QCOMPARE(e.kind(), ErrorKind::Usage);
        QVERIFY2(QString(e.what()).contains("not UTF-8"), e.what());
    }
    writeRunNotes(f->path, {"café, 日本", {"naïve"}});  // UTF-8 is fine
    QCOMPARE(readRunInfo(f->path).tags, std::vector<std::string>{"naïve"});
    QVERIFY(!fs::exists(f->path + ".lock"));
}

// `sweep cancel` in the first seconds of `sweep run` (tst_faults): a cell's stop request,
// written once its writer lock was taken, was removed as "stale" by the StopRequestWatch set
// up a moment later (after the members' other sessions were built), and the cell trained on.
// A request left by an earlier writer still goes, when the next writer takes the lock.
void TestRunFile::aStopRequestedBeforeTheWatchHolds()
{
    std::string stale;
    auto f = makeRun("stop-early", [&](const std::string& path) {
        stale = stopRequestPath(path);
        std::ofstream(stale) << "stop requested by an earlier session\n";
    });
    const auto& writer = f->session.writer;
    QVERIFY(!stale.empty());
    QVERIFY2(!fs::exists(stale), "the earlier writer's request outlived it");
    {
        RunControl control;
        const StopRequestWatch watch(control, writer->path());
        QVERIFY(control.shouldContinue());
    }
    requestStop(writer->path(), "a test");  // the writer lives: the request is this session's
    RunControl control;
    const StopRequestWatch watch(control, writer->path());
    QVERIFY2(!control.shouldContinue(), "a stop requested before the watch began was lost");
}

// Between creating (or reopening) a run and switching it to SWMR-write, its writer holds the
// file open for writing with HDF5's lock (flock); a reader in another process then failed
// ("unable to lock file"), and `sweep cancel` counted a cell just started as failed. Here this
// process plays the other one: the run's lock file held and naming another holder, and run.h5
// flock()ed on another open file (flock locks of two opens conflict within one process too).
void TestRunFile::aReaderWaitsOutAWritersOpening()
{
    auto f = makeRun("locked-open");
    f->session.writer.reset();
    const int lockFd = ::open((f->path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    const int fileFd = ::open(f->path.c_str(), O_RDONLY | O_CLOEXEC);
    QVERIFY(lockFd >= 0 && fileFd >= 0);
    struct flock fl = {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    QCOMPARE(::fcntl(lockFd, F_OFD_SETLK, &fl), 0);
    const std::string holder = "elsewhere:1\n";
    QCOMPARE(::pwrite(lockFd, holder.data(), holder.size(), 0), ssize_t(holder.size()));
    QCOMPARE(::flock(fileFd, LOCK_EX | LOCK_NB), 0);
    std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(400));  // it starts SWMR
        ::flock(fileFd, LOCK_UN);
    });
    std::string status;
    try {
        status = readRunInfo(f->path).status;
    } catch (const Error& e) {
        writer.join();
        QFAIL(e.what());
    }
    writer.join();
    QVERIFY(!status.empty());

    // With no writer alive the lock is someone else's (an HDF5 tool): said at once.
    ::close(lockFd);
    QCOMPARE(::flock(fileFd, LOCK_EX | LOCK_NB), 0);
    expectRunFileError(f->path, "cannot open the run file");
    ::close(fileFd);
}

void TestRunFile::infoDescribesTheRun()
{
    auto f = makeRun("info");
    QCOMPARE(readRunInfo(f->path).status, std::string("running"));  // its writer holds the lock
    // A writer gone without writing an outcome (as after kill -9) leaves "running" in the file;
    // no lock is held any more, so readers say what happened.
    f->session.writer.reset();
    const auto info = readRunInfo(fs::path(f->path).parent_path().string());  // folder works
    QCOMPARE(info.runId, std::string("testrun1"));
    QCOMPARE(info.status, std::string("interrupted"));
    QCOMPARE(info.seed, std::uint64_t(11));
    QCOMPARE(info.positionEncoding, std::string("ALiBi"));
    QCOMPARE(info.checkpointStep, std::int64_t(-1));
    QCOMPARE(info.positionConstants.at("slopes"), (std::vector<double>{0.0625, 0.00390625}));
    QCOMPARE(loadConfigText(info.configYaml, "stored").runs.at(0).task.name,
             std::string("conjunction"));
}

// `lengen info` prints a PE constant's values at the value column (13) whatever its name's
// length: YaRN's original_max_position (21 characters) pushed its values out of line.
void TestRunFile::infoAlignsLongConstantNames()
{
    const auto run = lengen::test::trainTiny(lengen::test::scratchDir("info-yarn"), "yarn", 4, 5);
    const auto r = lengen::test::runLengen({"info", QString::fromStdString(run)});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const auto lines = r.out.split('\n');
    int names = 0, longNames = 0;
    for (int i = 0; i < lines.size(); ++i) {
        if (!lines[i].startsWith("PE "))
            continue;
        ++names;
        const auto& l = lines[i];
        if (l.size() > 13 && l[12] == ' ' && l[13] != ' ')
            continue;  // "PE inv_freq   0.5 ..."
        // A longer name stands alone; its values follow on the next line at the column.
        ++longNames;
        QVERIFY2(l.count(' ') == 1, qPrintable(l));
        QVERIFY2(i + 1 < lines.size() && lines[i + 1].startsWith(QString(13, ' ')) &&
                     lines[i + 1][13] != ' ',
                 qPrintable(r.out));
    }
    QVERIFY2(names >= 4 && longNames >= 1, qPrintable(r.out));
}

void TestRunFile::badFilesGiveClearErrors()
{
    const auto dir = lengen::test::scratchDir("bad");
    expectRunFileError(dir + "/missing.h5", "not found");
    const auto garbage = lengen::test::writeFile(dir, "garbage.h5", "this is not HDF5 at all\n");
    expectRunFileError(garbage, "not an HDF5 file");
    const auto foreign = dir + "/foreign.h5";
    {
        io::H5Lock lock(io::h5Mutex());
        auto file = io::createFile(foreign);
        io::createDataset(file.id(), "data", H5T_NATIVE_DOUBLE, {3}, foreign);
    }
    expectRunFileError(foreign, "foreign");
    // A run file cut in half (a copy interrupted mid-way) is reported, never crashes.
    auto f = makeRun("cut");
    f->session.writer.reset();
    const auto size = fs::file_size(f->path);
    const auto cut = dir + "/cut.h5";
    fs::copy_file(f->path, cut);
    fs::resize_file(cut, size / 2);
    try {
        readRunInfo(cut);
        QFAIL("expected an error for a truncated file");
    } catch (const Error& e) {
        QCOMPARE(e.kind(), ErrorKind::RunFile);
    }
}

// Variable-length strings live in HDF5's global heap ("GCOL" collections), whose object sizes
// HDF5 1.10 trusts: one flipped byte there crashed every reader inside H5HG_read. Strings are
// written fixed-length, so a run file holds no global heap at all.
void TestRunFile::stringsUseNoGlobalHeap()
{
    auto f = makeRun("gcol");
    f->session.writer->setStatus("finished");
    f->session.writer.reset();
    std::ifstream in(f->path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    QVERIFY(bytes.size() > 1000);
    QCOMPARE(bytes.find("GCOL"), std::string::npos);
    const auto info = readRunInfo(f->path);  // and every string reads back
    QCOMPARE(info.status, std::string("finished"));
    QCOMPARE(info.backbone, std::string("Llama2"));
    QCOMPARE(storedRunConfig(info.configYaml, f->path).task.name, std::string("conjunction"));
}

// Files written before fixed-length strings (and by h5py) keep variable-length strings in a
// global heap. This one, from the reliability corpus, has 4 bytes flipped in an object size of
// its heap (byte 2232): every reader crashed inside H5HG_read. It is refused naming the heap;
// the same file with the bytes restored reads.
void TestRunFile::damagedGlobalHeapIsRefused()
{
    const auto dir = lengen::test::scratchDir("heap");
    const auto damaged = dir + "/damaged.h5";
    const auto repaired = dir + "/repaired.h5";
    const auto source =
        lengen::test::sourcePath("tests/fuzz/regressions/run_file/global-heap-object-size.h5");
    fs::copy_file(source, damaged, fs::copy_options::overwrite_existing);
    fs::copy_file(source, repaired, fs::copy_options::overwrite_existing);
    expectRunFileError(damaged, "global heap at byte 2048 is damaged");
    {
        std::fstream f(repaired, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(2232);
        f.write("\x04\0\0\0", 4);
    }
    const auto info = readRunInfo(repaired);
    QCOMPARE(info.backbone, std::string("Llama2"));
    QCOMPARE(info.status, std::string("finished"));
}

// Issue 29, defects 4 and 18: Debian's HDF5 is built thread-safe, so its error stack and the
// switch that silences automatic printing are per thread. Only the first thread to open a file
// was silenced: the studio's worker (or GUI) thread filled stderr with HDF5-DIAG stacks.
void TestRunFile::hdf5PrintsNoErrorStackOnAnyThread()
{
    auto f = makeRun("silent");
    f->session.writer.reset();
    const auto dir = lengen::test::scratchDir("silent-cut");
    const auto cut = dir + "/cut.h5";
    fs::copy_file(f->path, cut, fs::copy_options::overwrite_existing);
    fs::resize_file(cut, fs::file_size(f->path) / 2);
    const auto captured = dir + "/stderr.txt";
    std::fflush(stderr);
    const int saved = ::dup(2);
    const int sink = ::open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(sink, 2);
    ::close(sink);
    int refused = 0;
    const auto openIt = [&] {
        try {
            readRunInfo(cut);
        } catch (const Error&) {
            ++refused;
        }
    };
    openIt();                    // this thread
    std::thread(openIt).join();  // a thread that has never called HDF5 (the studio's worker)
    std::thread(openIt).join();
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    QCOMPARE(refused, 3);
    std::ifstream in(captured);
    const std::string printed((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    QVERIFY2(printed.find("HDF5-DIAG") == std::string::npos, printed.c_str());
}

QTEST_APPLESS_MAIN(TestRunFile)
#include "tst_run_file.moc"
