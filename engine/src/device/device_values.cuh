#pragma once
// What every LenGen kernel does to read and write a tensor's element as float32 (sums and
// products run in float32 whatever the storage): float32 or bfloat16 storage. nvcc only.

#include <cuda_bf16.h>

#include <cstdint>

namespace lengen::engine::device {

__device__ __forceinline__ float load(const float* p, std::int64_t i) { return p[i]; }
__device__ __forceinline__ float load(const __nv_bfloat16* p, std::int64_t i)
{
    return __bfloat162float(p[i]);
}
__device__ __forceinline__ void store(float* p, std::int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, std::int64_t i, float v)
{
    p[i] = __float2bfloat16(v);
}

}  // namespace lengen::engine::device
