#pragma once
// The CPU thread and allocator policy shared by training, evaluation and probes.

#include <memory>

namespace lengen::engine::model::kernels {
class KernelContext;
}

namespace lengen::engine::training {

/// The kernel context (model/kernel_context.h) a training or evaluation session owns and hands
/// to its model: `threads` > 0: that many kernel and BLAS threads; 0: all cores for the
/// kernels, and BLAS one for models narrower than 128, else all cores. Torch's own pool
/// (process-wide) gets one thread whenever OpenBLAS is the BLAS (see threads.cpp). Also keeps
/// freed heap memory for the next step (glibc mallopt, once per process).
/// LENGEN_NO_THREAD_POLICY: one kernel thread, BLAS and Torch as they are.
std::shared_ptr<model::kernels::KernelContext> makeKernelContext(int threads, int hiddenSize);

/// Hands the heap the allocator policy keeps back to the system when it goes out of scope:
/// declared before a training session, it runs after the session's buffers are freed.
struct HeapRelease {
    HeapRelease() = default;
    HeapRelease(const HeapRelease&) = delete;
    HeapRelease& operator=(const HeapRelease&) = delete;
    ~HeapRelease();
};

}  // namespace lengen::engine::training
