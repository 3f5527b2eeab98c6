#include "model/cpu_kernels.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

#include "model/cpu_math.h"
#include "model/kernel_context.h"

namespace lengen::engine::model::kernels {

using detail::expApprox;

namespace {

// Fortran BLAS sgemm (column-major), as exported by libblas.so.3 (OpenBLAS, reference BLAS).
using Sgemm = void (*)(const char*, const char*, const int*, const int*, const int*, const float*,
                       const float*, const int*, const float*, const int*, const float*, float*,
                       const int*);

Sgemm sgemm()
{
    static const Sgemm fn = reinterpret_cast<Sgemm>(dlsym(RTLD_DEFAULT, "sgemm_"));
    return fn;
}

// oneDNN's row-major sgemm (dnnl.h), from the libdnnl.so.2 that Debian's LibTorch links. On the
// quick layer's twelve product shapes at one thread it runs 196 GFLOP/s where OpenBLAS 0.3.21
// runs 158 (Intel Xeon with AVX-512, 2026-11-28; docs/performance.md). It threads with OpenMP,
// whose count is the calling thread's: a product here takes one thread, set around the call
// and put back (LibTorch's own pool reads the same count).
//
// oneDNN up to 3.11 (Debian 12 has 2.6.3) points the stack pointer into a heap workspace while
// its generated AVX2 and AVX-512 sgemm kernels run (oneDNN issue 4845, fixed upstream by pull
// request 4855). A signal handled on that thread then pushes its frame onto the heap: Ctrl-C or
// `lengen stop` landing inside a product corrupted the trainer's heap, and a SIGUSR1 sent every
// 20 us to a thread in these products aborts the process within a second (tst_fused_layer::
// onednnProductsHoldSignals). So the calling thread holds the asynchronous signals for the call
// (SignalsHeld, around a job or a lone product); they are delivered the moment it ends.
struct Onednn {
    using Gemm = int (*)(char, char, std::int64_t, std::int64_t, std::int64_t, float, const float*,
                         std::int64_t, const float*, std::int64_t, float, float*, std::int64_t);
    using GetThreads = int (*)();
    using SetThreads = void (*)(int);
    Gemm gemm = reinterpret_cast<Gemm>(dlsym(RTLD_DEFAULT, "dnnl_sgemm"));
    GetThreads get = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
    SetThreads set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));

    bool usable() const { return gemm && get && set; }
};

const Onednn* onednn()
{
    static const Onednn found;
    return found.usable() ? &found : nullptr;
}

std::atomic<bool> g_onednnWanted{true};

// The depth of SignalsHeld scopes on this thread.
thread_local int t_signalsHeldDepth = 0;

// Every signal a handler may catch while a product runs, less the ones a fault raises on the
// thread itself (those cannot wait, and a crash stays a crash).
const sigset_t& asynchronousSignals()
{
    static const sigset_t set = [] {
        sigset_t s;
        sigfillset(&s);
        for (int sync : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT})
            sigdelset(&s, sync);
        return s;
    }();
    return set;
}

}  // namespace

// Only the outermost scope on a thread pays the two rt_sigprocmask calls (about a microsecond
// on these VMs): a job holds them once for its hundreds of products (KernelContext::run).
// Only where oneDNN's products are wanted: with the BLAS alone no mask changes.
SignalsHeld::SignalsHeld()
{
    if (t_signalsHeldDepth++ > 0 || !onednn() || !g_onednnWanted.load(std::memory_order_relaxed))
        return;
    m_active = pthread_sigmask(SIG_BLOCK, &asynchronousSignals(), &m_before) == 0;
}

SignalsHeld::~SignalsHeld()
{
    --t_signalsHeldDepth;
    if (m_active)
        pthread_sigmask(SIG_SETMASK, &m_before, nullptr);
}

bool hasBlas() { return sgemm() != nullptr || onednn() != nullptr; }

void useOnednn(bool on) { g_onednnWanted.store(on, std::memory_order_relaxed); }

const char* gemmBackend()
{
    return onednn() && g_onednnWanted.load(std::memory_order_relaxed) ? "oneDNN" : "BLAS";
}

void gemm(bool transA, bool transB, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc)
{
    // One thread's products (inside a slice, or a context that gives BLAS one thread) go to
    // oneDNN; a product that the BLAS threads stays with it.
    const Onednn* d = onednn();
    if (d && g_onednnWanted.load(std::memory_order_relaxed) &&
        (blasThreadsNow() <= 1 || !sgemm())) {
        const int before = d->get();
        if (before != 1)
            d->set(1);
        SignalsHeld held;  // no signal frame may land on oneDNN's heap stack (see Onednn)
        d->gemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c,
                ldc);
        if (before != 1)
            d->set(before);
        return;
    }
    // Column-major sees every row-major matrix transposed: C^T = op(B)^T op(A)^T.
    const char ta = transB ? 'T' : 'N', tb = transA ? 'T' : 'N';
    sgemm()(&ta, &tb, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc);
}

LENGEN_CLONES
void ropeForward(float* v, int ld, std::int64_t batch, int t, int heads, int d, const float* cos,
                 const float* sin)
{
    const int half = d / 2;
    for (std::int64_t b = 0; b < batch; ++b)
        for (int p = 0; p < t; ++p) {
            const float* c = cos + static_cast<std::int64_t>(p) * d;
            const float* s = sin + static_cast<std::int64_t>(p) * d;
            float* row = v + (b * t + p) * ld;
            for (int hd = 0; hd < heads; ++hd) {
                float* x = row + hd * d;
#pragma omp simd
                for (int j = 0; j < half; ++j) {
                    const float lo = x[j], hi = x[j + half];
                    x[j] = lo * c[j] - hi * s[j];
                    x[j + half] = hi * c[j + half] + lo * s[j + half];
                }
            }
        }
}

LENGEN_CLONES
void ropeBackward(float* dv, int ld, std::int64_t batch, int t, int heads, int d, const float* cos,
                  const float* sin)
{
    const int half = d / 2;
    for (std::int64_t b = 0; b < batch; ++b)
        for (int p = 0; p < t; ++p) {
            const float* c = cos + static_cast<std::int64_t>(p) * d;
            const float* s = sin + static_cast<std::int64_t>(p) * d;
            float* row = dv + (b * t + p) * ld;
            for (int hd = 0; hd < heads; ++hd) {
                float* x = row + hd * d;
#pragma omp simd
                for (int j = 0; j < half; ++j) {
                    const float lo = x[j], hi = x[j + half];
                    x[j] = lo * c[j] + hi * s[j + half];
                    x[j + half] = hi * c[j + half] - lo * s[j];
                }
            }
        }
}

}  // namespace lengen::engine::model::kernels
