// The GPT-2 block as one autograd node (fused_layer.h): LayerNorms, the c_attn/c_proj/c_fc
// products with their biases, causal attention from the projection buffer, tanh GELU, forward and
// backward over raw buffers. Dropout is not fused: the block takes the module path when any
// dropout is active (gpt2.cpp).

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

// y = x W + b for x [M, in], W [in, out] (HF Conv1D), b [out]: bias rows, then one product.
torch::Tensor conv1d(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b)
{
    const auto m = x.size(0);
    const int in = static_cast<int>(w.size(0)), out = static_cast<int>(w.size(1));
    auto y = torch::empty({m, out}, x.options());
    k::fillRows(f(y), f(b), m, out);
    k::gemm(false, false, static_cast<int>(m), out, in, 1, f(x), in, f(w), out, 1, f(y), out);
    return y;
}

// dW = x^T dy [in, out], db = column sums of dy, dx = dy W^T [M, in].
void conv1dBackward(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& dy,
                    torch::Tensor& dw, torch::Tensor& db, torch::Tensor& dx)
{
    const int m = static_cast<int>(x.size(0)), in = static_cast<int>(w.size(0)),
              out = static_cast<int>(w.size(1));
    dw = torch::empty({in, out}, x.options());
    k::gemm(true, false, in, out, m, 1, f(x), in, f(dy), out, 0, f(dw), out);
    db = torch::zeros({out}, x.options());
    k::addColumnSums(f(dy), f(db), m, out);
    dx = torch::empty({m, in}, x.options());
    k::gemm(false, true, m, in, out, 1, f(dy), out, f(w), out, 0, f(dx), in);
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
        auto mean1 = torch::empty({s.m}, opt), rstd1 = torch::empty({s.m}, opt);
        auto h1 = torch::empty({s.m, s.h}, opt);
        k::layerNormForward(f(xc), f(ln1w), f(ln1b), f(h1), f(mean1), f(rstd1), s.m, s.h, e);
        auto qkv = conv1d(h1, wattn, battn);                          // [M, 3H]
        auto probs = torch::empty({s.b, s.heads, s.t, s.t}, opt);    // [B, heads, T, T]
        auto attn = torch::empty({s.m, s.h}, opt);                   // [M, H]
        k::attentionForward(s.attention(), f(qkv), nullptr, 0, f(probs), f(attn));
        auto x2 = xc.clone();                                        // x + attn Wp + bp
        k::gemm(false, false, s.m, s.h, s.h, 1, f(attn), s.h, f(wproj), s.h, 1, f(x2), s.h);
        k::addToRows(f(x2), f(bproj), s.m, s.h);
        auto mean2 = torch::empty({s.m}, opt), rstd2 = torch::empty({s.m}, opt);
        auto h2 = torch::empty({s.m, s.h}, opt);
        k::layerNormForward(f(x2), f(ln2w), f(ln2b), f(h2), f(mean2), f(rstd2), s.m, s.h, e);
        auto pre = conv1d(h2, wfc, bfc);                             // [M, 4H]
        auto act = torch::empty_like(pre);
        k::geluTanhForward(f(pre), f(act), pre.numel());
        const int inner = static_cast<int>(wfc.size(1));
        auto y = x2.clone();                                         // x2 + act Wm + bm
        k::gemm(false, false, s.m, s.h, inner, 1, f(act), inner, f(wmp), s.h, 1, f(y), s.h);
        k::addToRows(f(y), f(bmp), s.m, s.h);

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

        // MLP: y = x2 + gelu(c_fc(ln_2(x2))) Wm + bm.
        torch::Tensor dwmp, dbmp, dact;
        conv1dBackward(act, wmp, dy, dwmp, dbmp, dact);
        k::geluTanhBackward(f(pre), f(dact), f(dact), dact.numel());  // in place: d pre
        torch::Tensor dwfc, dbfc, dh2;
        conv1dBackward(h2, wfc, dact, dwfc, dbfc, dh2);
        auto dx2 = dy.clone();
        auto dln2w = torch::zeros({s.h}, opt), dln2b = torch::zeros({s.h}, opt);
        k::layerNormBackward(f(x2), f(ln2w), f(mean2), f(rstd2), f(dh2), f(dx2), f(dln2w),
                             f(dln2b), s.m, s.h);

        // Attention: x2 = x + attn Wp + bp.
        torch::Tensor dwproj, dbproj, dattn;
        conv1dBackward(attn, wproj, dx2, dwproj, dbproj, dattn);
        auto dqkv = torch::empty({s.m, 3 * s.h}, opt);
        k::attentionBackward(s.attention(), f(qkv), f(probs), f(dattn), f(dqkv), nullptr, 0);
        torch::Tensor dwattn, dbattn, dh1;
        conv1dBackward(h1, wattn, dqkv, dwattn, dbattn, dh1);
        auto dx = dx2.clone();
        auto dln1w = torch::zeros({s.h}, opt), dln1b = torch::zeros({s.h}, opt);
        k::layerNormBackward(f(xc), f(ln1w), f(mean1), f(rstd1), f(dh1), f(dx), f(dln1w),
                             f(dln1b), s.m, s.h);
        return {dx.view({s.b, s.t, s.h}), dln1w, dln1b, dwattn, dbattn, dwproj, dbproj, dln2w,
                dln2b, dwfc, dbfc, dwmp, dbmp, torch::Tensor(), torch::Tensor()};
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
