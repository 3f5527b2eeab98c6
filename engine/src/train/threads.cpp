#include "train/threads.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>

#include <torch/torch.h>

#include "lengen/engine/session.h"
#include "model/cpu_kernels.h"
#include "model/kernel_context.h"

namespace lengen::engine::training {

namespace {
// Torch's OpenMP pool and OpenBLAS's own pthread pool both busy-wait on the same cores; with
// both at 2 threads on a 2-core machine a step is 1.7x (tiny model) to 2.8x (micro model)
// slower than giving every thread to BLAS and one to Torch (bench/README.md). The same holds
// for MKL inside PyPI's LibTorch (its products on Torch's OpenMP threads): with Torch at 2
// threads, two test processes on a 2-core machine ran an evaluation 4.3x slower than at 1
// (79 s against 18 s; alone 14 s against 17 s). With the reference BLAS Torch gets the threads.
// Default threads: all cores for the kernel pool, which the fused layers and blocks split their
// batch over (each part with single-threaded products; quick RoPE preset 52 -> 98 steps/s with
// 2). BLAS's own threads only serve the products outside them (the module path: evaluation,
// probes); below hidden size 128 those are too small to split (27.6 vs 27.8 steps/s) and a
// second spinning BLAS thread collapses when the machine is busy, so they get one.
constexpr int kSmallModelHidden = 128;
}  // namespace

// A training step allocates and frees the same few dozen buffers (0.1-2 MB at the quick size,
// up to 53 MB and ~2 GB in all at the reference's standard size) every step. With glibc's
// defaults the heap top is trimmed and regrown, and the larger buffers are fresh mmaps, so every
// step pays page faults to zero new pages: ~20 % of a quick-preset step, ~5 % of a standard one
// (bench/README.md). glibc caps the mmap threshold at 32 MB, so mmaps are switched off instead,
// and the heap is never trimmed while a job runs: the memory of one step is the memory of the
// next. HeapRelease hands it back when a training ends. Process-wide: applyProcessPolicy.

void applyAllocatorPolicy()
{
    static const bool once = [] {
        mallopt(M_MMAP_MAX, 0);  // glibc still maps a thread arena's chunks too big for a heap
        mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
        mallopt(M_TOP_PAD, 64 << 20);
        return true;
    }();
    (void)once;
}

}  // namespace lengen::engine::training

namespace lengen::engine {

void applyProcessPolicy(const SessionSwitches& switches)
{
    model::kernels::useOnednn(switches.onednnGemm);
    if (!switches.threadPolicy)
        return;
    training::applyAllocatorPolicy();
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    torch::set_num_threads(model::kernels::blasThreadsManaged() ? 1 : cores);
}

}  // namespace lengen::engine

namespace lengen::engine::training {

std::shared_ptr<model::kernels::KernelContext> makeKernelContext(int threads, int hiddenSize,
                                                                 const SessionSwitches& switches)
{
    if (!switches.threadPolicy)  // bench/train_speed.sh measures the default
        return std::make_shared<model::kernels::KernelContext>(1, 0);
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int n = threads > 0 ? threads : cores;
    const int blas = threads > 0 ? threads : (hiddenSize < kSmallModelHidden ? 1 : cores);
    // The context sets the BLAS's thread count for the products outside slices: OpenBLAS's, or
    // MKL's per thread (PyPI's LibTorch); LibTorch's own pool stays as applyProcessPolicy set it.
    return std::make_shared<model::kernels::KernelContext>(n, blas);
}

HeapRelease::~HeapRelease()
{
    if (m_release)
        malloc_trim(0);
}

}  // namespace lengen::engine::training
