#pragma once
// The CPU thread and allocator policy shared by training, evaluation and probes.

#include <memory>

#include "lengen/engine/session.h"

namespace lengen::engine::model::kernels {
class KernelContext;
}

namespace lengen::engine::training {

/// The kernel context (model/kernel_context.h) a training or evaluation session owns and hands
/// to its model: `threads` > 0: that many kernel and BLAS threads; 0: all cores for the
/// kernels, and BLAS one for models narrower than 128, else all cores. Sets nothing for the
/// whole process (applyProcessPolicy, lengen/engine/session.h, does that once).
/// switches.threadPolicy false: one kernel thread, BLAS and Torch as they are.
std::shared_ptr<model::kernels::KernelContext> makeKernelContext(int threads, int hiddenSize,
                                                                 const SessionSwitches& switches);

/// glibc's heap kept between steps (mallopt; once per process): applyProcessPolicy calls it.
void applyAllocatorPolicy();

/// Hands the heap the allocator policy keeps back to the system when it goes out of scope:
/// declared before a training session, it runs after the session's buffers are freed. Nothing
/// when the thread policy is off.
class HeapRelease {
public:
    explicit HeapRelease(bool release) : m_release(release) {}
    HeapRelease(const HeapRelease&) = delete;
    HeapRelease& operator=(const HeapRelease&) = delete;
    ~HeapRelease();

private:
    bool m_release;
};

}  // namespace lengen::engine::training
