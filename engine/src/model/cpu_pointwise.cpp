#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/cpu_kernels.h"
#include "model/cpu_math.h"

// Row-wise and element-wise kernels (norms, activations, vector ops, the AdamW update): one pass
// over memory each, vectorised (see the compile options in engine/CMakeLists.txt).

namespace lengen::engine::model::kernels {

using detail::expApprox;
using detail::kExpChunk;

LENGEN_CLONES
void rmsNormForward(const float* x, const float* g, float* y, float* rstd, std::int64_t rows, int h,
                    float eps)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * h;
        float ss = 0;
#pragma omp simd reduction(+ : ss)
        for (int j = 0; j < h; ++j)
            ss += xr[j] * xr[j];
        const float s = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
        rstd[r] = s;
        float* yr = y + r * h;
#pragma omp simd
        for (int j = 0; j < h; ++j)
            yr[j] = xr[j] * s * g[j];
    }
}

LENGEN_CLONES
void rmsNormBackward(const float* x, const float* g, const float* rstd, const float* dy, float* dx,
                     float* dg, std::int64_t rows, int h)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * h;
        const float* dyr = dy + r * h;
        float* dxr = dx + r * h;
        const float s = rstd[r];
        float dot = 0;  // sum_j dy*g*n
#pragma omp simd reduction(+ : dot)
        for (int j = 0; j < h; ++j) {
            const float n = xr[j] * s;
            dg[j] += dyr[j] * n;
            dot += dyr[j] * g[j] * n;
        }
        const float mean = dot / static_cast<float>(h);
#pragma omp simd
        for (int j = 0; j < h; ++j)
            dxr[j] += s * (dyr[j] * g[j] - xr[j] * s * mean);
    }
}

// SwiGLU with its exps in a pass of their own (cpu_math.h, kExpChunk); values bit for bit
// those of the one-loop form, sigmoid(g) = 1 / (1 + exp(-g)).
LENGEN_CLONES
void swigluForward(const float* gu, float* a, std::int64_t rows, int i)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* gate = gu + r * 2 * i;
        const float* up = gate + i;
        float* ar = a + r * i;
#pragma omp simd
        for (int j = 0; j < i; ++j)
            ar[j] = expApprox(-gate[j]);
#pragma omp simd
        for (int j = 0; j < i; ++j)
            ar[j] = gate[j] * (1.0f / (1.0f + ar[j])) * up[j];
    }
}

LENGEN_CLONES
void swigluBackward(const float* gu, const float* da, float* dgu, std::int64_t rows, int i)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* gate = gu + r * 2 * i;
        const float* up = gate + i;
        const float* dar = da + r * i;
        float* dgate = dgu + r * 2 * i;
        float* dup = dgate + i;
#pragma omp simd
        for (int j = 0; j < i; ++j)
            dup[j] = expApprox(-gate[j]);
#pragma omp simd
        for (int j = 0; j < i; ++j) {
            const float g = gate[j], sg = 1.0f / (1.0f + dup[j]);
            dup[j] = dar[j] * g * sg;
            dgate[j] = dar[j] * up[j] * sg * (1.0f + g * (1.0f - sg));
        }
    }
}

LENGEN_CLONES
void addInPlace(float* dst, const float* src, std::int64_t n)
{
#pragma omp simd
    for (std::int64_t k = 0; k < n; ++k)
        dst[k] += src[k];
}

LENGEN_CLONES
void scaleInPlace(float* x, float a, std::int64_t n)
{
#pragma omp simd
    for (std::int64_t k = 0; k < n; ++k)
        x[k] *= a;
}

LENGEN_CLONES
double sumOfSquares(const float* x, std::int64_t n)
{
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (std::int64_t k = 0; k < n; ++k)
        s += static_cast<double>(x[k]) * x[k];
    return s;
}

LENGEN_CLONES
void adamwUpdate(float* p, const float* g, float* m, float* v, std::int64_t n, const AdamWStep& s)
{
    const float b1 = s.beta1, b2 = s.beta2, c1 = 1.0f - s.beta1, c2 = 1.0f - s.beta2;
#pragma omp simd
    for (std::int64_t k = 0; k < n; ++k) {
        const float gk = g[k];
        const float mk = m[k] * b1 + gk * c1;
        const float vk = v[k] * b2 + gk * gk * c2;
        m[k] = mk;
        v[k] = vk;
        const float denom = std::sqrt(vk) / s.bc2Sqrt + s.eps;
        p[k] = p[k] * s.decay - s.stepSize * (mk / denom);
    }
}

LENGEN_CLONES
void layerNormForward(const float* x, const float* g, const float* b, float* y, float* mean,
                      float* rstd, std::int64_t rows, int h, float eps)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * h;
        float sum = 0;
#pragma omp simd reduction(+ : sum)
        for (int j = 0; j < h; ++j)
            sum += xr[j];
        const float mu = sum / static_cast<float>(h);
        float var = 0;  // two passes: no cancellation when |mean| >> std
#pragma omp simd reduction(+ : var)
        for (int j = 0; j < h; ++j)
            var += (xr[j] - mu) * (xr[j] - mu);
        const float s = 1.0f / std::sqrt(var / static_cast<float>(h) + eps);
        mean[r] = mu;
        rstd[r] = s;
        float* yr = y + r * h;
#pragma omp simd
        for (int j = 0; j < h; ++j)
            yr[j] = (xr[j] - mu) * s * g[j] + b[j];
    }
}

LENGEN_CLONES
void layerNormBackward(const float* x, const float* g, const float* mean, const float* rstd,
                       const float* dy, float* dx, float* dg, float* db, std::int64_t rows, int h)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * h;
        const float* dyr = dy + r * h;
        float* dxr = dx + r * h;
        const float mu = mean[r], s = rstd[r];
        float sumDn = 0, sumDnN = 0;  // sum dy*g, sum dy*g*n
#pragma omp simd reduction(+ : sumDn, sumDnN)
        for (int j = 0; j < h; ++j) {
            const float n = (xr[j] - mu) * s, dn = dyr[j] * g[j];
            dg[j] += dyr[j] * n;
            db[j] += dyr[j];
            sumDn += dn;
            sumDnN += dn * n;
        }
        const float a = sumDn / static_cast<float>(h), c = sumDnN / static_cast<float>(h);
#pragma omp simd
        for (int j = 0; j < h; ++j)
            dxr[j] += s * (dyr[j] * g[j] - a - (xr[j] - mu) * s * c);
    }
}

namespace {
constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluA = 0.044715f;
// tanh(u) = 1 - 2 / (1 + exp(2u)), exact at both saturations.
}  // namespace

// GELU's tanh argument u = c (v + a v^3), doubled: tanh(u) = 1 - 2 / (1 + exp(2u)).
inline float geluExpArg(float v) { return 2.0f * (kGeluC * (v + kGeluA * v * v * v)); }

LENGEN_CLONES
void geluTanhForward(const float* x, float* y, std::int64_t n)
{
    float e[kExpChunk];
    for (std::int64_t k0 = 0; k0 < n; k0 += kExpChunk) {
        const int len = static_cast<int>(std::min<std::int64_t>(kExpChunk, n - k0));
        const float* xs = x + k0;
        float* ys = y + k0;
#pragma omp simd
        for (int k = 0; k < len; ++k)
            e[k] = expApprox(geluExpArg(xs[k]));
#pragma omp simd
        for (int k = 0; k < len; ++k) {
            const float v = xs[k], th = 1.0f - 2.0f / (1.0f + e[k]);
            ys[k] = 0.5f * v * (1.0f + th);
        }
    }
}

LENGEN_CLONES
void geluTanhBackward(const float* x, const float* dy, float* dx, std::int64_t n)
{
    float e[kExpChunk];
    for (std::int64_t k0 = 0; k0 < n; k0 += kExpChunk) {
        const int len = static_cast<int>(std::min<std::int64_t>(kExpChunk, n - k0));
        const float* xs = x + k0;
#pragma omp simd
        for (int k = 0; k < len; ++k)
            e[k] = expApprox(geluExpArg(xs[k]));
#pragma omp simd
        for (int k = 0; k < len; ++k) {
            const float v = xs[k], th = 1.0f - 2.0f / (1.0f + e[k]);
            const float du = kGeluC * (1.0f + 3.0f * kGeluA * v * v);
            dx[k0 + k] = dy[k0 + k] * (0.5f * (1.0f + th) + 0.5f * v * (1.0f - th * th) * du);
        }
    }
}

void fillRows(float* c, const float* v, std::int64_t rows, int n)
{
    for (std::int64_t r = 0; r < rows; ++r)
        std::memcpy(c + r * n, v, sizeof(float) * static_cast<size_t>(n));
}

LENGEN_CLONES
void addToRows(float* c, const float* v, std::int64_t rows, int n)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        float* cr = c + r * n;
#pragma omp simd
        for (int j = 0; j < n; ++j)
            cr[j] += v[j];
    }
}

LENGEN_CLONES
void addColumnSums(const float* x, float* sums, std::int64_t rows, int n)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * n;
#pragma omp simd
        for (int j = 0; j < n; ++j)
            sums[j] += xr[j];
    }
}

}  // namespace lengen::engine::model::kernels
