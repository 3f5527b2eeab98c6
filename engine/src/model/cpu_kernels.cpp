#include "model/cpu_kernels.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

#include "model/cpu_math.h"
#include "model/kernel_context.h"

namespace lengen::engine::model::kernels {

using detail::expApprox;

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

// oneDNN's row-major sgemm (dnnl.h), from the libdnnl.so.2 that Debian's LibTorch links. On the
// quick layer's twelve product shapes at one thread it runs 196 GFLOP/s where OpenBLAS 0.3.21
// runs 158 (Intel Xeon with AVX-512, 2026-11-28; docs/performance.md). It threads with OpenMP,
// whose count is the calling thread's: a product here takes one thread, set around the call
// and put back (LibTorch's own pool reads the same count).
struct Onednn {
    using Gemm = int (*)(char, char, std::int64_t, std::int64_t, std::int64_t, float, const float*,
                         std::int64_t, const float*, std::int64_t, float, float*, std::int64_t);
    using GetThreads = int (*)();
    using SetThreads = void (*)(int);
    Gemm gemm = reinterpret_cast<Gemm>(dlsym(RTLD_DEFAULT, "dnnl_sgemm"));
    GetThreads get = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
    SetThreads set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));

    bool usable() const { return gemm && get && set; }
};

const Onednn* onednn()
{
    static const Onednn found;
    return found.usable() ? &found : nullptr;
}

std::atomic<bool> g_onednnWanted{true};

}  // namespace

bool hasBlas() { return sgemm() != nullptr || onednn() != nullptr; }

void useOnednn(bool on) { g_onednnWanted.store(on, std::memory_order_relaxed); }

const char* gemmBackend()
{
    return onednn() && g_onednnWanted.load(std::memory_order_relaxed) ? "oneDNN" : "BLAS";
}

void gemm(bool transA, bool transB, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc)
{
    // One thread's products (inside a slice, or a context that gives BLAS one thread) go to
    // oneDNN; a product that the BLAS threads stays with it.
    const Onednn* d = onednn();
    if (d && g_onednnWanted.load(std::memory_order_relaxed) &&
        (blasThreadsNow() <= 1 || !sgemm())) {
        const int before = d->get();
        if (before != 1)
            d->set(1);
        d->gemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c,
                ldc);
        if (before != 1)
            d->set(before);
        return;
    }
    // Column-major sees every row-major matrix transposed: C^T = op(B)^T op(A)^T.
    const char ta = transB ? 'T' : 'N', tb = transA ? 'T' : 'N';
    sgemm()(&ta, &tb, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc);
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

void ropeBackward(float* dv, int ld, std::int64_t batch, int t, int heads, int d, const float* cos,
                  const float* sin)
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

namespace {

// Prompts up to this many tokens take loops over the causal lower triangle instead of sgemm calls:
// at t = 18 and d = 8..32 one call's fixed cost (~1 us) exceeds its arithmetic, and a quick-size
// GPT-2 step (8 heads) makes ~9,000 of them; the loops also run on the kernel threads, where
// concurrent calls into a threaded BLAS would contend for its pool. Longer prompts go to sgemm
// (full squares, one item at a time, BLAS's own threads).
constexpr int kLoopTokens = 128;

// Column padding of lowerScores' transposed operand: one AVX2 register of floats.
constexpr int kLanes = 8;

int padded(int t) { return (t + kLanes - 1) / kLanes * kLanes; }

// Scratch floats lowerScores needs for t tokens of width d.
size_t scoresScratch(int t, int d) { return static_cast<size_t>(padded(t)) * d; }

// s[i][j] = a * dot(x_i, y_j) for j <= i (rows of x, y have strides ldx, ldy; s row stride t;
// entries above the diagonal are left alone). y is first transposed into yt [d, tp] (tp = t
// rounded up to 8, zero-padded), then a 4 x 8 block of s at a time is accumulated over the d
// columns: 32 running sums in 4 registers, 4 FMAs per loaded vector of yt. (A row at a time, as
// axpys along the row, left most of the work in the scalar tails of rows shorter than 8: ~9 %
// of a quick step.)
LENGEN_CLONES
void lowerScores(const float* x, int ldx, const float* y, int ldy, int t, int d, float a, float* s,
                 float* yt)
{
    constexpr int kRows = 4;
    const int tp = padded(t);
    for (int c = 0; c < d; ++c) {
        float* row = yt + static_cast<std::int64_t>(c) * tp;
        for (int j = 0; j < t; ++j)
            row[j] = y[static_cast<std::int64_t>(j) * ldy + c];
        std::fill(row + t, row + tp, 0.0f);
    }
    for (int i0 = 0; i0 < t; i0 += kRows) {
        const float* xr[kRows];  // rows past t repeat the last one; their sums are not stored
        for (int r = 0; r < kRows; ++r)
            xr[r] = x + static_cast<std::int64_t>(std::min(i0 + r, t - 1)) * ldx;
        const int last = std::min(i0 + kRows, t) - 1;  // this block's last row
        for (int j0 = 0; j0 <= last; j0 += kLanes) {
            float acc[kRows][kLanes] = {};
            for (int c = 0; c < d; ++c) {
                const float* yc = yt + static_cast<std::int64_t>(c) * tp + j0;
                for (int r = 0; r < kRows; ++r) {
                    const float w = xr[r][c];
#pragma omp simd
                    for (int l = 0; l < kLanes; ++l)
                        acc[r][l] += w * yc[l];
                }
            }
            for (int r = 0; r < kRows && i0 + r <= last; ++r) {
                const int i = i0 + r, end = std::min(i + 1, j0 + kLanes);
                float* si = s + static_cast<std::int64_t>(i) * t;
                for (int j = j0; j < end; ++j)
                    si[j] = a * acc[r][j - j0];
            }
        }
    }
}

// Columns of one register-held sum in lowerTimes / lowerTransposeTimes: 4 AVX2 registers.
constexpr int kSumCols = 32;

// o[c] = a * sum_{k in [k0, k1)} coef[k * stride] y_k[c] for c < kSumCols, the sum held in
// registers over k (accumulating into o itself chained every step through a store and a load).
inline void weightedRows(const float* coef, std::int64_t stride, int k0, int k1, const float* y,
                         int ldy, float a, float* o)
{
    float acc[kSumCols] = {};
    for (int k = k0; k < k1; ++k) {
        const float w = coef[k * stride];
        const float* yk = y + static_cast<std::int64_t>(k) * ldy;
#pragma omp simd
        for (int c = 0; c < kSumCols; ++c)
            acc[c] += w * yk[c];
    }
#pragma omp simd
    for (int c = 0; c < kSumCols; ++c)
        o[c] = a * acc[c];
}

// out_i = a * sum_{j <= i} p[i][j] y_j (p lower triangular, row stride t).
LENGEN_CLONES
void lowerTimes(const float* p, int t, const float* y, int ldy, int d, float a, float* out, int ldo)
{
    const int blocked = d / kSumCols * kSumCols;
    for (int i = 0; i < t; ++i) {
        const float* pi = p + static_cast<std::int64_t>(i) * t;
        float* oi = out + static_cast<std::int64_t>(i) * ldo;
        for (int c0 = 0; c0 < blocked; c0 += kSumCols)
            weightedRows(pi, 1, 0, i + 1, y + c0, ldy, a, oi + c0);
        if (blocked == d)
            continue;
        std::fill(oi + blocked, oi + d, 0.0f);  // the columns past the last block of 32
        for (int j = 0; j <= i; ++j) {
            const float w = a * pi[j];
            const float* yj = y + static_cast<std::int64_t>(j) * ldy;
#pragma omp simd
            for (int c = blocked; c < d; ++c)
                oi[c] += w * yj[c];
        }
    }
}

// out_j = a * sum_{i >= j} p[i][j] y_i: the transpose of lowerTimes.
LENGEN_CLONES
void lowerTransposeTimes(const float* p, int t, const float* y, int ldy, int d, float a, float* out,
                         int ldo)
{
    const int blocked = d / kSumCols * kSumCols;
    for (int j = 0; j < t; ++j) {
        float* oj = out + static_cast<std::int64_t>(j) * ldo;
        for (int c0 = 0; c0 < blocked; c0 += kSumCols)  // column j of p, rows j..t-1
            weightedRows(p + j, t, j, t, y + c0, ldy, a, oj + c0);
        std::fill(oj + blocked, oj + d, 0.0f);
    }
    if (blocked == d)
        return;
    for (int i = 0; i < t; ++i) {
        const float* yi = y + static_cast<std::int64_t>(i) * ldy;
        for (int j = 0; j <= i; ++j) {
            const float w = a * p[static_cast<std::int64_t>(i) * t + j];
            float* oj = out + static_cast<std::int64_t>(j) * ldo;
#pragma omp simd
            for (int c = blocked; c < d; ++c)
                oj[c] += w * yi[c];
        }
    }
}

}  // namespace

void attentionForward(const AttentionShape& s, const float* qkv, const float* bias,
                      std::int64_t biasHeads, float* probs, float* out)
{
    const int t = s.t, h = s.heads * s.d, ld = 3 * h;
    const std::int64_t tt = std::int64_t(t) * t;
    const bool loops = t <= kLoopTokens;
    std::vector<float> yt(loops ? scoresScratch(t, s.d) : 0);        // k transposed
    for (std::int64_t item = 0; item < s.batch * s.heads; ++item) {  // one (batch, head) each
        const std::int64_t b = item / s.heads;
        const int hd = static_cast<int>(item % s.heads);
        const float* q = qkv + b * t * ld + hd * s.d;
        const float *k = q + h, *v = q + 2 * h;
        float* p = probs + item * tt;
        float* o = out + b * t * h + hd * s.d;
        if (loops)
            lowerScores(q, ld, k, ld, t, s.d, s.scale, p, yt.data());  // q k^T
        else
            gemm(false, true, t, t, s.d, s.scale, q, ld, k, ld, 0, p, t);
        causalSoftmaxForward(p, t, bias ? bias + (biasHeads == 1 ? 0 : hd) * tt : nullptr);
        if (loops)
            lowerTimes(p, t, v, ld, s.d, 1, o, h);  // p v
        else
            gemm(false, false, t, s.d, t, 1, p, t, v, ld, 0, o, h);
    }
}

void attentionBackward(const AttentionShape& s, const float* qkv, const float* probs,
                       const float* dout, float* dqkv, float* dbias, std::int64_t biasHeads)
{
    const int t = s.t, h = s.heads * s.d, ld = 3 * h;
    const std::int64_t tt = std::int64_t(t) * t;
    const bool loops = t <= kLoopTokens;
    std::vector<float> scratch(static_cast<size_t>(tt));
    std::vector<float> yt(loops ? scoresScratch(t, s.d) : 0);  // v transposed
    float* ds = scratch.data();
    for (std::int64_t item = 0; item < s.batch * s.heads; ++item) {  // one (batch, head) each
        const std::int64_t b = item / s.heads;
        const int hd = static_cast<int>(item % s.heads);
        const std::int64_t off = b * t * ld + hd * s.d;
        const float *q = qkv + off, *k = q + h, *v = q + 2 * h;
        float *dq = dqkv + off, *dk = dq + h, *dv = dq + 2 * h;
        const float* p = probs + item * tt;
        const float* dO = dout + b * t * h + hd * s.d;
        if (loops) {
            lowerScores(dO, h, v, ld, t, s.d, 1, ds, yt.data());  // dP = dO v^T
            lowerTransposeTimes(p, t, dO, h, s.d, 1, dv, ld);     // dv = P^T dO
        } else {
            gemm(false, true, t, t, s.d, 1, dO, h, v, ld, 0, ds, t);
            gemm(true, false, t, s.d, t, 1, p, t, dO, h, 0, dv, ld);
        }
        causalSoftmaxBackward(p, ds, t);  // dS
        if (dbias)
            addInPlace(dbias + (biasHeads == 1 ? 0 : hd) * tt, ds, tt);
        if (loops) {
            lowerTimes(ds, t, k, ld, s.d, s.scale, dq, ld);           // c dS k
            lowerTransposeTimes(ds, t, q, ld, s.d, s.scale, dk, ld);  // c dS^T q
        } else {
            gemm(false, false, t, s.d, t, s.scale, ds, t, k, ld, 0, dq, ld);
            gemm(true, false, t, s.d, t, s.scale, ds, t, q, ld, 0, dk, ld);
        }
    }
}

}  // namespace lengen::engine::model::kernels
