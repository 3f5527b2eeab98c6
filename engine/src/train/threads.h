#pragma once
// The CPU thread and allocator policy shared by training, evaluation and probes.

namespace lengen::engine::training {

/// `threads` > 0: that many kernel-pool and BLAS threads; 0: all cores for the kernel pool
/// (model/cpu_threads.h), and BLAS one for models narrower than 128, else all cores. Torch's
/// own pool gets one thread whenever OpenBLAS is the BLAS (see threads.cpp). Also
/// keeps freed heap memory for the next step (glibc mallopt, once per process).
void applyThreadPolicy(int threads, int hiddenSize);

/// Hands the heap the allocator policy keeps back to the system when it goes out of scope:
/// declared before a training session, it runs after the session's buffers are freed.
struct HeapRelease {
    HeapRelease() = default;
    HeapRelease(const HeapRelease&) = delete;
    HeapRelease& operator=(const HeapRelease&) = delete;
    ~HeapRelease();
};

}  // namespace lengen::engine::training
