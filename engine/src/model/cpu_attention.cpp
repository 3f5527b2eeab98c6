// Causal attention of the fused layers (cpu_kernels.h: attentionForward, attentionBackward):
// per (batch, head) item, scores, a causal softmax and four products over the lower triangle.
//
// Probabilities and score gradients are kept in rows padded to a multiple of kLanes (16 floats,
// one AVX-512 register; ps = padded(t)), zero above the diagonal up to the padding. Every loop
// then runs over whole registers: row i is processed over its first n(i) = (i / 16 + 1) * 16
// lanes, the lanes past i masked. With rows of exactly i + 1 values (the layout before issue
// 57's second pass) most of the quick prompt's 18-token rows ran in scalar loop tails: the
// attention of a quick layer took 131 us forward and 127 us backward, 5-11 GMAC/s.
//
// The products are register-blocked: scores (q k^T, dO v^T) take 8 rows x 16 lanes of sums
// against a transposed, zero-padded copy of the right operand; the P y and P^T y products take
// 4 rows x 32 columns, over the whole lower block (the zeros above the diagonal make the
// triangle's edge need no test).

#include <algorithm>
#include <type_traits>
#include <vector>

#include "model/cpu_kernels.h"
#include "model/cpu_math.h"

namespace lengen::engine::model::kernels {

using detail::expApprox;

namespace {

// Prompts up to this many tokens take the loops below; longer ones full-square sgemm calls per
// item (the BLAS's own threads). At t = 18 and d = 8..32 one call's fixed cost (~1 us) exceeds
// its arithmetic, and a quick GPT-2 step (8 heads) would make ~9,000 of them.
constexpr int kLoopTokens = 128;

constexpr int kLanes = 16;     // one AVX-512 register of floats (two AVX2 ones)
constexpr int kRows = 8;       // rows of a scores block: 8 x 16 running sums
constexpr int kTimesRows = 4;  // rows of a P y block (divides kLanes: see lowerTimes)

int padded(int t) { return (t + kLanes - 1) / kLanes * kLanes; }

// The lanes of row i that the softmax and the products touch: whole registers up to i.
int laneEnd(int i) { return (i / kLanes + 1) * kLanes; }

// s[i][j] = a * dot(x_i, y_j) for every lane j < laneEnd(i) (j > i included: the softmax masks
// them); s has row stride lds = padded(t). y is first transposed into yt [d, lds], zero past t.
LENGEN_CLONES
void lowerScores(const float* x, int ldx, const float* y, int ldy, int t, int d, float a, float* s,
                 int lds, float* yt)
{
    for (int c = 0; c < d; ++c) {  // column by column: gathered reads, whole-register writes
        float* ytc = yt + static_cast<std::int64_t>(c) * lds;
#pragma omp simd
        for (int j = 0; j < t; ++j)
            ytc[j] = y[static_cast<std::int64_t>(j) * ldy + c];
        std::fill(ytc + t, ytc + lds, 0.0f);
    }
    for (int i0 = 0; i0 < t; i0 += kRows) {
        const float* xr[kRows];  // rows past t repeat the last one; their sums are not stored
        for (int r = 0; r < kRows; ++r)
            xr[r] = x + static_cast<std::int64_t>(std::min(i0 + r, t - 1)) * ldx;
        const int last = std::min(i0 + kRows, t) - 1;
        for (int j0 = 0; j0 <= last; j0 += kLanes) {
            float acc[kRows][kLanes] = {};
            for (int c = 0; c < d; ++c) {
                const float* yc = yt + static_cast<std::int64_t>(c) * lds + j0;
                for (int r = 0; r < kRows; ++r) {
                    const float w = xr[r][c];
#pragma omp simd
                    for (int l = 0; l < kLanes; ++l)
                        acc[r][l] += w * yc[l];
                }
            }
            for (int r = 0; r < kRows && i0 + r <= last; ++r) {
                float* si = s + static_cast<std::int64_t>(i0 + r) * lds + j0;
#pragma omp simd
                for (int l = 0; l < kLanes; ++l)
                    si[l] = a * acc[r][l];
            }
        }
    }
}

// out rows i0..i0+kTimesRows-1, columns [c0, c0 + W): a * sum_{j <= last} p[i][j] y_j, where
// p (row stride ldp) is zero past each row's diagonal up to laneEnd: a block of 4 rows lies in
// one 16-lane group, so j <= last < laneEnd(i) for each of its rows.
template <int W>
LENGEN_INLINE void timesBlock(const float* p, int ldp, int i0, int t, const float* y, int ldy,
                              int c0, float a, float* out, int ldo)
{
    const int last = std::min(i0 + kTimesRows, t) - 1;
    const float* pr[kTimesRows];
    for (int r = 0; r < kTimesRows; ++r)
        pr[r] = p + static_cast<std::int64_t>(std::min(i0 + r, t - 1)) * ldp;
    float acc[kTimesRows][W] = {};
    for (int j = 0; j <= last; ++j) {
        const float* yj = y + static_cast<std::int64_t>(j) * ldy + c0;
        for (int r = 0; r < kTimesRows; ++r) {
            const float w = pr[r][j];
#pragma omp simd
            for (int c = 0; c < W; ++c)
                acc[r][c] += w * yj[c];
        }
    }
    for (int r = 0; r < kTimesRows && i0 + r <= last; ++r) {
        float* o = out + static_cast<std::int64_t>(i0 + r) * ldo + c0;
#pragma omp simd
        for (int c = 0; c < W; ++c)
            o[c] = a * acc[r][c];
    }
}

// The transpose: out rows j0..j0+3, a * sum_{i >= j0} p[i][j] y_i (p[i][j] = 0 for j > i; the
// columns j0..j0+3 lie within every row i >= j0's lanes).
template <int W>
LENGEN_INLINE void transposeTimesBlock(const float* p, int ldp, int j0, int t, const float* y,
                                       int ldy, int c0, float a, float* out, int ldo)
{
    float acc[kTimesRows][W] = {};
    for (int i = j0; i < t; ++i) {
        const float* yi = y + static_cast<std::int64_t>(i) * ldy + c0;
        const float* pi = p + static_cast<std::int64_t>(i) * ldp + j0;
        for (int r = 0; r < kTimesRows; ++r) {
            const float w = pi[r];
#pragma omp simd
            for (int c = 0; c < W; ++c)
                acc[r][c] += w * yi[c];
        }
    }
    for (int r = 0; r < kTimesRows && j0 + r < t; ++r) {
        float* o = out + static_cast<std::int64_t>(j0 + r) * ldo + c0;
#pragma omp simd
        for (int c = 0; c < W; ++c)
            o[c] = a * acc[r][c];
    }
}

// Rows r0.. of lowerTimes (Transpose false) or lowerTransposeTimes, columns in blocks of 32,
// 16, 8, then one at a time (head widths 8..128 take no single ones).
template <bool Transpose>
LENGEN_INLINE void overColumns(const float* p, int ldp, int r0, int t, const float* y, int ldy,
                               int d, float a, float* out, int ldo)
{
    const auto block = [&](auto width, int c) {
        constexpr int w = decltype(width)::value;
        if constexpr (Transpose)
            transposeTimesBlock<w>(p, ldp, r0, t, y, ldy, c, a, out, ldo);
        else
            timesBlock<w>(p, ldp, r0, t, y, ldy, c, a, out, ldo);
    };
    int c = 0;
    for (; c + 32 <= d; c += 32)
        block(std::integral_constant<int, 32>(), c);
    for (; c + 16 <= d; c += 16)
        block(std::integral_constant<int, 16>(), c);
    for (; c + 8 <= d; c += 8)
        block(std::integral_constant<int, 8>(), c);
    for (; c < d; ++c)
        block(std::integral_constant<int, 1>(), c);
}

// out_i = a * sum_{j <= i} p[i][j] y_j, rows of width d.
LENGEN_CLONES
void lowerTimes(const float* p, int ldp, int t, const float* y, int ldy, int d, float a, float* out,
                int ldo)
{
    for (int i0 = 0; i0 < t; i0 += kTimesRows)
        overColumns<false>(p, ldp, i0, t, y, ldy, d, a, out, ldo);
}

// out_j = a * sum_{i >= j} p[i][j] y_i: the transpose of lowerTimes.
LENGEN_CLONES
void lowerTransposeTimes(const float* p, int ldp, int t, const float* y, int ldy, int d, float a,
                         float* out, int ldo)
{
    for (int j0 = 0; j0 < t; j0 += kTimesRows)
        overColumns<true>(p, ldp, j0, t, y, ldy, d, a, out, ldo);
}

}  // namespace

std::int64_t attentionProbsPerItem(int t) { return std::int64_t(t) * padded(t); }

int attentionRowStride(int t) { return padded(t); }

LENGEN_CLONES
void causalSoftmaxForward(float* s, int t, int ld, const float* bias)
{
    constexpr float kLow = -3.0e38f;  // below any score; masked lanes take it
    for (int i = 0; i < t; ++i) {
        float* row = s + static_cast<std::int64_t>(i) * ld;
        const int n = laneEnd(i);
        if (bias) {
            const float* br = bias + static_cast<std::int64_t>(i) * t;
            for (int j = 0; j <= i; ++j)
                row[j] += br[j];
        }
        float m[kLanes];
        std::fill(m, m + kLanes, kLow);
        for (int j0 = 0; j0 < n; j0 += kLanes)
#pragma omp simd
            for (int l = 0; l < kLanes; ++l)
                m[l] = std::max(m[l], j0 + l <= i ? row[j0 + l] : kLow);
        const float mx = *std::max_element(m, m + kLanes);
        float acc[kLanes] = {};
        for (int j0 = 0; j0 < n; j0 += kLanes)
#pragma omp simd
            for (int l = 0; l < kLanes; ++l) {
                const float e = expApprox(row[j0 + l] - mx);
                row[j0 + l] = j0 + l <= i ? e : 0.0f;
                acc[l] += row[j0 + l];
            }
        float sum = 0;
        for (float v : acc)
            sum += v;
        const float inv = 1.0f / sum;
        for (int j0 = 0; j0 < n; j0 += kLanes)
#pragma omp simd
            for (int l = 0; l < kLanes; ++l)
                row[j0 + l] *= inv;
        std::fill(row + n, row + ld, 0.0f);
    }
}

LENGEN_CLONES
void causalSoftmaxBackward(const float* p, float* dp, int t, int ld)
{
    for (int i = 0; i < t; ++i) {
        const float* pr = p + static_cast<std::int64_t>(i) * ld;
        float* dr = dp + static_cast<std::int64_t>(i) * ld;
        const int n = laneEnd(i);
        float acc[kLanes] = {};
        for (int j0 = 0; j0 < n; j0 += kLanes)
#pragma omp simd
            for (int l = 0; l < kLanes; ++l)
                acc[l] += dr[j0 + l] * pr[j0 + l];
        float dot = 0;
        for (float v : acc)
            dot += v;
        for (int j0 = 0; j0 < n; j0 += kLanes)  // p is 0 past the diagonal: so is ds
#pragma omp simd
            for (int l = 0; l < kLanes; ++l)
                dr[j0 + l] = pr[j0 + l] * (dr[j0 + l] - dot);
        std::fill(dr + n, dr + ld, 0.0f);
    }
}

void attentionForward(const AttentionShape& s, const float* qkv, const float* bias,
                      std::int64_t biasHeads, float* probs, float* out)
{
    const int t = s.t, h = s.heads * s.d, ld = 3 * h, ps = padded(t);
    const std::int64_t tt = std::int64_t(t) * t, per = attentionProbsPerItem(t);
    const bool loops = t <= kLoopTokens;
    std::vector<float> yt(loops ? static_cast<size_t>(ps) * s.d : 0);  // k transposed
    for (std::int64_t item = 0; item < s.batch * s.heads; ++item) {    // one (batch, head) each
        const std::int64_t b = item / s.heads;
        const int hd = static_cast<int>(item % s.heads);
        const float* q = qkv + b * t * ld + hd * s.d;
        const float *k = q + h, *v = q + 2 * h;
        float* p = probs + item * per;
        float* o = out + b * t * h + hd * s.d;
        if (loops)
            lowerScores(q, ld, k, ld, t, s.d, s.scale, p, ps, yt.data());  // q k^T
        else
            gemm(false, true, t, t, s.d, s.scale, q, ld, k, ld, 0, p, ps);
        causalSoftmaxForward(p, t, ps, bias ? bias + (biasHeads == 1 ? 0 : hd) * tt : nullptr);
        if (loops)
            lowerTimes(p, ps, t, v, ld, s.d, 1, o, h);  // p v
        else
            gemm(false, false, t, s.d, t, 1, p, ps, v, ld, 0, o, h);
    }
}

void attentionBackward(const AttentionShape& s, const float* qkv, const float* probs,
                       const float* dout, float* dqkv, float* dbias, std::int64_t biasHeads)
{
    const int t = s.t, h = s.heads * s.d, ld = 3 * h, ps = padded(t);
    const std::int64_t tt = std::int64_t(t) * t, per = attentionProbsPerItem(t);
    const bool loops = t <= kLoopTokens;
    std::vector<float> scratch(static_cast<size_t>(per));              // dP, then dS
    std::vector<float> yt(loops ? static_cast<size_t>(ps) * s.d : 0);  // v transposed
    float* ds = scratch.data();
    for (std::int64_t item = 0; item < s.batch * s.heads; ++item) {  // one (batch, head) each
        const std::int64_t b = item / s.heads;
        const int hd = static_cast<int>(item % s.heads);
        const std::int64_t off = b * t * ld + hd * s.d;
        const float *q = qkv + off, *k = q + h, *v = q + 2 * h;
        float *dq = dqkv + off, *dk = dq + h, *dv = dq + 2 * h;
        const float* p = probs + item * per;
        const float* dO = dout + b * t * h + hd * s.d;
        if (loops) {
            lowerScores(dO, h, v, ld, t, s.d, 1, ds, ps, yt.data());  // dP = dO v^T
            lowerTransposeTimes(p, ps, t, dO, h, s.d, 1, dv, ld);     // dv = P^T dO
        } else {
            gemm(false, true, t, t, s.d, 1, dO, h, v, ld, 0, ds, ps);
            gemm(true, false, t, s.d, t, 1, p, ps, dO, h, 0, dv, ld);
        }
        causalSoftmaxBackward(p, ds, t, ps);  // dS, 0 past the diagonal
        if (dbias) {
            float* db = dbias + (biasHeads == 1 ? 0 : hd) * tt;
            for (int i = 0; i < t; ++i)
                addInPlace(db + static_cast<std::int64_t>(i) * t, ds + std::int64_t(i) * ps, i + 1);
        }
        if (loops) {
            lowerTimes(ds, ps, t, k, ld, s.d, s.scale, dq, ld);           // c dS k
            lowerTransposeTimes(ds, ps, t, q, ld, s.d, s.scale, dk, ld);  // c dS^T q
        } else {
            gemm(false, false, t, s.d, t, s.scale, ds, ps, k, ld, 0, dq, ld);
            gemm(true, false, t, s.d, t, s.scale, ds, ps, q, ld, 0, dk, ld);
        }
    }
}

}  // namespace lengen::engine::model::kernels
