// The GPT-2 block as one autograd node (fused_layer.h): LayerNorms, the c_attn/c_proj/c_fc
// products with their biases, causal attention from the projection buffer, tanh GELU, forward and
// backward over raw buffers. Dropout is not fused: the block takes the module path when any
// dropout is active (gpt2.cpp).

#include <cstring>

#include "model/cpu_kernels.h"
#include "model/fused_common.h"
#include "model/fused_layer.h"

namespace lengen::engine::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;
namespace k = kernels;

using fused::floatsOf;
using Shape = fused::TokenShape;

// y = x W + b for x [rows, in], W [in, out] (HF Conv1D), b [out]: bias rows, then one product.
// x's rows are ldx apart (in: packed).
void conv1d(const float* x, const torch::Tensor& w, const torch::Tensor& b, float* y, int rows,
            int ldx = 0)
{
    const int in = static_cast<int>(w.size(0)), out = static_cast<int>(w.size(1));
    k::fillRows(y, floatsOf(b), rows, out);
    k::gemm(false, false, rows, out, in, 1, x, ldx ? ldx : in, floatsOf(w), out, 1, y, out);
}

// For x [rows, in], dy [rows, out]: dW = x^T dy [in, out] and db = column sums of dy (this
// part's, db accumulated), dx = dy W^T [rows, in]. x's and dx's rows are ld apart (in: packed).
void conv1dBackward(const float* x, const torch::Tensor& w, const float* dy, float* dw, float* db,
                    float* dx, int rows, int ld = 0)
{
    const int in = static_cast<int>(w.size(0)), out = static_cast<int>(w.size(1));
    ld = ld ? ld : in;
    k::gemm(true, false, in, out, rows, 1, x, ld, dy, out, 0, dw, out);
    k::addColumnSums(dy, db, rows, out);
    k::gemm(false, true, rows, in, out, 1, dy, out, floatsOf(w), out, 0, dx, ld);
}

class FusedGpt2 : public torch::autograd::Function<FusedGpt2> {
public:
    static torch::Tensor
    forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& ln1w,
            const torch::Tensor& ln1b, const torch::Tensor& wattn, const torch::Tensor& battn,
            const torch::Tensor& wproj, const torch::Tensor& bproj, const torch::Tensor& ln2w,
            const torch::Tensor& ln2b, const torch::Tensor& wfc, const torch::Tensor& bfc,
            const torch::Tensor& wmp, const torch::Tensor& bmp, std::int64_t heads, double eps,
            std::int64_t step, const kernels::KernelContext* context)
    {
        // step 2: only rows 0, 2, 4, ... out, as in fused_layer.cpp (evenRowsOut); x2 on are
        // those rows alone (mc of them).
        const Shape s = Shape::of(x, heads);
        const int st = static_cast<int>(step);
        const std::int64_t mc = s.m / st;
        const auto opt = x.options();
        const float e = static_cast<float>(eps);
        auto xc = x.contiguous().view({s.m, s.h});
        const int h = s.h, h3 = 3 * s.h, inner = static_cast<int>(wfc.size(1));
        // Every buffer holds all rows; each part of the batch fills its own rows.
        auto mean1 = torch::empty({s.m}, opt), rstd1 = torch::empty({s.m}, opt);
        auto h1 = torch::empty({s.m, s.h}, opt);
        auto qkv = torch::empty({s.m, h3}, opt);  // [M, 3H]
        auto probs = torch::empty({s.b, s.heads, k::attentionProbsPerItem(static_cast<int>(s.t))},
                                  opt);             // [B, heads, T * padded T]
        auto attn = torch::empty({s.m, s.h}, opt);  // [M, H]
        auto x2 = torch::empty({mc, s.h}, opt);     // x + attn Wp + bp, kept rows
        auto mean2 = torch::empty({mc}, opt), rstd2 = torch::empty({mc}, opt);
        auto h2 = torch::empty({mc, s.h}, opt);
        auto pre = torch::empty({mc, inner}, opt);  // [Mc, 4H]
        auto act = torch::empty_like(pre);
        auto y = torch::empty({mc, s.h}, opt);  // x2 + act Wm + bm
        fused::BatchParts::of(*context, s.b, s.t).run([&](const fused::BatchPart& q) {
            k::layerNormForward(q.at(xc, h), floatsOf(ln1w), floatsOf(ln1b), q.at(h1, h),
                                q.at(mean1, 1), q.at(rstd1, 1), q.rows, h, e);
            conv1d(q.at(h1, h), wattn, battn, q.at(qkv, h3), q.rows);
            k::attentionForward(s.attention(q.items), q.at(qkv, h3), nullptr, 0,
                                floatsOf(probs) + q.first * probs.stride(0), q.at(attn, h));
            // The kept rows (attn's at the step) from here on.
            const int rc = q.rows / st;
            float *x2p = q.atKept(x2, h, st), *h2p = q.atKept(h2, h, st), *yp = q.atKept(y, h, st);
            float *prep = q.atKept(pre, inner, st), *actp = q.atKept(act, inner, st);
            fused::copyRows(x2p, h, q.at(xc, h), st * h, rc, h);
            k::gemm(false, false, rc, h, h, 1, q.at(attn, h), st * h, floatsOf(wproj), h, 1, x2p,
                    h);
            k::addToRows(x2p, floatsOf(bproj), rc, h);
            k::layerNormForward(x2p, floatsOf(ln2w), floatsOf(ln2b), h2p, q.atKept(mean2, 1, st),
                                q.atKept(rstd2, 1, st), rc, h, e);
            conv1d(h2p, wfc, bfc, prep, rc);
            k::geluTanhForward(prep, actp, std::int64_t{rc} * inner);
            std::memcpy(yp, x2p, sizeof(float) * rc * h);
            k::gemm(false, false, rc, h, inner, 1, actp, inner, floatsOf(wmp), h, 1, yp, h);
            k::addToRows(yp, floatsOf(bmp), rc, h);
        });

        ctx->save_for_backward({xc, ln1w, wattn, wproj, ln2w, wfc, wmp, mean1, rstd1, h1, qkv,
                                probs, attn, x2, mean2, rstd2, h2, pre, act});
        ctx->saved_data["heads"] = heads;
        ctx->saved_data["step"] = step;
        fused::keepContext(ctx, *context);
        return y.view({s.b, s.t / st, s.h});
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list grads)
    {
        const auto sv = ctx->get_saved_variables();
        const auto &xc = sv[0], &ln1w = sv[1], &wattn = sv[2], &wproj = sv[3], &ln2w = sv[4],
                   &wfc = sv[5], &wmp = sv[6], &mean1 = sv[7], &rstd1 = sv[8], &h1 = sv[9],
                   &qkv = sv[10], &probs = sv[11], &attn = sv[12], &x2 = sv[13], &mean2 = sv[14],
                   &rstd2 = sv[15], &h2 = sv[16], &pre = sv[17], &act = sv[18];
        const auto heads = ctx->saved_data["heads"].toInt();
        const int st = static_cast<int>(ctx->saved_data["step"].toInt());
        const auto& g0 = grads[0];
        Shape s = Shape::of(g0, heads);  // of the kept rows; then of all of x's
        s.t *= st;
        s.m *= st;
        const auto opt = xc.options();
        auto dy = g0.contiguous().view({s.m / st, s.h});
        const int h = s.h, h3 = 3 * s.h, inner = static_cast<int>(wfc.size(1));

        // Row buffers (each part fills its rows) and per-part sums of the parameter gradients.
        auto dact = torch::empty({s.m / st, inner}, opt), dh2 = torch::empty({s.m / st, s.h}, opt);
        auto dx2 = torch::empty({s.m / st, s.h}, opt), dattn = torch::empty({s.m, s.h}, opt);
        auto dqkv = torch::empty({s.m, h3}, opt), dh1 = torch::empty({s.m, s.h}, opt);
        auto dx = torch::empty({s.m, s.h}, opt);
        const auto parts = fused::BatchParts::of(fused::keptContext(ctx), s.b, s.t);
        const int n = parts.count;
        using fused::PartSums;
        PartSums dwmp(n, {inner, s.h}, opt, false), dbmp(n, {s.h}, opt, true),
            dwfc(n, {s.h, inner}, opt, false), dbfc(n, {inner}, opt, true),
            dln2w(n, {s.h}, opt, true), dln2b(n, {s.h}, opt, true),
            dwproj(n, {s.h, s.h}, opt, false), dbproj(n, {s.h}, opt, true),
            dwattn(n, {s.h, h3}, opt, false), dbattn(n, {h3}, opt, true),
            dln1w(n, {s.h}, opt, true), dln1b(n, {s.h}, opt, true);
        parts.run([&](const fused::BatchPart& q) {
            // MLP over the kept rows (rc): y = x2 + gelu(c_fc(ln_2(x2))) Wm + bm.
            const int rc = q.rows / st;
            float *dactp = q.atKept(dact, inner, st), *dx2p = q.atKept(dx2, h, st);
            const float* dyp = q.atKept(dy, h, st);
            conv1dBackward(q.atKept(act, inner, st), wmp, dyp, dwmp.at(q.index), dbmp.at(q.index),
                           dactp, rc);
            k::geluTanhBackward(q.atKept(pre, inner, st), dactp, dactp,
                                std::int64_t{rc} * inner);  // in place: d pre
            conv1dBackward(q.atKept(h2, h, st), wfc, dactp, dwfc.at(q.index), dbfc.at(q.index),
                           q.atKept(dh2, h, st), rc);
            std::memcpy(dx2p, dyp, sizeof(float) * rc * h);
            k::layerNormBackward(q.atKept(x2, h, st), floatsOf(ln2w), q.atKept(mean2, 1, st),
                                 q.atKept(rstd2, 1, st), q.atKept(dh2, h, st), dx2p,
                                 dln2w.at(q.index), dln2b.at(q.index), rc, h);

            // Attention: x2 = x + attn Wp + bp on the kept rows; the others get no gradient.
            if (st != 1) {
                std::memset(q.at(dattn, h), 0, sizeof(float) * q.rows * h);
                std::memset(q.at(dx, h), 0, sizeof(float) * q.rows * h);
            }
            fused::copyRows(q.at(dx, h), st * h, dx2p, h, rc, h);
            conv1dBackward(q.at(attn, h), wproj, dx2p, dwproj.at(q.index), dbproj.at(q.index),
                           q.at(dattn, h), rc, st * h);
            k::attentionBackward(s.attention(q.items), q.at(qkv, h3),
                                 floatsOf(probs) + q.first * probs.stride(0), q.at(dattn, h),
                                 q.at(dqkv, h3), nullptr, 0);
            conv1dBackward(q.at(h1, h), wattn, q.at(dqkv, h3), dwattn.at(q.index),
                           dbattn.at(q.index), q.at(dh1, h), q.rows);
            k::layerNormBackward(q.at(xc, h), floatsOf(ln1w), q.at(mean1, 1), q.at(rstd1, 1),
                                 q.at(dh1, h), q.at(dx, h), dln1w.at(q.index), dln1b.at(q.index),
                                 q.rows, h);
        });

        return {dx.view({s.b, s.t, s.h}),
                dln1w.total(),
                dln1b.total(),
                dwattn.total(),
                dbattn.total(),
                dwproj.total(),
                dbproj.total(),
                dln2w.total(),
                dln2b.total(),
                dwfc.total(),
                dbfc.total(),
                dwmp.total(),
                dbmp.total(),
                torch::Tensor(),
                torch::Tensor(),
                torch::Tensor(),
                torch::Tensor()};
    }
};

}  // namespace

torch::Tensor fusedGpt2Block(const torch::Tensor& x, const FusedGpt2Params& p,
                             const kernels::KernelContext& context)
{
    return FusedGpt2::apply(x, p.ln1Weight, p.ln1Bias, p.attnWeight, p.attnBias, p.projWeight,
                            p.projBias, p.ln2Weight, p.ln2Bias, p.fcWeight, p.fcBias,
                            p.mlpProjWeight, p.mlpProjBias, static_cast<std::int64_t>(p.heads),
                            p.eps, static_cast<std::int64_t>(p.evenRowsOut ? 2 : 1), &context);
}

}  // namespace lengen::engine::model
