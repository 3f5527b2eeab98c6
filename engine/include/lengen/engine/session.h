#pragma once
// How a training or evaluation session computes, as a value the caller passes in: which layer
// path, fused attention on a GPU, CUDA graphs, and the thread and allocator policy. The
// environment (LENGEN_FUSED=0, …) is read by the front ends' main()s only
// (sessionSwitchesFromEnvironment), and process-wide settings are applied once, by the front
// end (applyProcessPolicy): a session never changes them for the whole process.
//
// Adding a switch: a field here, its variable in sessionSwitchesFromEnvironment, and the one
// place that reads it (docs/architecture.md).

#include <string>

namespace lengen::engine {

struct SessionSwitches {
    bool fused = true;  ///< CPU training as fused layers (false: modules op by op; LENGEN_FUSED=0)
    bool fusedAttention = true;  ///< LibTorch's fused attention on a GPU (LENGEN_FUSED_ATTENTION=0)
    bool cudaGraphs = true;      ///< a GPU step as one CUDA graph (LENGEN_CUDA_GRAPHS=0)
    /// Mamba's scan off the CPU as a parallel scan (false: position by position;
    /// LENGEN_PARALLEL_SCAN=0)
    bool parallelScan = true;
    /// On a GPU, RMSNorm as LibTorch's fused kernel (LENGEN_DEVICE_FUSION=0: written out)
    bool deviceFusion = true;
    /// On a GPU, the residual add with the norm after it and SwiGLU's gate as LenGen's fused
    /// kernels (engine/src/device; builds with nvcc only). Off until measured on a device:
    /// LENGEN_DEVICE_KERNELS=1 turns it on.
    bool deviceKernels = false;
    /// On a GPU, rotary embedding of q and k as one LenGen kernel each way, in the linear
    /// layers' layout (engine/src/device; builds with nvcc only): the standard bf16 step
    /// 1.13-1.20x on an H200 (docs/gpu.md). LENGEN_DEVICE_ROTARY=0 keeps the ops.
    bool deviceRotary = true;
    /// The next step's batch drawn on the CPU while the device computes this step (issue 74:
    /// the graphed bf16 step idled 5 of its 28 ms while the host sampled). The same draws in
    /// the same order, so runs and checkpoints are bit for bit those without it (tst_training);
    /// off until measured on a device: LENGEN_PREFETCH=1 turns it on.
    bool prefetchBatch = false;
    /// On the CPU, one thread's matrix products on oneDNN where LibTorch brings it, the system
    /// BLAS otherwise (LENGEN_ONEDNN=0: the BLAS always). Signals wait while they run
    /// (docs/performance.md). Process-wide: applyProcessPolicy sets it.
    bool onednnGemm = true;
    /// LenGen's thread and allocator policy (src/train/threads.cpp); false: one kernel thread,
    /// LibTorch's and BLAS's defaults, glibc's allocator defaults (LENGEN_NO_THREAD_POLICY,
    /// what bench/train_speed.sh compares against).
    bool threadPolicy = true;
    /// The `lengen` that sweep cells and Slurm tasks run (LENGEN_CLI; "" = the one beside this
    /// executable, lengenExecutable()). Tests put stand-ins here.
    std::string cellExecutable;
};

/// The switches the environment asks for: each variable above set to 0 (any value for
/// LENGEN_NO_THREAD_POLICY) turns its switch off. Read by main()s, never by a session.
SessionSwitches sessionSwitchesFromEnvironment();

/// The process-wide half of the thread and allocator policy, set once by the front end before
/// any session: LibTorch's intra-op pool (1 thread where OpenBLAS does the products, so the two
/// pools never spin on the same cores; all cores otherwise) and glibc's heap kept between
/// steps (mallopt), none of it when `switches.threadPolicy` is false; and where one thread's
/// products run (`onednnGemm`), always. Idempotent.
void applyProcessPolicy(const SessionSwitches& switches);

}  // namespace lengen::engine
