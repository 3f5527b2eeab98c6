#pragma once
// Element-wise parts of the fused Mamba block (fused_mamba.cpp) over raw float32 buffers: the
// depthwise causal convolution with its SiLU, softplus, and the SiLU gate, forward and backward.
// No Torch types. Rows are tokens (b, t), t cycling over T; a buffer whose values are a column
// range of a wider one (x and z in the in_proj output [rows, 2E]) is passed with its row stride.

#include <cstdint>

namespace lengen::engine::model::kernels {

/// `batch` items of T tokens, E channels, a K-tap filter per channel.
struct ConvShape {
    std::int64_t batch = 0;
    int t = 0, e = 0, k = 0;
};

/// cv[b, t, c] = bias[c] + sum_j w[c, j] x[b, t - (K-1) + j, c] (x before t = 0 is zero:
/// PyTorch's Conv1d with padding K-1, first T outputs), v = silu(cv). x has row stride ldx;
/// w [E, K]; cv, v [rows, E].
void convSiluForward(const ConvShape& s, const float* x, int ldx, const float* w, const float* bias,
                     float* cv, float* v);

/// From dv [rows, E] (overwritten with dL/dcv): dx (row stride lddx) written; dw [E, K] and
/// db [E] accumulated.
void convSiluBackward(const ConvShape& s, const float* x, int ldx, const float* w, const float* cv,
                      float* dv, float* dx, int lddx, float* dw, float* db);

/// delta = softplus(lin) = log(1 + exp(lin)), lin above 20 passed through (PyTorch's
/// threshold); n values.
void softplusForward(const float* lin, float* delta, std::int64_t n);
/// dlin = ddelta * sigmoid(lin) (ddelta above the threshold); dlin may be ddelta.
void softplusBackward(const float* lin, const float* ddelta, float* dlin, std::int64_t n);

/// g = y * silu(z) for y, g [rows, E] and z with row stride ldz.
void gateForward(const float* y, const float* z, int ldz, float* g, std::int64_t rows, int e);
/// dy = dg * silu(z) [rows, E]; dz = dg * y * silu'(z) (row stride lddz).
void gateBackward(const float* y, const float* z, int ldz, const float* dg, float* dy, float* dz,
                  int lddz, std::int64_t rows, int e);

}  // namespace lengen::engine::model::kernels
