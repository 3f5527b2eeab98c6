#pragma once
// The CPU threads of one training or evaluation session, and the one place that sets the
// BLAS's thread count (OpenBLAS's process-wide one, MKL's per thread).
//
// A session (training::TrainSession, eval::LoadedRun) owns a KernelContext and hands it to its
// model's backbone (kernel_policy.h), which hands it to the fused nodes and the selective scan.
// Those split their work into slices, ggml's (ith, nth), and run them on the context's pool;
// the kernels themselves (cpu_kernels.h, cpu_scan.h) take the rows of one slice and never call
// a pool. Two sessions in one process (the studio's worker and a test, two trainings) each have
// their own pool, so each gets its threads.
//
// OpenBLAS has a single thread count per process. Products inside slices must run on their
// calling thread (two threaded products at once fight over OpenBLAS's one pool), so while any
// context runs slices OpenBLAS is held at 1; otherwise it runs with the largest count a live
// context asked for, and with the count it had before when none is alive. Counted, not saved
// and restored: two sessions entering and leaving in any order leave the right count. MKL (in
// PyPI's LibTorch) counts threads per thread: the same rule holds for it, each thread taking
// the count before its products (adoptBlasThreads).
//
// No Torch types here: this header is included by the kernels' callers and the model headers.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

namespace lengen::engine::model::kernels {

/// One thread's share of a job: slice `ith` of `nth` (ggml's params->ith, params->nth).
struct Slice {
    int ith = 0, nth = 1;
    /// First item of this slice of n items (contiguous, in slice order).
    std::int64_t begin(std::int64_t n) const { return n * ith / nth; }
    /// One past its last item.
    std::int64_t end(std::int64_t n) const { return n * (ith + 1) / nth; }
};

class ThreadPool;

/// Sessions create contexts with std::make_shared; a fused node's autograd context then keeps
/// its context alive until its backward ran (fused_common.h keepContext), whatever the
/// session does in between.
class KernelContext : public std::enable_shared_from_this<KernelContext> {
public:
    /// `threads` kernel threads (1 = the calling thread only; clamped to 1..64). `blasThreads`
    /// > 0: what OpenBLAS should use for products outside slices while this context lives
    /// (the module path: evaluation, probes, the input and output heads); 0 leaves it alone.
    explicit KernelContext(int threads = 1, int blasThreads = 0);
    ~KernelContext();
    KernelContext(const KernelContext&) = delete;
    KernelContext& operator=(const KernelContext&) = delete;

    int threads() const { return m_threads; }
    int blasThreads() const { return m_blasThreads; }

    /// Slices for n items of at least `grain` each: min(threads(), n / grain), at least 1.
    int slicesFor(std::int64_t n, std::int64_t grain = 1) const;

    /// fn(Slice{i, nth}) for every i in [0, nth), each exactly once: side by side on the pool
    /// (slice 0 on the caller) with OpenBLAS held to one thread, or one after another on the
    /// caller when nth > threads(), when called from inside a slice, or while another thread
    /// runs a job on this context. Callers that keep per-slice sums and add them in slice
    /// order get the same bits either way: results depend on nth, never on timing. A slice
    /// that throws (on any thread) lets the others finish, then the first exception is
    /// rethrown here; the context stays usable.
    void run(int nth, const std::function<void(Slice)>& fn) const;

    /// A context of one thread that leaves BLAS alone: for models no session configured.
    static const KernelContext& serial();

private:
    int m_threads = 1;
    int m_blasThreads = 0;
    std::unique_ptr<ThreadPool> m_pool;  // null with one thread
    mutable std::mutex m_call;           // one job at a time on this context's pool
};

/// The BLAS's current thread count: OpenBLAS's, or the count MKL threads adopt (0: neither
/// BLAS, or MKL left at its own count).
int blasThreadsNow();

/// With MKL (PyPI's LibTorch), gives the calling thread the count OpenBLAS would have now
/// (MKL counts per thread). Cheap; called where the count may change for a thread: a model's
/// forward, each slice of a job, the caller after its job. Nothing with OpenBLAS or another BLAS.
void adoptBlasThreads();

/// Whether this process's BLAS has a thread count set here (OpenBLAS, MKL): LibTorch's own pool
/// then keeps one thread (applyProcessPolicy). False for the reference BLAS.
bool blasThreadsManaged();

/// While alive, OpenBLAS runs every product on its calling thread (counted across contexts).
class SerialBlas {
public:
    SerialBlas();
    ~SerialBlas();
    SerialBlas(const SerialBlas&) = delete;
    SerialBlas& operator=(const SerialBlas&) = delete;
};

}  // namespace lengen::engine::model::kernels
