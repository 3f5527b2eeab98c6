#pragma once
// Fused elementwise kernels for the Llama layer on a GPU (issue 58, item 2), compiled by the
// CUDA toolkit's nvcc where the build has one (device_kernels.cu), and reached only through
// model/device_fused.h. No CUDA or Torch headers here: pointers, sizes, a dtype tag and the
// stream as void* (cudaStream_t). Row-major, contiguous; `rows` rows of width `h`.
//
// add + RMSNorm:  s = a + b (rounded to T), y = s * rstd * w, rstd = 1 / sqrt(mean(s²) + eps).
// Its backward:   ds = dsum + rstd * (dy*w - n * mean(dy*w*n)), n = s * rstd (the gradient of
//                 a and of b); dw = sum over rows of dy * n (two passes: partial sums per chunk
//                 of rows, then over the chunks in order, so the sum is reproducible).
// SwiGLU:         o = silu(g) * u; dg = do * u * s * (1 + g (1 - s)), du = do * silu(g),
//                 s = sigmoid(g). Every sum and product in float32; T is float32 or bfloat16.

#include <cstdint>

namespace lengen::engine::device {

enum class Dtype { Float32, BFloat16 };

/// Whether this build has the kernels (nvcc was found when it was configured).
bool kernelsBuilt();

void addRmsNormForward(Dtype t, const void* a, const void* b, const float* w, void* sum, void* y,
                       float* rstd, std::int64_t rows, int h, float eps, void* stream);
/// `dsum` may be null (no gradient reaches the sum itself). `partial` holds
/// rmsPartialRows(rows) * h floats of scratch.
void addRmsNormBackward(Dtype t, const void* sum, const float* w, const float* rstd, const void* dy,
                        const void* dsum, void* ds, float* dw, float* partial, std::int64_t rows,
                        int h, void* stream);
std::int64_t rmsPartialRows(std::int64_t rows);

void swigluForward(Dtype t, const void* g, const void* u, void* o, std::int64_t n, void* stream);
void swigluBackward(Dtype t, const void* g, const void* u, const void* dout, void* dg, void* du,
                    std::int64_t n, void* stream);

/// One of rotaryApply's two tensors: `in` [B, T, heads, d] with the given strides (the last
/// one 1), `out` contiguous [B, T, heads, d]. A null `in` skips it.
struct RotaryOperand {
    const void* in = nullptr;
    void* out = nullptr;
    std::int64_t strideB = 0, strideT = 0, strideH = 0;
};

/// Rotary embedding of q and k (rotary_kernels.cu) with float32 tables cos, sin [T, d] in the
/// rotate-half pairing (i, i + d/2): y = x cos + rot(x) sin; `inverse`, its transpose (the
/// gradient: dx = dy cos - rot(dy sin)). Sums in float32.
void rotaryApply(Dtype type, RotaryOperand q, RotaryOperand k, const float* cos, const float* sin,
                 std::int64_t batch, int t, int heads, int d, bool inverse, void* stream);

}  // namespace lengen::engine::device
