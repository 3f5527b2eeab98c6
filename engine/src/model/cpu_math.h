#pragma once
// Inline helpers of the CPU kernels (cpu_kernels.cpp, cpu_pointwise.cpp): a vectorisable exp and
// the attribute that gives a loop an AVX2 clone.

#include <algorithm>
#include <cstdint>
#include <cstring>

// The hot loops get an x86-64-v4 (AVX-512) and an x86-64-v3 (AVX2 with FMA) clone next to the
// baseline one; the loader picks by the CPU's features (ifunc), on AMD and Intel alike. ("arch=
// haswell" asked for that CPU model, so AMD got none.) On the 2-core AVX-512 EPYC the quick step
// gained 2-5 % at one thread over the AVX2-only clone (issue 57; docs/performance.md). FMA
// changes the last bits: results are reproducible per machine and thread count, as before.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LENGEN_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define LENGEN_CLONES
#endif
// Helpers of a cloned loop must be inlined into it to get its instruction set: a helper compiled
// on its own (a template, a lambda) is the baseline x86-64 code in every clone.
#if defined(__GNUC__)
#define LENGEN_INLINE inline __attribute__((always_inline))
#else
#define LENGEN_INLINE inline
#endif

namespace lengen::engine::model::kernels::detail {

inline float bitsToFloat(std::uint32_t u)
{
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

inline std::uint32_t floatToBits(float f)
{
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

// exp(x) within ~2 ulp, branch-free so that loops calling it vectorise: x = n ln2 + r with
// |r| <= ln2/2 (Cody-Waite), Cephes' degree-6 polynomial for exp(r), 2^n from the exponent
// bits. x is clamped to [-87.3, 88.3] (results 1e-38 .. 2e38); NaN stays NaN.
inline float expApprox(float x)
{
    x = std::min(std::max(x, -87.3f), 88.3f);
    const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
    const float t = x * 1.44269504088896341f + shifter;
    const float n = t - shifter;
    const auto e = static_cast<std::int32_t>(floatToBits(t) - floatToBits(shifter));
    const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    return p * bitsToFloat(static_cast<std::uint32_t>(e + 127) << 23);
}

// Loops that divide by an exp take the exps in a pass of their own first (into the output row,
// or a local buffer of this many values where the output may be an input): one vectorised
// loop doing both ran ~3x slower (SwiGLU over a quick layer's 576 x 256 values: 192 against
// 66 us). The two passes are written out in each kernel: a shared helper taking lambdas lost
// the vectorisation (SwiGLU 66 -> 165 us, GELU 195 -> 467 us).
constexpr int kExpChunk = 256;

}  // namespace lengen::engine::model::kernels::detail
