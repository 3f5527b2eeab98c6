#include "model/cpu_kernels.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>

// The hot loops get an AVX2 clone next to the baseline one; the loader picks (ifunc). ("arch=
// haswell" would also bring FMA, but its resolver asks for that CPU model, so AMD gets none.)
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LENGEN_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LENGEN_CLONES
#endif

namespace lengen::engine::model::kernels {

namespace {

// Fortran BLAS sgemm (column-major), as exported by libblas.so.3 (OpenBLAS, reference BLAS).
using Sgemm = void (*)(const char*, const char*, const int*, const int*, const int*, const float*,
                       const float*, const int*, const float*, const int*, const float*, float*,
                       const int*);

Sgemm sgemm()
{
    static const Sgemm fn = reinterpret_cast<Sgemm>(dlsym(RTLD_DEFAULT, "sgemm_"));
    return fn;
}

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

inline float sigmoid(float x) { return 1.0f / (1.0f + expApprox(-x)); }

}  // namespace

bool hasBlas() { return sgemm() != nullptr; }

void gemm(bool transA, bool transB, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc)
{
    // Column-major sees every row-major matrix transposed: C^T = op(B)^T op(A)^T.
    const char ta = transB ? 'T' : 'N', tb = transA ? 'T' : 'N';
    sgemm()(&ta, &tb, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc);
}

LENGEN_CLONES
void rmsNormForward(const float* x, const float* g, float* y, float* rstd, std::int64_t rows,
                    int h, float eps)
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
void rmsNormBackward(const float* x, const float* g, const float* rstd, const float* dy,
                     float* dx, float* dg, std::int64_t rows, int h)
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

void ropeForward(float* v, int ld, std::int64_t batch, int t, int heads, int d, const float* cos,
                 const float* sin)
{
    const int half = d / 2;
    for (std::int64_t b = 0; b < batch; ++b)
        for (int p = 0; p < t; ++p) {
            const float* c = cos + static_cast<std::int64_t>(p) * d;
            const float* s = sin + static_cast<std::int64_t>(p) * d;
            float* row = v + (b * t + p) * ld;
            for (int hd = 0; hd < heads; ++hd) {
                float* x = row + hd * d;
#pragma omp simd
                for (int j = 0; j < half; ++j) {
                    const float lo = x[j], hi = x[j + half];
                    x[j] = lo * c[j] - hi * s[j];
                    x[j + half] = hi * c[j + half] + lo * s[j + half];
                }
            }
        }
}

void ropeBackward(float* dv, int ld, std::int64_t batch, int t, int heads, int d,
                  const float* cos, const float* sin)
{
    const int half = d / 2;
    for (std::int64_t b = 0; b < batch; ++b)
        for (int p = 0; p < t; ++p) {
            const float* c = cos + static_cast<std::int64_t>(p) * d;
            const float* s = sin + static_cast<std::int64_t>(p) * d;
            float* row = dv + (b * t + p) * ld;
            for (int hd = 0; hd < heads; ++hd) {
                float* x = row + hd * d;
#pragma omp simd
                for (int j = 0; j < half; ++j) {
                    const float lo = x[j], hi = x[j + half];
                    x[j] = lo * c[j] + hi * s[j + half];
                    x[j + half] = hi * c[j + half] - lo * s[j];
                }
            }
        }
}

LENGEN_CLONES
void causalSoftmaxForward(float* s, int t, const float* bias)
{
    for (int i = 0; i < t; ++i) {
        float* row = s + static_cast<std::int64_t>(i) * t;
        const int len = i + 1;
        if (bias) {
            const float* br = bias + static_cast<std::int64_t>(i) * t;
#pragma omp simd
            for (int j = 0; j < len; ++j)
                row[j] += br[j];
        }
        float mx = row[0];
#pragma omp simd reduction(max : mx)
        for (int j = 0; j < len; ++j)
            mx = std::max(mx, row[j]);
        float sum = 0;
#pragma omp simd reduction(+ : sum)
        for (int j = 0; j < len; ++j) {
            row[j] = expApprox(row[j] - mx);
            sum += row[j];
        }
        const float inv = 1.0f / sum;
#pragma omp simd
        for (int j = 0; j < len; ++j)
            row[j] *= inv;
        std::fill(row + len, row + t, 0.0f);
    }
}

LENGEN_CLONES
void causalSoftmaxBackward(const float* p, float* dp, int t)
{
    for (int i = 0; i < t; ++i) {
        const float* pr = p + static_cast<std::int64_t>(i) * t;
        float* dr = dp + static_cast<std::int64_t>(i) * t;
        const int len = i + 1;
        float dot = 0;
#pragma omp simd reduction(+ : dot)
        for (int j = 0; j < len; ++j)
            dot += dr[j] * pr[j];
#pragma omp simd
        for (int j = 0; j < len; ++j)
            dr[j] = pr[j] * (dr[j] - dot);
        std::fill(dr + len, dr + t, 0.0f);
    }
}

LENGEN_CLONES
void swigluForward(const float* gu, float* a, std::int64_t rows, int i)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* gate = gu + r * 2 * i;
        const float* up = gate + i;
        float* ar = a + r * i;
#pragma omp simd
        for (int j = 0; j < i; ++j)
            ar[j] = gate[j] * sigmoid(gate[j]) * up[j];
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
        for (int j = 0; j < i; ++j) {
            const float g = gate[j], sg = sigmoid(g);
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

}  // namespace lengen::engine::model::kernels
