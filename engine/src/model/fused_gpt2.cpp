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
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                                 const torch::Tensor& ln1w, const torch::Tensor& ln1b,
                                 const torch::Tensor& wattn, const torch::Tensor& battn,
                                 const torch::Tensor& wproj, const torch::Tensor& bproj,
                                 const torch::Tensor& ln2w, const torch::Tensor& ln2b,
                                 const torch::Tensor& wfc, const torch::Tensor& bfc,
                                 const torch::Tensor& wmp, const torch::Tensor& bmp,
                                 std::int64_t heads, double eps)
    {
        const Shape s = Shape::of(x, heads);
        const auto opt = x.options();
        const float e = static_cast<float>(eps);
        auto xc = x.contiguous().view({s.m, s.h});
        const int h = s.h, h3 = 3 * s.h, inner = static_cast<int>(wfc.size(1));
        // Every buffer holds all rows; each part of the batch fills its own rows.
        auto mean1 = torch::empty({s.m}, opt), rstd1 = torch::empty({s.m}, opt);
        auto h1 = torch::empty({s.m, s.h}, opt);
        auto qkv = torch::empty({s.m, h3}, opt);                      // [M, 3H]
        auto probs = torch::empty({s.b, s.heads, s.t, s.t}, opt);    // [B, heads, T, T]
        auto attn = torch::empty({s.m, s.h}, opt);                   // [M, H]
        auto x2 = torch::empty({s.m, s.h}, opt);                     // x + attn Wp + bp
        auto mean2 = torch::empty({s.m}, opt), rstd2 = torch::empty({s.m}, opt);
        auto h2 = torch::empty({s.m, s.h}, opt);
        auto pre = torch::empty({s.m, inner}, opt);                  // [M, 4H]
        auto act = torch::empty_like(pre);
        auto y = torch::empty({s.m, s.h}, opt);                      // x2 + act Wm + bm
        fused::BatchParts::of(s.b).run([&](int, std::int64_t b0, std::int64_t nb) {
            const std::int64_t r0 = b0 * s.t;
            const int rows = static_cast<int>(nb * s.t);
            auto at = [r0](const torch::Tensor& t, std::int64_t width) { return f(t) + r0 * width; };
            k::layerNormForward(at(xc, h), f(ln1w), f(ln1b), at(h1, h), at(mean1, 1), at(rstd1, 1),
                                rows, h, e);
            conv1d(at(h1, h), wattn, battn, at(qkv, h3), rows);
            k::attentionForward(s.attention(nb), at(qkv, h3), nullptr, 0,
                                f(probs) + b0 * s.heads * s.t * s.t, at(attn, h));
            std::memcpy(at(x2, h), at(xc, h), sizeof(float) * rows * h);
            k::gemm(false, false, rows, h, h, 1, at(attn, h), h, f(wproj), h, 1, at(x2, h), h);
            k::addToRows(at(x2, h), f(bproj), rows, h);
            k::layerNormForward(at(x2, h), f(ln2w), f(ln2b), at(h2, h), at(mean2, 1), at(rstd2, 1),
                                rows, h, e);
            conv1d(at(h2, h), wfc, bfc, at(pre, inner), rows);
            k::geluTanhForward(at(pre, inner), at(act, inner), std::int64_t{rows} * inner);
            std::memcpy(at(y, h), at(x2, h), sizeof(float) * rows * h);
            k::gemm(false, false, rows, h, inner, 1, at(act, inner), inner, f(wmp), h, 1, at(y, h),
                    h);
            k::addToRows(at(y, h), f(bmp), rows, h);
        });

        ctx->save_for_backward({xc, ln1w, wattn, wproj, ln2w, wfc, wmp, mean1, rstd1, h1, qkv,
                                probs, attn, x2, mean2, rstd2, h2, pre, act});
        ctx->saved_data["heads"] = heads;
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
        const auto parts = fused::BatchParts::of(s.b);
        const int n = parts.count;
        using fused::PartSums;
        PartSums dwmp(n, {inner, s.h}, opt, false), dbmp(n, {s.h}, opt, true),
            dwfc(n, {s.h, inner}, opt, false), dbfc(n, {inner}, opt, true),
            dln2w(n, {s.h}, opt, true), dln2b(n, {s.h}, opt, true),
            dwproj(n, {s.h, s.h}, opt, false), dbproj(n, {s.h}, opt, true),
            dwattn(n, {s.h, h3}, opt, false), dbattn(n, {h3}, opt, true),
            dln1w(n, {s.h}, opt, true), dln1b(n, {s.h}, opt, true);
        parts.run([&](int p, std::int64_t b0, std::int64_t nb) {
            const std::int64_t r0 = b0 * s.t;
            const int rows = static_cast<int>(nb * s.t);
            auto at = [r0](const torch::Tensor& t, std::int64_t width) { return f(t) + r0 * width; };
            const size_t bytes = sizeof(float) * rows * h;

            // MLP: y = x2 + gelu(c_fc(ln_2(x2))) Wm + bm.
            conv1dBackward(at(act, inner), wmp, at(dy, h), dwmp.at(p), dbmp.at(p), at(dact, inner),
                           rows);
            k::geluTanhBackward(at(pre, inner), at(dact, inner), at(dact, inner),
                                std::int64_t{rows} * inner);  // in place: d pre
            conv1dBackward(at(h2, h), wfc, at(dact, inner), dwfc.at(p), dbfc.at(p), at(dh2, h),
                           rows);
            std::memcpy(at(dx2, h), at(dy, h), bytes);
            k::layerNormBackward(at(x2, h), f(ln2w), at(mean2, 1), at(rstd2, 1), at(dh2, h),
                                 at(dx2, h), dln2w.at(p), dln2b.at(p), rows, h);

            // Attention: x2 = x + attn Wp + bp.
            conv1dBackward(at(attn, h), wproj, at(dx2, h), dwproj.at(p), dbproj.at(p),
                           at(dattn, h), rows);
            k::attentionBackward(s.attention(nb), at(qkv, h3), f(probs) + b0 * s.heads * s.t * s.t,
                                 at(dattn, h), at(dqkv, h3), nullptr, 0);
            conv1dBackward(at(h1, h), wattn, at(dqkv, h3), dwattn.at(p), dbattn.at(p), at(dh1, h),
                           rows);
            std::memcpy(at(dx, h), at(dx2, h), bytes);
            k::layerNormBackward(at(xc, h), f(ln1w), at(mean1, 1), at(rstd1, 1), at(dh1, h),
                                 at(dx, h), dln1w.at(p), dln1b.at(p), rows, h);
        });

        return {dx.view({s.b, s.t, s.h}), dln1w.total(), dln1b.total(), dwattn.total(),
                dbattn.total(), dwproj.total(), dbproj.total(), dln2w.total(), dln2b.total(),
                dwfc.total(), dbfc.total(), dwmp.total(), dbmp.total(), torch::Tensor(),
                torch::Tensor()};
    }
};

}  // namespace

torch::Tensor fusedGpt2Block(const torch::Tensor& x, const FusedGpt2Params& p)
{
    return FusedGpt2::apply(x, p.ln1Weight, p.ln1Bias, p.attnWeight, p.attnBias, p.projWeight,
                            p.projBias, p.ln2Weight, p.ln2Bias, p.fcWeight, p.fcBias,
                            p.mlpProjWeight, p.mlpProjBias, static_cast<std::int64_t>(p.heads),
                            p.eps);
}

}  // namespace lengen::engine::model
