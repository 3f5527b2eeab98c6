// The kernel context (model/kernel_context.h): each session's own threads. Two contexts run
// their slices side by side (with one process-wide pool the second caller ran serially), a
// slice split is exact and falls back to the caller in order, OpenBLAS's one thread count is
// right whatever order sessions enter and leave their serial sections, and two trainings in
// one process give bit for bit what each gives alone. With PyPI's LibTorch (MKL, counted per
// thread) a small model's products run on one thread inside and outside slices.

#include <QDir>

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "file_tree.h"
#include "io/run_store.h"
#include "lengen/engine/trainer.h"
#include "model/kernel_context.h"
#include "test_support.h"
#include "train/adamw.h"
#include "train/threads.h"

using namespace lengen::engine;
using namespace lengen::engine::model;

namespace {

// Waits until `count` threads arrived or `limit` passed; true when all arrived.
class Rendezvous {
public:
    explicit Rendezvous(int count) : m_count(count) {}
    bool arrive(std::chrono::seconds limit)
    {
        std::unique_lock lock(m_mutex);
        ++m_arrived;
        m_all.notify_all();
        return m_all.wait_for(lock, limit, [&] { return m_arrived >= m_count; });
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_all;
    int m_count, m_arrived = 0;
};

TrainOptions twoThreads(const std::string& dir, std::uint64_t seed)
{
    TrainOptions o;
    o.outDir = dir;
    o.seed = seed;
    o.device = "cpu";
    o.threads = 2;
    return o;
}

}  // namespace

class TestKernelContext final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }
    void twoContextsRunSideBySide();
    void slicesCoverTheItemsAndFallBackInOrder();
    void blasThreadsRightWhateverTheOrder();
    void mklThreadsFollowTheSession();
    void fileSystemCallsReachTheSystemLibrary();
    void removeTreeKeepsWhatLinksPointTo();
    void twoTrainingsInOneProcessAsEachAlone();
    void aThrowingSliceIsTheCallersError();
    void adamwOnThreadsAsOnOne();
};

void TestKernelContext::twoContextsRunSideBySide()
{
    // Every slice of both jobs waits for all four: only four threads at once get there.
    kernels::KernelContext a(2), b(2);
    Rendezvous all(4);
    std::atomic<int> met{0};
    std::mutex idsMutex;
    std::set<std::thread::id> ids;
    auto job = [&](const kernels::KernelContext& c) {
        c.run(2, [&](kernels::Slice) {
            {
                std::lock_guard lock(idsMutex);
                ids.insert(std::this_thread::get_id());
            }
            if (all.arrive(std::chrono::seconds(20)))
                ++met;
        });
    };
    std::thread first(job, std::cref(a)), second(job, std::cref(b));
    first.join();
    second.join();
    QCOMPARE(met.load(), 4);
    QCOMPARE(ids.size(), size_t(4));
}

void TestKernelContext::slicesCoverTheItemsAndFallBackInOrder()
{
    kernels::KernelContext c(2);
    QCOMPARE(c.threads(), 2);
    QCOMPARE(c.slicesFor(1), 1);
    QCOMPARE(c.slicesFor(7), 2);
    QCOMPARE(c.slicesFor(7, 4), 1);  // a slice of fewer than `grain` items is not worth a thread
    QCOMPARE(kernels::KernelContext(0).threads(), 1);

    // The slices of n items are contiguous and cover [0, n) once, for every count.
    for (int nth = 1; nth <= 5; ++nth) {
        std::int64_t next = 0;
        for (int i = 0; i < nth; ++i) {
            const kernels::Slice s{i, nth};
            QCOMPARE(s.begin(13), next);
            next = s.end(13);
        }
        QCOMPARE(next, std::int64_t(13));
    }

    // More slices than threads: one after another on the caller, in order.
    const auto caller = std::this_thread::get_id();
    std::vector<int> order;
    c.run(3, [&](kernels::Slice s) {
        QCOMPARE(std::this_thread::get_id(), caller);
        QCOMPARE(s.nth, 3);
        order.push_back(s.ith);
    });
    QCOMPARE(order, (std::vector<int>{0, 1, 2}));

    // Nested in a slice: the inner job runs on that slice's thread, every slice once.
    std::atomic<int> inner{0}, nestedElsewhere{0};
    c.run(2, [&](kernels::Slice) {
        const auto self = std::this_thread::get_id();
        c.run(2, [&](kernels::Slice) {
            ++inner;
            if (std::this_thread::get_id() != self)
                ++nestedElsewhere;
        });
    });
    QCOMPARE(inner.load(), 4);
    QCOMPARE(nestedElsewhere.load(), 0);
}

void TestKernelContext::blasThreadsRightWhateverTheOrder()
{
    const int original = kernels::blasThreadsNow();
    if (original == 0)
        QSKIP("the BLAS in this process is not OpenBLAS: no thread count to manage");
    {
        kernels::KernelContext a(1, 2);
        QCOMPARE(kernels::blasThreadsNow(), 2);
        {
            // Two sessions' serial sections, left in the order they were entered: with a saved
            // and restored count the first to leave put 2 back while the second still ran.
            auto first = std::make_unique<kernels::SerialBlas>();
            QCOMPARE(kernels::blasThreadsNow(), 1);
            kernels::SerialBlas second;
            first.reset();
            QCOMPARE(kernels::blasThreadsNow(), 1);
        }
        QCOMPARE(kernels::blasThreadsNow(), 2);
        {
            kernels::KernelContext b(1, 3);  // the largest request of the live contexts
            QCOMPARE(kernels::blasThreadsNow(), 3);
        }
        QCOMPARE(kernels::blasThreadsNow(), 2);
        kernels::KernelContext leavesItAlone(2, 0);
        QCOMPARE(kernels::blasThreadsNow(), 2);
    }
    QCOMPARE(kernels::blasThreadsNow(), original);
}

void TestKernelContext::fileSystemCallsReachTheSystemLibrary()
{
    // PyPI's libtorch_cpu exports its own copy of std::filesystem. Listed before libstdc++ among
    // a program's libraries, it took every call: with PyTorch 2.11+cu130 its remove_all jumped to
    // address 0 (sweep run --mps crashed in the daemon's clean-up). Each program now names
    // libstdc++ first (cmake/LengenOptions.cmake).
    using RemoveAll = std::uintmax_t (*)(const std::filesystem::path&, std::error_code&);
    const RemoveAll bound = &std::filesystem::remove_all;
    Dl_info info{};
    QVERIFY(dladdr(reinterpret_cast<void*>(bound), &info) != 0 && info.dli_fname);
    QVERIFY2(std::string(info.dli_fname).find("libstdc++") != std::string::npos, info.dli_fname);
}

void TestKernelContext::removeTreeKeepsWhatLinksPointTo()
{
    // The engine's folder removal (file_tree.h: not std::filesystem::remove_all, which bound to
    // a broken copy in PyPI's LibTorch on the GPU machines): all of a nested folder goes, a link
    // inside goes as a link, and what it points to stays.
    namespace fs = std::filesystem;
    const fs::path root =
        QDir::tempPath().toStdString() + "/lengen-remove-tree-" + std::to_string(::getpid());
    const fs::path tree = root / "tree", outside = root / "outside";
    fs::create_directories(tree / "a" / "b");
    fs::create_directories(outside);
    std::ofstream(tree / "a" / "b" / "file") << "x";
    std::ofstream(tree / "top") << "y";
    std::ofstream(outside / "kept") << "z";
    fs::create_directory_symlink(outside, tree / "a" / "link");
    QVERIFY(removeTree(tree.string()));
    QVERIFY(!fs::exists(fs::symlink_status(tree)));
    QVERIFY(fs::exists(outside / "kept"));
    QVERIFY(removeTree(tree.string()));                // nothing there: nothing to do
    QVERIFY(removeTree((outside / "kept").string()));  // a file alone
    QVERIFY(!fs::exists(outside / "kept"));
    QVERIFY(removeTree(root.string()));
    QVERIFY(!fs::exists(root));
}

void TestKernelContext::mklThreadsFollowTheSession()
{
    using GetMax = int (*)();
    const auto mklMax = reinterpret_cast<GetMax>(dlsym(RTLD_DEFAULT, "MKL_Get_Max_Threads"));
    if (!mklMax)
        QSKIP("the BLAS in this process is not MKL (PyPI's LibTorch): nothing counted per thread");
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (cores < 2)
        QSKIP("one core: every count is one");
    // The process policy as lengen sets it. Before, it gave LibTorch (and with it MKL) every
    // core: a quick model's tiny products then ran on two spinning OpenMP threads, and two test
    // processes on a 2-core CI machine took 300 s for what takes 18 s (the PyPI job's timeout).
    applyProcessPolicy(SessionSwitches{});
    QCOMPARE(torch::get_num_threads(), 1);
    {
        const auto small = training::makeKernelContext(0, 64, SessionSwitches{});
        QCOMPARE(small->threads(), cores);
        kernels::adoptBlasThreads();
        QCOMPARE(mklMax(), 1);
        std::atomic<int> sliceMax{0};
        small->run(2, [&](kernels::Slice s) {
            kernels::adoptBlasThreads();
            if (s.ith == 1)
                sliceMax = mklMax();
        });
        QCOMPARE(sliceMax.load(), 1);
        // A model wide enough for threaded products gets them outside slices.
        const auto wide = training::makeKernelContext(0, 256, SessionSwitches{});
        kernels::adoptBlasThreads();
        QCOMPARE(mklMax(), cores);
    }
    kernels::adoptBlasThreads();  // no session: MKL's own count again, as LibTorch set it
    QCOMPARE(mklMax(), 1);
    torch::set_num_threads(1);
}

void TestKernelContext::twoTrainingsInOneProcessAsEachAlone()
{
    // Two trainings on two threads each, at the same time (the studio's worker beside another
    // job), then each again alone: the same runs bit for bit, so neither took the other's
    // threads, slices or BLAS setting in a way that changed a result.
    const auto dir = lengen::test::scratchDir("two-trainings");
    const auto config =
        lengen::test::loadOne(lengen::test::tinyConfig("linear_regression", "rope", 30));
    RunSummary together[2], alone[2];
    std::string error[2];
    auto trainOne = [&](int i, const std::string& sub, RunSummary& out) {
        try {
            RunControl control;
            TrainObserver quiet;
            out = train(config, twoThreads(dir + "/" + sub + std::to_string(i), 11 + i), control,
                        quiet);
        } catch (const std::exception& e) {
            error[i] = e.what();
        }
    };
    std::thread t0(trainOne, 0, "together", std::ref(together[0]));
    std::thread t1(trainOne, 1, "together", std::ref(together[1]));
    t0.join();
    t1.join();
    QVERIFY2(error[0].empty() && error[1].empty(), (error[0] + error[1]).c_str());
    for (int i = 0; i < 2; ++i)
        trainOne(i, "alone", alone[i]);
    for (int i = 0; i < 2; ++i) {
        QCOMPARE(together[i].stepsDone, std::int64_t(30));
        QCOMPARE(together[i].finalLoss, alone[i].finalLoss);  // bitwise
        const auto a = io::readCheckpoint(together[i].runFile);
        const auto b = io::readCheckpoint(alone[i].runFile);
        QCOMPARE(a.model.size(), b.model.size());
        for (size_t p = 0; p < a.model.size(); ++p)
            QVERIFY2(torch::equal(a.model[p].value, b.model[p].value), a.model[p].name.c_str());
    }
    QVERIFY(together[0].finalLoss != together[1].finalLoss);  // two different runs
}

// Issue 40: a slice that throws on a worker used to call std::terminate (the exception left
// the worker's thread function), and one that threw on the caller (slice 0) returned while the
// workers still ran the job, leaving the pool's job pointer dangling and the slice flag set.
void TestKernelContext::aThrowingSliceIsTheCallersError()
{
    const kernels::KernelContext context(2);
    for (int thrower : {1, 0}) {
        std::atomic<int> ran{0};
        try {
            context.run(2, [&](kernels::Slice s) {
                if (s.ith == thrower)
                    throw std::runtime_error("slice " + std::to_string(s.ith) + " failed");
                std::this_thread::sleep_for(std::chrono::milliseconds(20));  // still running
                ++ran;
            });
            QFAIL("no exception");
        } catch (const std::runtime_error& e) {
            QCOMPARE(std::string(e.what()), "slice " + std::to_string(thrower) + " failed");
        }
        QCOMPARE(ran.load(), 1);  // the other slice finished before run() returned
        // Still usable, and still parallel: slice 1 runs on the worker, not on this thread
        // (a flag left set after a throw would run every later job serially here).
        std::thread::id ids[2];
        context.run(2, [&](kernels::Slice s) { ids[s.ith] = std::this_thread::get_id(); });
        QCOMPARE(ids[0], std::this_thread::get_id());
        QVERIFY(ids[1] != std::this_thread::get_id());
    }
}

// AdamW splits its update and the gradient-norm clipping over the session's threads (issue 57):
// parameters of odd sizes, cut anywhere by the shares, give the same bits on 1, 2 and 3
// threads, over several steps with clipping on.
void TestKernelContext::adamwOnThreadsAsOnOne()
{
    const std::vector<std::int64_t> sizes{70001, 3, 64, 40000, 129, 33333};
    const auto run = [&](std::shared_ptr<const kernels::KernelContext> context) {
        auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
        std::vector<std::pair<std::string, torch::Tensor>> params;
        for (size_t i = 0; i < sizes.size(); ++i)
            params.emplace_back("p" + std::to_string(i),
                                torch::randn({sizes[i]}, gen, torch::kFloat32));
        training::AdamWOptions opt;
        opt.weightDecay = 0.1;
        training::AdamW adam(params, opt);
        adam.setKernelContext(std::move(context));
        std::vector<double> norms;
        for (int step = 0; step < 3; ++step) {
            for (auto& [name, p] : params)
                p.mutable_grad() = torch::randn(p.sizes(), gen, torch::kFloat32) * 3;
            norms.push_back(adam.clipGradNorm(1.0, true));  // clips: the norm is ~1000
            adam.step(1e-2);
        }
        return std::make_pair(params, norms);
    };
    const auto [one, oneNorms] = run(nullptr);
    for (int threads : {2, 3}) {
        const auto [many, manyNorms] = run(std::make_shared<kernels::KernelContext>(threads));
        QCOMPARE(manyNorms, oneNorms);
        QVERIFY(oneNorms.front() > 100);
        for (size_t i = 0; i < one.size(); ++i)
            QVERIFY2(torch::equal(many[i].second, one[i].second),
                     qPrintable(QString("%1 threads, %2").arg(threads).arg(one[i].first.c_str())));
    }
}

QTEST_GUILESS_MAIN(TestKernelContext)
#include "tst_kernel_context.moc"
