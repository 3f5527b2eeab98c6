// The kernels of device_kernels.h. One block of 256 threads per row for the norms (a row is
// the hidden size: 64 to 1024 here), a grid-stride loop for SwiGLU.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "device/device_kernels.h"
#include "device/device_values.cuh"

namespace lengen::engine::device {

namespace {

constexpr int kThreads = 256;
constexpr int kChunkRows = 256;  // rows per partial sum of dw

// The sum of v over the block (blockDim.x a multiple of 32), the same value in every thread.
__device__ float blockSum(float v, float* shared)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < static_cast<int>(blockDim.x >> 5) ? shared[lane] : 0.f;
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_xor_sync(0xffffffffu, v, o);
        if (lane == 0)
            shared[32] = v;
    }
    __syncthreads();
    const float total = shared[32];
    __syncthreads();
    return total;
}

template <typename T>
__global__ void addRmsNormForwardKernel(const T* a, const T* b, const float* w, T* sum, T* y,
                                        float* rstd, int h, float eps)
{
    __shared__ float shared[33];
    const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * h;
    float squares = 0.f;
    for (int i = threadIdx.x; i < h; i += blockDim.x) {
        store(sum, base + i, load(a, base + i) + load(b, base + i));
        const float s = load(sum, base + i);  // as stored (rounded to T)
        squares += s * s;
    }
    const float r = rsqrtf(blockSum(squares, shared) / h + eps);
    if (threadIdx.x == 0)
        rstd[blockIdx.x] = r;
    for (int i = threadIdx.x; i < h; i += blockDim.x)
        store(y, base + i, load(sum, base + i) * r * w[i]);
}

template <typename T>
__global__ void addRmsNormBackwardKernel(const T* sum, const float* w, const float* rstd,
                                         const T* dy, const T* dsum, T* ds, int h)
{
    __shared__ float shared[33];
    const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * h;
    const float r = rstd[blockIdx.x];
    float dot = 0.f;
    for (int i = threadIdx.x; i < h; i += blockDim.x)
        dot += load(dy, base + i) * w[i] * load(sum, base + i) * r;
    const float mean = blockSum(dot, shared) / h;
    for (int i = threadIdx.x; i < h; i += blockDim.x) {
        const float n = load(sum, base + i) * r;
        float g = r * (load(dy, base + i) * w[i] - n * mean);
        if (dsum)
            g += load(dsum, base + i);
        store(ds, base + i, g);
    }
}

// partial[c, i] = sum over rows c*kChunkRows .. of dy[r, i] * sum[r, i] * rstd[r].
template <typename T>
__global__ void rmsWeightPartialKernel(const T* sum, const float* rstd, const T* dy,
                                       float* partial, std::int64_t rows, int h)
{
    const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kChunkRows;
    const std::int64_t last = min(first + kChunkRows, rows);
    for (int i = threadIdx.x; i < h; i += blockDim.x) {
        float acc = 0.f;
        for (std::int64_t r = first; r < last; ++r)
            acc += load(dy, r * h + i) * load(sum, r * h + i) * rstd[r];
        partial[static_cast<std::int64_t>(blockIdx.x) * h + i] = acc;
    }
}

__global__ void rmsWeightTotalKernel(const float* partial, float* dw, std::int64_t chunks, int h)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < h; i += gridDim.x * blockDim.x) {
        float acc = 0.f;
        for (std::int64_t c = 0; c < chunks; ++c)
            acc += partial[c * h + i];
        dw[i] = acc;
    }
}

template <typename T>
__global__ void swigluForwardKernel(const T* g, const T* u, T* o, std::int64_t n)
{
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const float x = load(g, i);
        store(o, i, x / (1.f + __expf(-x)) * load(u, i));
    }
}

template <typename T>
__global__ void swigluBackwardKernel(const T* g, const T* u, const T* dout, T* dg, T* du,
                                     std::int64_t n)
{
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const float x = load(g, i), d = load(dout, i);
        const float s = 1.f / (1.f + __expf(-x));
        store(dg, i, d * load(u, i) * s * (1.f + x * (1.f - s)));
        store(du, i, d * x * s);
    }
}

unsigned gridFor(std::int64_t n)
{
    const std::int64_t blocks = (n + kThreads - 1) / kThreads;
    return static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8);
}

cudaStream_t asStream(void* s) { return static_cast<cudaStream_t>(s); }

// Calls fn with a value of the element type `t` names (its type is what fn launches with).
template <typename Fn>
void byType(Dtype t, Fn&& fn)
{
    if (t == Dtype::Float32)
        fn(float{});
    else
        fn(__nv_bfloat16{});
}

}  // namespace

bool kernelsBuilt() { return true; }

std::int64_t rmsPartialRows(std::int64_t rows) { return (rows + kChunkRows - 1) / kChunkRows; }

void addRmsNormForward(Dtype t, const void* a, const void* b, const float* w, void* sum, void* y,
                       float* rstd, std::int64_t rows, int h, float eps, void* stream)
{
    if (rows == 0)
        return;
    byType(t, [&](auto zero) {
        using T = decltype(zero);
        addRmsNormForwardKernel<<<rows, kThreads, 0, asStream(stream)>>>(
            static_cast<const T*>(a), static_cast<const T*>(b), w, static_cast<T*>(sum),
            static_cast<T*>(y), rstd, h, eps);
    });
}

void addRmsNormBackward(Dtype t, const void* sum, const float* w, const float* rstd,
                        const void* dy, const void* dsum, void* ds, float* dw, float* partial,
                        std::int64_t rows, int h, void* stream)
{
    if (rows == 0)
        return;
    const auto chunks = rmsPartialRows(rows);
    auto st = asStream(stream);
    byType(t, [&](auto zero) {
        using T = decltype(zero);
        addRmsNormBackwardKernel<<<rows, kThreads, 0, st>>>(
            static_cast<const T*>(sum), w, rstd, static_cast<const T*>(dy),
            static_cast<const T*>(dsum), static_cast<T*>(ds), h);
        rmsWeightPartialKernel<<<chunks, kThreads, 0, st>>>(
            static_cast<const T*>(sum), rstd, static_cast<const T*>(dy), partial, rows, h);
    });
    rmsWeightTotalKernel<<<(h + kThreads - 1) / kThreads, kThreads, 0, st>>>(partial, dw, chunks,
                                                                            h);
}

void swigluForward(Dtype t, const void* g, const void* u, void* o, std::int64_t n, void* stream)
{
    if (n == 0)
        return;
    byType(t, [&](auto zero) {
        using T = decltype(zero);
        swigluForwardKernel<<<gridFor(n), kThreads, 0, asStream(stream)>>>(
            static_cast<const T*>(g), static_cast<const T*>(u), static_cast<T*>(o), n);
    });
}

void swigluBackward(Dtype t, const void* g, const void* u, const void* dout, void* dg, void* du,
                    std::int64_t n, void* stream)
{
    if (n == 0)
        return;
    byType(t, [&](auto zero) {
        using T = decltype(zero);
        swigluBackwardKernel<<<gridFor(n), kThreads, 0, asStream(stream)>>>(
            static_cast<const T*>(g), static_cast<const T*>(u), static_cast<const T*>(dout),
            static_cast<T*>(dg), static_cast<T*>(du), n);
    });
}

}  // namespace lengen::engine::device
