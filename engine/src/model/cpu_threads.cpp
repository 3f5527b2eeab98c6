#include "model/cpu_threads.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace lengen::engine::model::kernels {

namespace {

// Workers 1..n-1 wait for a new generation, run their part of the current job, and report.
class Pool {
public:
    ~Pool() { resize(1); }

    void resize(int n)
    {
        std::unique_lock lock(m_mutex);
        if (n == static_cast<int>(m_workers.size()) + 1)
            return;
        m_stop = true;
        ++m_generation;
        m_wake.notify_all();
        lock.unlock();
        for (auto& w : m_workers)
            w.join();
        lock.lock();
        m_workers.clear();
        m_size.store(1);
        m_stop = false;
        const std::uint64_t now = m_generation;  // new workers wait for the next job
        for (int i = 1; i < n; ++i)
            m_workers.emplace_back([this, i, now] { work(i, now); });
        m_size.store(n);
    }

    int size() const { return m_size.load(); }  // read without the lock by parallelFor

    void run(int parts, const std::function<void(int)>& part)
    {
        {
            std::lock_guard lock(m_mutex);
            m_job = &part;
            m_parts = parts;
            m_pending = parts - 1;
            ++m_generation;
        }
        m_wake.notify_all();
        part(0);
        std::unique_lock lock(m_mutex);
        m_done.wait(lock, [this] { return m_pending == 0; });
        m_job = nullptr;
    }

private:
    void work(int index, std::uint64_t seen)
    {
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_wake.wait(lock, [&] { return m_stop || m_generation != seen; });
            if (m_stop)
                return;
            seen = m_generation;
            if (index >= m_parts || !m_job)
                continue;
            const auto* job = m_job;
            lock.unlock();
            (*job)(index);
            lock.lock();
            if (--m_pending == 0)
                m_done.notify_one();
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_wake, m_done;
    std::vector<std::thread> m_workers;
    const std::function<void(int)>* m_job = nullptr;
    int m_parts = 0, m_pending = 0;
    std::uint64_t m_generation = 0;
    bool m_stop = false;
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
