#include "model/kernel_context.h"

#include "model/cpu_kernels.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <limits>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

namespace lengen::engine::model::kernels {

namespace {

// How long a worker (or the caller, for the workers to finish) spins before it sleeps on the
// condition variable. The fused layers start a job per layer and direction, 12 in a quick step
// of ~11 ms, with tens of microseconds between them; a futex wake-up on these VMs costs about
// as much, so without the spin the second core joined each job late.
constexpr auto kSpin = std::chrono::microseconds(100);

inline void cpuRelax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
}

// Then, while the machine has a core for each runnable thread, it goes on waiting up to
// kYieldSpin, giving its core away at each turn (sched_yield). The gaps between a step's jobs
// (a node's set-up, autograd) average ~150 us, so the worker mostly slept and started late:
// this gained 9.6 % at two threads alone (quick RoPE, docs/performance.md). With more runnable
// threads than cores (two sessions on two cores) it cost each 7.5 %, so it stops there: the
// threads sleep after kSpin as before (Crowding).
constexpr auto kYieldSpin = std::chrono::microseconds(600);

// Whether more threads are runnable than there are cores: the running count of /proc/loadavg
// ("0.52 0.58 0.59 3/412 ..."), read at most every 50 ms by whoever asks. A count over the
// cores holds for 200 ms (one reading may fall between the other session's jobs: two
// sessions on two cores read crowded 236 times of 236, one alone 3 of 120); unreadable counts
// as crowded.
class Crowding {
public:
    static bool now()
    {
        static Crowding c;
        const auto t = std::chrono::steady_clock::now().time_since_epoch().count();
        if (t - c.m_checked.load(std::memory_order_relaxed) > ticks(50)) {
            c.m_checked.store(t, std::memory_order_relaxed);
            if (read())
                c.m_until.store(t + ticks(200), std::memory_order_relaxed);
        }
        return t < c.m_until.load(std::memory_order_relaxed);
    }

private:
    static std::int64_t ticks(int ms)
    {
        return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::milliseconds(ms))
            .count();
    }

    static bool read()
    {
        const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return true;
        char buf[128] = {};
        const ssize_t n = ::read(fd, buf, sizeof buf - 1);
        ::close(fd);
        int running = 0;
        if (n <= 0 || std::sscanf(buf, "%*s %*s %*s %d/", &running) != 1)
            return true;
        static const int cores =
            static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        return running > cores;
    }

    std::atomic<std::int64_t> m_checked{std::numeric_limits<std::int64_t>::min() / 2};
    std::atomic<std::int64_t> m_until{std::numeric_limits<std::int64_t>::min() / 2};
};

// True as soon as pred() holds; false when the spin (and the yielding wait, where the machine
// is not crowded) passed without it.
template <class Pred>
bool spinUntil(Pred pred)
{
    const auto start = std::chrono::steady_clock::now();
    for (const auto until = start + kSpin;;) {
        for (int i = 0; i < 64; ++i) {
            if (pred())
                return true;
            cpuRelax();
        }
        if (std::chrono::steady_clock::now() > until)
            break;
    }
    if (Crowding::now())
        return pred();
    for (const auto until = start + kYieldSpin;;) {
        if (pred())
            return true;
        std::this_thread::yield();
        if (std::chrono::steady_clock::now() > until)
            return pred();
    }
}

}  // namespace

// Workers 1..n-1 wait for a new generation (spinning briefly, then sleeping), run their part of
// the current job if it has one for them, and report. Every worker reports every generation,
// so none can lag behind into the next job. The workers spin for 100 us after a job, wait
// yielding their core up to 600 us where the machine has a core for each runnable thread, then
// sleep on a condition variable (a busy machine loses little to them).
class ThreadPool {
public:
    /// Starts workers 1..n-1; the caller is part 0.
    explicit ThreadPool(int n)
    {
        for (int i = 1; i < n; ++i)
            m_workers.emplace_back([this, i] { work(i, 0); });
    }

    ~ThreadPool()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stop.store(true);
            m_generation.fetch_add(1, std::memory_order_release);
        }
        m_wake.notify_all();
        for (auto& w : m_workers)
            w.join();
    }

    // Runs part(0) here and parts 1..n-1 on the workers; returns when every worker is done
    // with this generation, also when a part threw. The first exception (any part's) is then
    // rethrown here, so a failing slice reaches the caller as its error; the job pointer never
    // outlives the call.
    void run(int parts, const std::function<void(int)>& part)
    {
        m_error = nullptr;
        m_job = &part;  // published by the generation's release below
        m_parts = parts;
        m_pending.store(static_cast<int>(m_workers.size()), std::memory_order_relaxed);
        {
            std::lock_guard lock(m_mutex);  // a worker about to sleep checks under it
            m_generation.fetch_add(1, std::memory_order_release);
        }
        m_wake.notify_all();
        guarded(0);
        auto done = [this] { return m_pending.load(std::memory_order_acquire) == 0; };
        if (!spinUntil(done)) {
            std::unique_lock lock(m_mutex);
            m_done.wait(lock, done);
        }
        m_job = nullptr;
        if (m_error)
            std::rethrow_exception(std::exchange(m_error, nullptr));
    }

private:
    // One part; an exception is kept (the first one wins) instead of leaving a worker thread
    // (std::terminate) or the caller before the workers finished.
    void guarded(int index)
    {
        try {
            (*m_job)(index);
        } catch (...) {
            std::lock_guard lock(m_errorMutex);
            if (!m_error)
                m_error = std::current_exception();
        }
    }

    void work(int index, std::uint64_t seen)
    {
        for (;;) {
            auto next = [&] { return m_generation.load(std::memory_order_acquire) != seen; };
            if (!spinUntil(next)) {
                std::unique_lock lock(m_mutex);
                m_wake.wait(lock, next);
            }
            seen = m_generation.load(std::memory_order_acquire);
            if (m_stop.load())
                return;
            if (index < m_parts) {
                SignalsHeld held;  // once for the part's products on oneDNN (cpu_kernels.cpp)
                guarded(index);
            }
            if (m_pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                std::lock_guard lock(m_mutex);  // the caller may be about to sleep
                m_done.notify_one();
            }
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_wake, m_done;
    std::vector<std::thread> m_workers;
    const std::function<void(int)>* m_job = nullptr;
    int m_parts = 0;
    std::atomic<int> m_pending{0};
    std::atomic<std::uint64_t> m_generation{0};
    std::atomic<bool> m_stop{false};
    std::mutex m_errorMutex;
    std::exception_ptr m_error;  // the job's first exception; read by the caller after all parts
};

namespace {

// Set on the threads running a job's slices: a run() there goes serially (a slice's thread may
// be the caller holding its context's m_call, and nested jobs would oversubscribe the cores).
thread_local bool t_inJob = false;

using GetThreads = int (*)();
using SetThreads = void (*)(int);
using SetLocal = int (*)(int);

// The process's BLAS thread count, the one place that sets it (kernel_context.h). Live
// contexts' requests are a multiset; serial sections a count. OpenBLAS has one count per
// process, set here. MKL (inside PyPI's LibTorch) counts per thread: the count wanted is kept
// here and each thread takes it before its products (adoptBlasThreads), since a second
// MKL/OpenMP thread on a busy 2-core machine made tiny products ~6x slower (docs/ci.md).
class BlasArbiter {
public:
    static BlasArbiter& instance()
    {
        static BlasArbiter a;
        return a;
    }

    void request(int n)
    {
        std::lock_guard lock(m_mutex);
        m_requests.insert(n);
        apply();
    }

    void release(int n)
    {
        std::lock_guard lock(m_mutex);
        m_requests.erase(m_requests.find(n));
        apply();
    }

    void enterSerial()
    {
        std::lock_guard lock(m_mutex);
        ++m_serial;
        apply();
    }

    void leaveSerial()
    {
        std::lock_guard lock(m_mutex);
        --m_serial;
        apply();
    }

    bool manages() const { return m_set || m_setLocal; }

    int now() const
    {
        if (m_get)
            return m_get();
        return m_setLocal ? m_wanted.load(std::memory_order_relaxed) : 0;
    }

    // MKL: this thread's count made the wanted one (0: MKL's process-wide count). A relaxed
    // load and a compare when nothing changed.
    void adopt()
    {
        if (!m_setLocal)
            return;
        thread_local int mine = 0;
        const int want = m_wanted.load(std::memory_order_relaxed);
        if (want != mine) {
            m_setLocal(want);
            mine = want;
        }
    }

private:
    BlasArbiter()
        : m_get(reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"))),
          m_set(reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    {
        if (!m_get || !m_set)
            m_get = nullptr, m_set = nullptr;
        if (!m_set)
            m_setLocal =
                reinterpret_cast<SetLocal>(dlsym(RTLD_DEFAULT, "MKL_Set_Num_Threads_Local"));
    }

    // Under m_mutex. Only an actual change calls OpenBLAS (a step enters and leaves serial
    // sections a dozen times).
    void apply()
    {
        if (m_setLocal) {
            m_wanted.store(m_serial > 0         ? 1
                           : m_requests.empty() ? 0
                                                : *m_requests.rbegin(),
                           std::memory_order_relaxed);
            return;
        }
        if (!m_set)
            return;
        if (m_original == 0)  // the first call: what to return to when nothing asks any more
            m_original = std::max(1, m_get());
        const int want = m_serial > 0 ? 1 : m_requests.empty() ? m_original : *m_requests.rbegin();
        if (want != m_get())
            m_set(want);
    }

    GetThreads m_get;
    SetThreads m_set;
    SetLocal m_setLocal = nullptr;  // MKL's per-thread count, when the BLAS is MKL
    std::atomic<int> m_wanted{0};   // MKL: the count threads adopt (0: MKL's own)
    std::mutex m_mutex;
    std::multiset<int> m_requests;
    int m_serial = 0;
    int m_original = 0;  // OpenBLAS's count before the first call (0: not yet seen)
};

}  // namespace

void adoptBlasThreads() { BlasArbiter::instance().adopt(); }

bool blasThreadsManaged() { return BlasArbiter::instance().manages(); }

int blasThreadsNow() { return BlasArbiter::instance().now(); }

SerialBlas::SerialBlas() { BlasArbiter::instance().enterSerial(); }

SerialBlas::~SerialBlas() { BlasArbiter::instance().leaveSerial(); }

KernelContext::KernelContext(int threads, int blasThreads)
    : m_threads(std::clamp(threads, 1, 64)), m_blasThreads(std::max(blasThreads, 0))
{
    if (m_threads > 1)
        m_pool = std::make_unique<ThreadPool>(m_threads);
    if (m_blasThreads > 0)
        BlasArbiter::instance().request(m_blasThreads);
}

KernelContext::~KernelContext()
{
    m_pool.reset();  // joins the workers
    if (m_blasThreads > 0)
        BlasArbiter::instance().release(m_blasThreads);
}

const KernelContext& KernelContext::serial()
{
    static const KernelContext one(1, 0);
    return one;
}

int KernelContext::slicesFor(std::int64_t n, std::int64_t grain) const
{
    return static_cast<int>(std::max<std::int64_t>(
        1, std::min<std::int64_t>(m_threads, n / std::max<std::int64_t>(grain, 1))));
}

void KernelContext::run(int nth, const std::function<void(Slice)>& fn) const
{
    SignalsHeld held;  // the job's products on oneDNN take no signal (cpu_kernels.cpp)
    const auto serially = [&] {
        for (int i = 0; i < nth; ++i)
            fn(Slice{i, nth});
    };
    if (nth <= 1 || !m_pool || nth > m_threads || t_inJob) {
        serially();
        return;
    }
    std::unique_lock lock(m_call, std::try_to_lock);
    if (!lock.owns_lock()) {  // another thread's job on this context: not worth waiting for
        serially();
        return;
    }
    {
        SerialBlas serial;
        const std::function<void(int)> slice = [&](int i) {
            struct InJob {  // cleared also when the slice throws
                InJob() { t_inJob = true; }
                ~InJob() { t_inJob = false; }
            } inJob;
            adoptBlasThreads();  // MKL: one thread for this slice's products, once per job
            fn(Slice{i, nth});
        };
        m_pool->run(nth, slice);
    }
    adoptBlasThreads();  // the caller ran slice 0: its count outside slices again
}

}  // namespace lengen::engine::model::kernels
