#include "train/threads.h"

#include <dlfcn.h>
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include <torch/torch.h>

#include "model/cpu_threads.h"

namespace lengen::engine::training {

namespace {
// Torch's OpenMP pool and OpenBLAS's own pthread pool both busy-wait on the same cores; with
// both at 2 threads on a 2-core machine a step is 1.7x (tiny model) to 2.8x (micro model)
// slower than giving every thread to BLAS and one to Torch (bench/README.md). With another
// BLAS (MKL, the reference BLAS) Torch gets the threads instead.
// Default BLAS threads: at hidden size < 128 the GEMMs are too small to split (2 threads: 27.6
// vs 27.8 steps/s on the quick preset) and a second spinning thread collapses when the machine
// is busy; from 256 on, 2 threads are 1.5x faster (bench/README.md).
constexpr int kSmallModelHidden = 128;

// A training step allocates and frees the same few dozen buffers (0.1-2 MB at the quick size)
// every step. With glibc's defaults the heap top is trimmed and regrown, and the larger buffers
// are fresh mmaps, so every step pays page faults to zero new pages: ~20 % of a quick-preset
// step (bench/README.md). Keeping up to 256 MB of freed heap and growing it in 64 MB strides
// makes the memory of one step the memory of the next.
void applyAllocatorPolicy()
{
    static const bool once = [] {
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 256 << 20);
        mallopt(M_TOP_PAD, 64 << 20);
        return true;
    }();
    (void)once;
}

}  // namespace

void applyThreadPolicy(int threads, int hiddenSize)
{
    if (std::getenv("LENGEN_NO_THREAD_POLICY"))  // bench/train_speed.sh measures the default
        return;
    applyAllocatorPolicy();
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int n = threads > 0 ? threads : (hiddenSize < kSmallModelHidden ? 1 : cores);
    using SetThreads = void (*)(int);
    auto* openblas = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    // The fused layers' own loops use as many threads as BLAS (they run between its products).
    model::kernels::setKernelThreads(n);
    if (openblas) {
        torch::set_num_threads(1);
        openblas(n);
    } else {
        torch::set_num_threads(n);
    }
}

}  // namespace lengen::engine::training
