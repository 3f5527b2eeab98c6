#include "model/cpu_mamba.h"

#include <algorithm>
#include <vector>

#include "model/cpu_math.h"

// The Mamba block's element-wise passes, vectorised over channels (see the compile options in
// engine/CMakeLists.txt). These run inside one part of the fused block's batch split
// (fused_common.h), so they are serial. exp is the polynomial of cpu_math.h; softplus needs a
// log1p too, which libm would keep scalar: a short series is used instead (log1pApprox). Each
// exp is taken in a pass of its own before the division that uses it (cpu_math.h, kExpChunk).

namespace lengen::engine::model::kernels {

using detail::expApprox;
using detail::kExpChunk;

namespace {

// log(1 + u) for u in [0, 1] to ~1 ulp: log(1 + u) = 2 atanh(s), s = u / (2 + u) <= 1/3, whose
// odd series converges by s^2 <= 1/9 per term (the last kept term is below 2e-9 relative).
inline float log1pApprox(float u)
{
    const float s = u / (2.0f + u), s2 = s * s;
    float p = 1.0f / 17;
    p = p * s2 + 1.0f / 15;
    p = p * s2 + 1.0f / 13;
    p = p * s2 + 1.0f / 11;
    p = p * s2 + 1.0f / 9;
    p = p * s2 + 1.0f / 7;
    p = p * s2 + 1.0f / 5;
    p = p * s2 + 1.0f / 3;
    return 2.0f * s * (1.0f + s2 * p);
}

constexpr float kSoftplusThreshold = 20.0f;

}  // namespace

LENGEN_CLONES
void convSiluForward(const ConvShape& s, const float* x, int ldx, const float* w, const float* bias,
                     float* cv, float* v)
{
    const int e = s.e, k = s.k;
    std::vector<float> wt(static_cast<size_t>(k) * e);  // taps transposed: [K, E]
    for (int c = 0; c < e; ++c)
        for (int j = 0; j < k; ++j)
            wt[static_cast<size_t>(j) * e + c] = w[c * k + j];
    for (std::int64_t b = 0; b < s.batch; ++b)
        for (int t = 0; t < s.t; ++t) {
            const std::int64_t r = b * s.t + t;
            float* cr = cv + r * e;
            float* vr = v + r * e;
            std::copy(bias, bias + e, cr);
            for (int j = std::max(0, k - 1 - t); j < k; ++j) {  // input token t - (K-1) + j
                const float* xr = x + (r - (k - 1) + j) * ldx;
                const float* wj = wt.data() + static_cast<size_t>(j) * e;
#pragma omp simd
                for (int c = 0; c < e; ++c)
                    cr[c] += wj[c] * xr[c];
            }
#pragma omp simd
            for (int c = 0; c < e; ++c)
                vr[c] = expApprox(-cr[c]);
#pragma omp simd
            for (int c = 0; c < e; ++c)
                vr[c] = cr[c] * (1.0f / (1.0f + vr[c]));
        }
}

LENGEN_CLONES
void convSiluBackward(const ConvShape& s, const float* x, int ldx, const float* w, const float* cv,
                      float* dv, float* dx, int lddx, float* dw, float* db)
{
    const int e = s.e, k = s.k;
    std::vector<float> wt(static_cast<size_t>(k) * e), dwt(static_cast<size_t>(k) * e, 0.f);
    for (int c = 0; c < e; ++c)
        for (int j = 0; j < k; ++j)
            wt[static_cast<size_t>(j) * e + c] = w[c * k + j];
    std::vector<float> ex(static_cast<size_t>(e));
    const std::int64_t rows = s.batch * s.t;
    for (std::int64_t r = 0; r < rows; ++r) {  // dv becomes d cv = dv * silu'(cv)
        const float* cr = cv + r * e;
        float* dr = dv + r * e;
#pragma omp simd
        for (int c = 0; c < e; ++c)
            ex[c] = expApprox(-cr[c]);
#pragma omp simd
        for (int c = 0; c < e; ++c) {
            const float sg = 1.0f / (1.0f + ex[c]);
            dr[c] *= sg * (1.0f + cr[c] * (1.0f - sg));
        }
#pragma omp simd
        for (int c = 0; c < e; ++c)
            db[c] += dr[c];
    }
    for (std::int64_t b = 0; b < s.batch; ++b)
        for (int t = 0; t < s.t; ++t) {
            // Input token t feeds outputs t + (K-1) - j for the taps j that stay below T.
            const std::int64_t r = b * s.t + t;
            const float* xr = x + r * ldx;
            float* dxr = dx + r * lddx;
            std::fill(dxr, dxr + e, 0.f);
            for (int j = std::max(0, t + k - s.t); j < k; ++j) {
                const float* dc = dv + (r + (k - 1) - j) * e;
                const float* wj = wt.data() + static_cast<size_t>(j) * e;
                float* dwj = dwt.data() + static_cast<size_t>(j) * e;
#pragma omp simd
                for (int c = 0; c < e; ++c) {
                    dxr[c] += wj[c] * dc[c];
                    dwj[c] += dc[c] * xr[c];
                }
            }
        }
    for (int c = 0; c < e; ++c)
        for (int j = 0; j < k; ++j)
            dw[c * k + j] += dwt[static_cast<size_t>(j) * e + c];
}

LENGEN_CLONES
void softplusForward(const float* lin, float* delta, std::int64_t n)
{
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i)
        delta[i] = expApprox(-std::abs(lin[i]));
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) {
        const float x = lin[i];
        // max(x, 0) + log1p(exp(-|x|)) = log1p(exp(x)), without overflow.
        const float sp = std::max(x, 0.0f) + log1pApprox(delta[i]);
        delta[i] = x > kSoftplusThreshold ? x : sp;
    }
}

LENGEN_CLONES
void softplusBackward(const float* lin, const float* ddelta, float* dlin, std::int64_t n)
{
    float ex[kExpChunk];
    for (std::int64_t i0 = 0; i0 < n; i0 += kExpChunk) {
        const int len = static_cast<int>(std::min<std::int64_t>(kExpChunk, n - i0));
        const float* x = lin + i0;
#pragma omp simd
        for (int i = 0; i < len; ++i)
            ex[i] = expApprox(-x[i]);
#pragma omp simd
        for (int i = 0; i < len; ++i) {
            const float g = ddelta[i0 + i];
            dlin[i0 + i] = x[i] > kSoftplusThreshold ? g : g * (1.0f / (1.0f + ex[i]));
        }
    }
}

LENGEN_CLONES
void gateForward(const float* y, const float* z, int ldz, float* g, std::int64_t rows, int e)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* yr = y + r * e;
        const float* zr = z + r * ldz;
        float* gr = g + r * e;
#pragma omp simd
        for (int c = 0; c < e; ++c)
            gr[c] = expApprox(-zr[c]);
#pragma omp simd
        for (int c = 0; c < e; ++c)
            gr[c] = yr[c] * zr[c] * (1.0f / (1.0f + gr[c]));
    }
}

LENGEN_CLONES
void gateBackward(const float* y, const float* z, int ldz, const float* dg, float* dy, float* dz,
                  int lddz, std::int64_t rows, int e)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* yr = y + r * e;
        const float* zr = z + r * ldz;
        const float* gr = dg + r * e;
        float* dyr = dy + r * e;
        float* dzr = dz + r * lddz;
#pragma omp simd
        for (int c = 0; c < e; ++c)
            dyr[c] = expApprox(-zr[c]);
#pragma omp simd
        for (int c = 0; c < e; ++c) {
            const float sg = 1.0f / (1.0f + dyr[c]);
            dyr[c] = gr[c] * zr[c] * sg;
            dzr[c] = gr[c] * yr[c] * sg * (1.0f + zr[c] * (1.0f - sg));
        }
    }
}

}  // namespace lengen::engine::model::kernels
