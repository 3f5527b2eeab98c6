#include "model/cpu_threads.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
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

// True as soon as pred() holds; false when kSpin passed without it.
template <class Pred>
bool spinUntil(Pred pred)
{
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            if (pred())
                return true;
            cpuRelax();
        }
        if (std::chrono::steady_clock::now() > until)
            return pred();
    }
}

// Workers 1..n-1 wait for a new generation (spinning briefly, then sleeping), run their part of
// the current job if it has one for them, and report. Every worker reports every generation,
// so none can lag behind into the next job.
class Pool {
public:
    ~Pool() { resize(1); }

    void resize(int n)
    {
        if (n == static_cast<int>(m_workers.size()) + 1)
            return;
        {
            std::lock_guard lock(m_mutex);
            m_stop.store(true);
            m_generation.fetch_add(1, std::memory_order_release);
        }
        m_wake.notify_all();
        for (auto& w : m_workers)
            w.join();
        m_workers.clear();
        m_size.store(1);
        m_stop.store(false);
        const std::uint64_t now = m_generation.load();  // new workers wait for the next job
        for (int i = 1; i < n; ++i)
            m_workers.emplace_back([this, i, now] { work(i, now); });
        m_size.store(n);
    }

    int size() const { return m_size.load(); }  // read without the lock by parallelFor

    void run(int parts, const std::function<void(int)>& part)
    {
        m_job = &part;  // published by the generation's release below
        m_parts = parts;
        m_pending.store(static_cast<int>(m_workers.size()), std::memory_order_relaxed);
        {
            std::lock_guard lock(m_mutex);  // a worker about to sleep checks under it
            m_generation.fetch_add(1, std::memory_order_release);
        }
        m_wake.notify_all();
        part(0);
        auto done = [this] { return m_pending.load(std::memory_order_acquire) == 0; };
        if (!spinUntil(done)) {
            std::unique_lock lock(m_mutex);
            m_done.wait(lock, done);
        }
        m_job = nullptr;
    }

private:
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
            if (index < m_parts)
                (*m_job)(index);
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
    std::atomic<int> m_size{1};
};

Pool& pool()
{
    static Pool p;
    return p;
}

std::mutex& callMutex()  // one job at a time (two trainings in one process take turns)
{
    static std::mutex m;
    return m;
}

// Set on the threads running a job's parts: a parallelFor there runs serially (the caller's own
// thread holds callMutex, and try_lock by the owner is undefined).
thread_local bool t_inJob = false;

// Runs part(0..parts-1) on the pool, part 0 on the caller; false (nothing run) when it cannot.
bool runOnPool(int parts, const std::function<void(int)>& part)
{
    if (t_inJob || parts > pool().size())
        return false;
    std::unique_lock lock(callMutex(), std::try_to_lock);
    if (!lock.owns_lock())
        return false;
    const std::function<void(int)> marked = [&](int i) {
        t_inJob = true;
        part(i);
        t_inJob = false;
    };
    pool().run(parts, marked);
    return true;
}

}  // namespace

void setKernelThreads(int n)
{
    std::lock_guard lock(callMutex());
    pool().resize(std::clamp(n, 1, 64));
}

int kernelThreads() { return pool().size(); }

void parallelFor(std::int64_t n, std::int64_t grain,
                 const std::function<void(std::int64_t, std::int64_t, int)>& fn)
{
    const std::int64_t most = t_inJob ? 1 : pool().size();
    const auto parts = static_cast<int>(
        std::max<std::int64_t>(1, std::min(most, n / std::max<std::int64_t>(grain, 1))));
    const std::function<void(int)> part = [&](int i) {
        fn(n * i / parts, n * (i + 1) / parts, i);
    };
    if (parts <= 1 || !runOnPool(parts, part))  // nested or busy: serial, one part
        fn(0, n, 0);
}

void runParts(int parts, const std::function<void(int)>& fn)
{
    if (parts > 1 && runOnPool(parts, fn))
        return;
    for (int i = 0; i < parts; ++i)
        fn(i);
}

}  // namespace lengen::engine::model::kernels
