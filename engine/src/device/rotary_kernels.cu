// Rotary position embedding of q and k in one launch (device_kernels.h, rotaryApply; issue 74):
// replaces the op path's x*cos, rotate-half's neg and cat, and the addcmul (four launches and
// two [B, T, H, d] temporaries per tensor each way, eight launches a layer forward) and writes
// the result in the linear layer's own [B, T, heads, d] layout, so the attention reads q, k
// and v alike and their gradients come back without strided copies.
//
// One thread per rotation pair (i, i + d/2) of one head of one token: consecutive threads
// write consecutive values, and read them so too when the input (a view with any strides but
// a unit last one) is the linear output's transpose, its usual form.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "device/device_kernels.h"
#include "device/device_values.cuh"

namespace lengen::engine::device {

namespace {

constexpr int kThreads = 256;

// Forward:  y1 = x1 c1 - x2 s1,  y2 = x2 c2 + x1 s2   (y = x cos + rot(x) sin, rot = [-x2 | x1])
// Inverse:  x1 = y1 c1 + y2 s2,  x2 = y2 c2 - y1 s1   (the transpose: the backward of the above)
// c1 = cos[t, i], c2 = cos[t, i + d/2], likewise s; tables float32 [T, d].
// One block per token row (b, t) of q (blockIdx.y 0) or k (1); its threads take the row's
// heads * d/2 pairs. No 64-bit division per element: the first version divided the flat pair
// index by d/2, heads and T in int64 and ran at a tenth of the memory's rate (4 ms a step at
// N = 201 on an H200).
template <typename T>
__global__ void rotaryKernel(RotaryOperand q, RotaryOperand k, const float* cos, const float* sin,
                             int t, int heads, int d, bool inverse)
{
    const RotaryOperand& op = blockIdx.y == 0 ? q : k;
    if (!op.in)
        return;
    const int half = d / 2;
    const int row = blockIdx.x;  // b * T + tt
    const int b = row / t, tt = row - b * t;
    const auto* in = static_cast<const T*>(op.in) + b * op.strideB + tt * op.strideT;
    auto* out = static_cast<T*>(op.out) + static_cast<std::int64_t>(row) * heads * d;
    const float* c = cos + static_cast<std::int64_t>(tt) * d;
    const float* s = sin + static_cast<std::int64_t>(tt) * d;
    for (int p = threadIdx.x; p < heads * half; p += blockDim.x) {
        const int h = p / half, i = p - h * half;
        const std::int64_t src = h * op.strideH + i;
        const int dst = h * d + i;
        const float x1 = load(in, src), x2 = load(in, src + half);
        const float c1 = c[i], c2 = c[i + half], s1 = s[i], s2 = s[i + half];
        if (!inverse) {
            store(out, dst, x1 * c1 - x2 * s1);
            store(out, dst + half, x2 * c2 + x1 * s2);
        } else {
            store(out, dst, x1 * c1 + x2 * s2);
            store(out, dst + half, x2 * c2 - x1 * s1);
        }
    }
}

}  // namespace

void rotaryApply(Dtype type, RotaryOperand q, RotaryOperand k, const float* cos, const float* sin,
                 std::int64_t batch, int t, int heads, int d, bool inverse, void* stream)
{
    const std::int64_t rows = batch * t;
    if (rows == 0 || heads * d == 0)
        return;
    // rows < 2^31 (the grid's x limit): a [B, T] batch of that size would not fit in memory.
    const int pairs = heads * (d / 2);
    const int threads = std::min(kThreads, (pairs + 31) / 32 * 32);
    const dim3 grid(static_cast<unsigned>(rows), 2);
    auto s = static_cast<cudaStream_t>(stream);
    if (type == Dtype::BFloat16)
        rotaryKernel<__nv_bfloat16><<<grid, threads, 0, s>>>(q, k, cos, sin, t, heads, d, inverse);
    else
        rotaryKernel<float><<<grid, threads, 0, s>>>(q, k, cos, sin, t, heads, d, inverse);
}

}  // namespace lengen::engine::device
