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

using fused::f;
using Shape = fused::TokenShape;

// y = x W + b for x [rows, in], W [in, out] (HF Conv1D), b [out]: bias rows, then one product.
void conv1d(const float* x, const torch::Tensor& w, const torch::Tensor& b, float* y, int rows)
{
    const int in = static_cast<int>(w.size(0)), out = static_cast<int>(w.size(1));
    k::fillRows(y, f(b), rows, out);
    k::gemm(false, false, rows, out, in, 1, x, in, f(w), out, 1, y, out);
}

// For x [rows, in], dy [rows, out]: dW = x^T dy [in, out] and db = column sums of dy (this
// part's, db accumulated), dx = dy W^T [rows, in].
void conv1dBackward(const float* x, const torch::Tensor& w, const float* dy, float* dw, float* db,
                    float* dx, int rows)
{
    const int in = static_cast<int>(w.size(0)), out = static_cast<int>(w.size(1));
    k::gemm(true, false, in, out, rows, 1, x, in, dy, out, 0, dw, out);
    k::addColumnSums(dy, db, rows, out);
    k::gemm(false, true, rows, in, out, 1, dy, out, f(w), out, 0, dx, in);
}

class FusedGpt2 : public torch::autograd::Function<FusedGpt2> {
public:
    static torch::Tensor
    forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& ln1w,
            const torch::Tensor& ln1b, const torch::Tensor& wattn, const torch::Tensor& battn,
            const torch::Tensor& wproj, const torch::Tensor& bproj, const torch::Tensor& ln2w,
            const torch::Tensor& ln2b, const torch::Tensor& wfc, const torch::Tensor& bfc,
            const torch::Tensor& wmp, const torch::Tensor& bmp, std::int64_t heads, double eps,
            const kernels::KernelContext* context)
    {
        const Shape s = Shape::of(x, heads);
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
        auto x2 = torch::empty({s.m, s.h}, opt);    // x + attn Wp + bp
        auto mean2 = torch::empty({s.m}, opt), rstd2 = torch::empty({s.m}, opt);
        auto h2 = torch::empty({s.m, s.h}, opt);
        auto pre = torch::empty({s.m, inner}, opt);  // [M, 4H]
        auto act = torch::empty_like(pre);
        auto y = torch::empty({s.m, s.h}, opt);  // x2 + act Wm + bm
        fused::BatchParts::of(*context, s.b, s.t).run([&](const fused::BatchPart& q) {
            k::layerNormForward(q.at(xc, h), f(ln1w), f(ln1b), q.at(h1, h), q.at(mean1, 1),
                                q.at(rstd1, 1), q.rows, h, e);
            conv1d(q.at(h1, h), wattn, battn, q.at(qkv, h3), q.rows);
            k::attentionForward(s.attention(q.items), q.at(qkv, h3), nullptr, 0,
                                f(probs) + q.first * probs.stride(0), q.at(attn, h));
            std::memcpy(q.at(x2, h), q.at(xc, h), sizeof(float) * q.rows * h);
            k::gemm(false, false, q.rows, h, h, 1, q.at(attn, h), h, f(wproj), h, 1, q.at(x2, h),
                    h);
            k::addToRows(q.at(x2, h), f(bproj), q.rows, h);
            k::layerNormForward(q.at(x2, h), f(ln2w), f(ln2b), q.at(h2, h), q.at(mean2, 1),
                                q.at(rstd2, 1), q.rows, h, e);
            conv1d(q.at(h2, h), wfc, bfc, q.at(pre, inner), q.rows);
            k::geluTanhForward(q.at(pre, inner), q.at(act, inner), std::int64_t{q.rows} * inner);
            std::memcpy(q.at(y, h), q.at(x2, h), sizeof(float) * q.rows * h);
            k::gemm(false, false, q.rows, h, inner, 1, q.at(act, inner), inner, f(wmp), h, 1,
                    q.at(y, h), h);
            k::addToRows(q.at(y, h), f(bmp), q.rows, h);
        });

        ctx->save_for_backward({xc, ln1w, wattn, wproj, ln2w, wfc, wmp, mean1, rstd1, h1, qkv,
                                probs, attn, x2, mean2, rstd2, h2, pre, act});
        ctx->saved_data["heads"] = heads;
        fused::keepContext(ctx, *context);
        return y.view({s.b, s.t, s.h});
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list grads)
    {
        const auto sv = ctx->get_saved_variables();
        const auto &xc = sv[0], &ln1w = sv[1], &wattn = sv[2], &wproj = sv[3], &ln2w = sv[4],
                   &wfc = sv[5], &wmp = sv[6], &mean1 = sv[7], &rstd1 = sv[8], &h1 = sv[9],
                   &qkv = sv[10], &probs = sv[11], &attn = sv[12], &x2 = sv[13], &mean2 = sv[14],
                   &rstd2 = sv[15], &h2 = sv[16], &pre = sv[17], &act = sv[18];
        const auto heads = ctx->saved_data["heads"].toInt();
        const auto& g0 = grads[0];
        const Shape s = Shape::of(g0, heads);
        const auto opt = xc.options();
        auto dy = g0.contiguous().view({s.m, s.h});
        const int h = s.h, h3 = 3 * s.h, inner = static_cast<int>(wfc.size(1));

        // Row buffers (each part fills its rows) and per-part sums of the parameter gradients.
        auto dact = torch::empty({s.m, inner}, opt), dh2 = torch::empty({s.m, s.h}, opt);
        auto dx2 = torch::empty({s.m, s.h}, opt), dattn = torch::empty({s.m, s.h}, opt);
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
            const size_t bytes = sizeof(float) * q.rows * h;

            // MLP: y = x2 + gelu(c_fc(ln_2(x2))) Wm + bm.
            conv1dBackward(q.at(act, inner), wmp, q.at(dy, h), dwmp.at(q.index), dbmp.at(q.index),
                           q.at(dact, inner), q.rows);
            k::geluTanhBackward(q.at(pre, inner), q.at(dact, inner), q.at(dact, inner),
                                std::int64_t{q.rows} * inner);  // in place: d pre
            conv1dBackward(q.at(h2, h), wfc, q.at(dact, inner), dwfc.at(q.index), dbfc.at(q.index),
                           q.at(dh2, h), q.rows);
            std::memcpy(q.at(dx2, h), q.at(dy, h), bytes);
            k::layerNormBackward(q.at(x2, h), f(ln2w), q.at(mean2, 1), q.at(rstd2, 1), q.at(dh2, h),
                                 q.at(dx2, h), dln2w.at(q.index), dln2b.at(q.index), q.rows, h);

            // Attention: x2 = x + attn Wp + bp.
            conv1dBackward(q.at(attn, h), wproj, q.at(dx2, h), dwproj.at(q.index),
                           dbproj.at(q.index), q.at(dattn, h), q.rows);
            k::attentionBackward(s.attention(q.items), q.at(qkv, h3),
                                 f(probs) + q.first * probs.stride(0), q.at(dattn, h),
                                 q.at(dqkv, h3), nullptr, 0);
            conv1dBackward(q.at(h1, h), wattn, q.at(dqkv, h3), dwattn.at(q.index),
                           dbattn.at(q.index), q.at(dh1, h), q.rows);
            std::memcpy(q.at(dx, h), q.at(dx2, h), bytes);
            k::layerNormBackward(q.at(xc, h), f(ln1w), q.at(mean1, 1), q.at(rstd1, 1), q.at(dh1, h),
                                 q.at(dx, h), dln1w.at(q.index), dln1b.at(q.index), q.rows, h);
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
                            p.eps, &context);
}

}  // namespace lengen::engine::model
