#pragma once
// The threads the fused layers' own loops (attention per batch item and head, SwiGLU, GELU) are
// split over. BLAS has its own pool for the matrix products; between two products its threads
// only yield, so without this the second core idles through every element-wise pass of a
// standard-size step. The pool's workers spin for 100 us after a job, then sleep on a condition
// variable (a busy machine loses little to them), and the split is static, so results do not
// depend on timing. A call from inside a running job (a kernel nested in a fused layer's
// per-part work) runs serially on its thread.

#include <cstdint>
#include <functional>

namespace lengen::engine::model::kernels {

/// Threads parallelFor uses (1 = the caller only). applyThreadPolicy sets it to the BLAS threads.
void setKernelThreads(int n);
int kernelThreads();

/// Calls fn(begin, end, part) for kernelThreads() contiguous parts of [0, n) (fewer when a part
/// would hold less than `grain` items), part 0 on the caller, and returns when all are done.
void parallelFor(std::int64_t n, std::int64_t grain,
                 const std::function<void(std::int64_t, std::int64_t, int)>& fn);

/// Calls fn(part) for every part in [0, parts), each exactly once: on the kernel threads when
/// the pool is free and has that many, else one after another on the caller (nested in another
/// job, or another thread's job running). Callers that keep per-part sums therefore get the same
/// result either way; parts > kernelThreads() always runs serially.
void runParts(int parts, const std::function<void(int)>& fn);

}  // namespace lengen::engine::model::kernels
