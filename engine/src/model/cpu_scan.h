#pragma once
// Mamba's selective scan (reference §3.4 step 6) over raw float32 buffers, forward and backward:
//   s_t = exp(delta_t * A) * s_{t-1} + delta_t * B_t * v_t,   y_t = <s_t, C_t> + D * v_t
// per (batch item, channel) row. No Torch types; model/selective_scan.cpp is the autograd
// function around these. The backward recomputes one row's states (T x N floats) instead of
// keeping the [B, T, E, N] history.

#include <cstdint>

#include "model/kernel_context.h"

namespace lengen::engine::model::kernels {

/// B batch items of T steps, E channels, N-wide state; B and C (and their gradients) have row
/// stride ldbc (0: N), so they can be column ranges of the x_proj output.
struct ScanShape {
    std::int64_t b = 0;
    int t = 0, e = 0, n = 0;
    int ldbc = 0;
    int bcStride() const { return ldbc > 0 ? ldbc : n; }
};

/// v, delta [B, T, E]; A [E, N]; B, C [B, T, N] (row stride bcStride()); D [E].
struct ScanInputs {
    const float *v, *delta, *A, *B, *C, *D;
};

/// Gradients in the inputs' shapes. v, delta, B and C are written for the rows of the slice's
/// items; A and D (sums over the items) are added to, so that each slice can sum into its own.
struct ScanGrads {
    float *v, *delta, *A, *B, *C, *D;
};

/// y [B, T, E] at the slice's batch items (all B by default), on the calling thread.
void scanForward(const ScanShape& s, const ScanInputs& in, float* y, Slice slice = {});
/// The six gradients from gy [B, T, E] at the slice's batch items (ScanGrads), items in order.
void scanBackward(const ScanShape& s, const ScanInputs& in, const float* gy, const ScanGrads& g,
                  Slice slice = {});

}  // namespace lengen::engine::model::kernels
