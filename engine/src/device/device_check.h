#pragma once
// The fused device kernels (device_fused.h) against the written-out ops they replace, forward
// and backward, in float32 and bfloat16, with both timed: one check that tst_model runs where a
// GPU is, and bench_kernels prints as JSON on the GPU machines (which have no Qt for tests).

#include <string>
#include <vector>

namespace lengen::engine::device {

struct KernelCheck {
    std::string kernel;   ///< "add_rms_norm", "swiglu" or "rotary"
    std::string dtype;    ///< "float32" or "bfloat16"
    double forward = 0;   ///< largest |fused - ops| / largest |ops|, over the outputs
    double backward = 0;  ///< the same over every input's gradient
    double fusedMs = 0;   ///< forward + backward, per call (0: not timed)
    double opsMs = 0;
};

/// Checks on `rows` rows of width `hidden` (the norm) and `intermediate` (SwiGLU), inputs drawn
/// from a fixed seed on the GPU; `reps` timed calls of each (0: none). Empty without a GPU or
/// without the kernels.
std::vector<KernelCheck> checkDeviceKernels(long rows, int hidden, int intermediate, int reps);

}  // namespace lengen::engine::device
