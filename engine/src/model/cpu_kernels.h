#pragma once
// Raw-pointer CPU kernels of the fused Llama layer (fused_layer.cpp): the system BLAS sgemm in
// row-major terms, and the element-wise parts of RMSNorm, rotary embedding, causal softmax and
// SwiGLU, forward and backward, each one pass over memory. No Torch types: buffers are float32,
// row-major, with explicit leading dimensions (row strides, in floats). Compiled with -O3 and an
// AVX2 clone of the hot loops, chosen at load time (the plain x86-64 one elsewhere).

#include <signal.h>

#include <cstdint>

namespace lengen::engine::model::kernels {

/// Whether a product was found: the system BLAS's sgemm_ (libblas.so.3 / OpenBLAS) or oneDNN's
/// dnnl_sgemm (libdnnl.so.2, linked by Debian's LibTorch). Without one the fused layer is not
/// used.
bool hasBlas();

/// Process-wide: whether one thread's products go to oneDNN where it is present (on by default;
/// LENGEN_ONEDNN=0 through SessionSwitches::onednnGemm turns it off).
void useOnednn(bool on);
/// "oneDNN" or "BLAS": what one thread's products run on now.
const char* gemmBackend();

/// While alive, the calling thread's asynchronous signals wait (and are delivered when the
/// outermost scope ends), where one thread's products run on oneDNN: its kernels must not take
/// a signal (cpu_kernels.cpp). gemm holds them around a product, KernelContext::run around a
/// job and each pool worker around its part; nested scopes cost nothing.
class SignalsHeld {
public:
    SignalsHeld();
    ~SignalsHeld();
    SignalsHeld(const SignalsHeld&) = delete;
    SignalsHeld& operator=(const SignalsHeld&) = delete;

private:
    sigset_t m_before;
    bool m_active = false;
};

/// Row-major C[m, n] = alpha * op(A) op(B) + beta * C, op(A) [m, k], op(B) [k, n]; lda/ldb/ldc
/// are the row strides of A, B, C as stored. One thread's products run on oneDNN where it is
/// present (useOnednn), threaded ones on the BLAS.
void gemm(bool transA, bool transB, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc);

/// y[r] = x[r] * rstd[r] * g, rstd[r] = 1 / sqrt(mean(x[r]^2) + eps); x, y [rows, h].
void rmsNormForward(const float* x, const float* g, float* y, float* rstd, std::int64_t rows, int h,
                    float eps);
/// With n = x * rstd: dx[r] += rstd * (dy*g - n * mean(dy*g*n)); dg += sum_r dy * n.
void rmsNormBackward(const float* x, const float* g, const float* rstd, const float* dy, float* dx,
                     float* dg, std::int64_t rows, int h);

/// Rotate-half RoPE in place on `heads` consecutive head vectors of width d per row:
/// v' = v * cos[t] + rot(v) * sin[t], rot([a | b]) = [-b | a]. Rows are (batch, t) with t
/// cycling over `t` positions; `ld` is the row stride; cos/sin [t, d].
void ropeForward(float* v, int ld, std::int64_t batch, int t, int heads, int d, const float* cos,
                 const float* sin);
/// The transpose: dv = dv' * cos + [dv'_b * sin_b | -dv'_a * sin_a], in place.
void ropeBackward(float* dv, int ld, std::int64_t batch, int t, int heads, int d, const float* cos,
                  const float* sin);

/// In place on scores s [t, ld] (ld = attentionRowStride(t): rows padded to whole vector
/// registers): row i becomes softmax over j <= i of s[i][j] + bias[i][j] (bias [t, t] or null),
/// and 0 for i < j < ld. Lanes of a row past its diagonal may hold anything finite or not.
void causalSoftmaxForward(float* s, int t, int ld, const float* bias);
/// In place: dp [t, ld] becomes ds = p * (dp - sum_j dp * p) (0 past the diagonal).
void causalSoftmaxBackward(const float* p, float* dp, int t, int ld);

/// Causal self-attention of every (batch, head) straight from a projection buffer: qkv rows
/// (b, t) hold [q | k | v], each h = heads * d wide, head j at columns j*d..j*d+d-1 (ld 3h).
/// probs [B, heads, t, attentionRowStride(t)] gets softmax(scale q k^T + bias + causal), 0
/// past the diagonal; out [B*t, h] (heads merged, ld h) gets probs v. bias: [biasHeads, t, t]
/// (biasHeads 1 or heads) or null. Kernels in cpu_attention.cpp.
struct AttentionShape {
    std::int64_t batch;
    int t, heads, d;
    float scale;
};
/// Row stride of the probabilities (t rounded up to 16) and floats of one (batch, head) item's.
int attentionRowStride(int t);
std::int64_t attentionProbsPerItem(int t);
void attentionForward(const AttentionShape& s, const float* qkv, const float* bias,
                      std::int64_t biasHeads, float* probs, float* out);
/// Gradients of attentionForward: dqkv (same layout as qkv) from dout [B*t, h]; dbias
/// [biasHeads, t, t] is accumulated when non-null. Both run on the calling thread, one
/// (batch, head) item at a time: the caller splits the batch (fused_common.h, BatchParts).
void attentionBackward(const AttentionShape& s, const float* qkv, const float* probs,
                       const float* dout, float* dqkv, float* dbias, std::int64_t biasHeads);

/// LayerNorm: y[r] = (x[r] - mean) * rstd * g + b; mean and rstd [rows] are kept.
void layerNormForward(const float* x, const float* g, const float* b, float* y, float* mean,
                      float* rstd, std::int64_t rows, int h, float eps);
/// With n = (x - mean) * rstd: dx[r] += rstd * (dy*g - mean(dy*g) - n * mean(dy*g*n));
/// dg += sum_r dy * n; db += sum_r dy.
void layerNormBackward(const float* x, const float* g, const float* mean, const float* rstd,
                       const float* dy, float* dx, float* dg, float* db, std::int64_t rows, int h);

/// y = gelu(x) with the tanh approximation (GPT-2's "gelu_new"), n values.
void geluTanhForward(const float* x, float* y, std::int64_t n);
/// dx = dy * gelu'(x), n values.
void geluTanhBackward(const float* x, const float* dy, float* dx, std::int64_t n);

/// Every row of c [rows, n] (row stride n) set to v [n].
void fillRows(float* c, const float* v, std::int64_t rows, int n);
/// Every row of c [rows, n] gets v [n] added.
void addToRows(float* c, const float* v, std::int64_t rows, int n);
/// sums[j] += sum_r x[r, j] for x [rows, n].
void addColumnSums(const float* x, float* sums, std::int64_t rows, int n);

/// a[r] = silu(gu[r, :i]) * gu[r, i:] for gu [rows, 2i] (gate half, then up half).
void swigluForward(const float* gu, float* a, std::int64_t rows, int i);
/// dgu [rows, 2i] from da [rows, i]: d gate = da * up * silu'(gate), d up = da * silu(gate).
void swigluBackward(const float* gu, const float* da, float* dgu, std::int64_t rows, int i);

/// dst[n] += src[n].
void addInPlace(float* dst, const float* src, std::int64_t n);
/// x[n] *= a.
void scaleInPlace(float* x, float a, std::int64_t n);
/// sum x[n]^2, accumulated in double.
double sumOfSquares(const float* x, std::int64_t n);

/// One AdamW update of n values in one pass, in torch.optim.AdamW's order of operations:
/// p *= decay; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= step * m / (sqrt(v)/bc2 + eps).
struct AdamWStep {
    float decay, beta1, beta2, stepSize, bc2Sqrt, eps;
};
void adamwUpdate(float* p, const float* g, float* m, float* v, std::int64_t n, const AdamWStep& s);

}  // namespace lengen::engine::model::kernels
