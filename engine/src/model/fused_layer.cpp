#include "model/fused_layer.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "model/cpu_kernels.h"
#include "model/fused_common.h"

namespace lengen::engine::model {

namespace {

std::atomic<bool>& fusedSwitch()
{
    static std::atomic<bool> on{[] {
        const char* env = std::getenv("LENGEN_FUSED");
        return !(env && std::strcmp(env, "0") == 0);
    }()};
    return on;
}

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;
namespace k = kernels;

using fused::f;

// The token shape (fused_common.h) and the MLP width I: gu rows hold [gate | up], each I wide.
struct Dims : fused::TokenShape {
    int inter = 0;
};

Dims dims(const torch::Tensor& x, std::int64_t inter, std::int64_t heads)
{
    Dims s;
    static_cast<fused::TokenShape&>(s) = fused::TokenShape::of(x, heads);
    s.inter = static_cast<int>(inter);
    return s;
}

class FusedLayer : public torch::autograd::Function<FusedLayer> {
public:
    // Inputs as in the module: x, input norm, q, k, v, o, post norm, gate, up, down, then the
    // PE's cos, sin, bias (each possibly empty: none), heads and eps.
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                                 const torch::Tensor& g1, const torch::Tensor& wq,
                                 const torch::Tensor& wk, const torch::Tensor& wv,
                                 const torch::Tensor& wo, const torch::Tensor& g2,
                                 const torch::Tensor& wgate, const torch::Tensor& wup,
                                 const torch::Tensor& wdown, const torch::Tensor& cos,
                                 const torch::Tensor& sin, const torch::Tensor& bias,
                                 std::int64_t heads, double eps)
    {
        const Dims s = dims(x, wgate.size(0), heads);
        const auto opt = x.options();
        auto xc = x.contiguous();
        auto wqkv = torch::cat({wq, wk, wv});            // [3H, H]
        auto wgu = torch::cat({wgate, wup});             // [2I, H]
        const bool hasBias = bias.numel() > 0, rotary = cos.numel() > 0;
        auto biasC = hasBias ? bias.contiguous() : torch::Tensor();

        auto xn1 = torch::empty({s.m, s.h}, opt), rstd1 = torch::empty({s.m}, opt);
        k::rmsNormForward(f(xc), f(g1), f(xn1), f(rstd1), s.m, s.h, static_cast<float>(eps));
        auto qkv = torch::empty({s.m, 3 * s.h}, opt);    // [M, 3H]
        k::gemm(false, true, s.m, 3 * s.h, s.h, 1, f(xn1), s.h, f(wqkv), s.h, 0, f(qkv), 3 * s.h);
        if (rotary)  // q and k: 2H columns = 2*heads head vectors per row
            k::ropeForward(f(qkv), 3 * s.h, s.b, s.t, 2 * s.heads, s.d, f(cos), f(sin));

        auto probs = torch::empty({s.b, s.heads, s.t, s.t}, opt);   // [B, heads, T, T]
        auto attn = torch::empty({s.m, s.h}, opt);                  // [M, H], heads merged
        k::attentionForward(s.attention(), f(qkv), hasBias ? f(biasC) : nullptr,
                            hasBias ? biasC.size(0) : 0, f(probs), f(attn));
        auto x2 = xc.view({s.m, s.h}).clone();           // x + attn o^T
        k::gemm(false, true, s.m, s.h, s.h, 1, f(attn), s.h, f(wo), s.h, 1, f(x2), s.h);
        auto xn2 = torch::empty({s.m, s.h}, opt), rstd2 = torch::empty({s.m}, opt);
        k::rmsNormForward(f(x2), f(g2), f(xn2), f(rstd2), s.m, s.h, static_cast<float>(eps));
        auto gu = torch::empty({s.m, 2 * s.inter}, opt);            // [M, 2I]
        k::gemm(false, true, s.m, 2 * s.inter, s.h, 1, f(xn2), s.h, f(wgu), s.h, 0, f(gu),
                2 * s.inter);
        auto act = torch::empty({s.m, s.inter}, opt);               // [M, I]
        k::swigluForward(f(gu), f(act), s.m, s.inter);
        auto y = x2.clone();                                        // x2 + act down^T
        k::gemm(false, true, s.m, s.h, s.inter, 1, f(act), s.inter, f(wdown), s.inter, 1, f(y),
                s.h);

        ctx->save_for_backward({xc, g1, wqkv, wo, g2, wgu, wdown, cos, sin, xn1, rstd1, qkv, probs,
                                attn, x2, xn2, rstd2, gu, act});
        ctx->saved_data["heads"] = heads;
        ctx->saved_data["bias"] = hasBias && bias.requires_grad();
        ctx->saved_data["biasHeads"] = hasBias ? biasC.size(0) : 0;
        return y.view({s.b, s.t, s.h});
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list grads)
    {
        const auto sv = ctx->get_saved_variables();
        const auto &x = sv[0], &g1 = sv[1], &wqkv = sv[2], &wo = sv[3], &g2 = sv[4], &wgu = sv[5],
                   &wdown = sv[6], &cos = sv[7], &sin = sv[8], &xn1 = sv[9], &rstd1 = sv[10],
                   &qkv = sv[11], &probs = sv[12], &attn = sv[13], &x2 = sv[14], &xn2 = sv[15],
                   &rstd2 = sv[16], &gu = sv[17], &act = sv[18];
        const auto heads = ctx->saved_data["heads"].toInt();
        const Dims s = dims(x, wgu.size(0) / 2, heads);
        const auto opt = x.options();
        auto dy = grads[0].contiguous().view({s.m, s.h});

        // MLP: y = x2 + act down^T.
        auto dx2 = dy.clone();
        auto dwdown = torch::empty({s.h, s.inter}, opt);
        k::gemm(true, false, s.h, s.inter, s.m, 1, f(dy), s.h, f(act), s.inter, 0, f(dwdown),
                s.inter);
        auto dact = torch::empty({s.m, s.inter}, opt);
        k::gemm(false, false, s.m, s.inter, s.h, 1, f(dy), s.h, f(wdown), s.inter, 0, f(dact),
                s.inter);
        auto dgu = torch::empty({s.m, 2 * s.inter}, opt);
        k::swigluBackward(f(gu), f(dact), f(dgu), s.m, s.inter);
        auto dwgu = torch::empty({2 * s.inter, s.h}, opt);
        k::gemm(true, false, 2 * s.inter, s.h, s.m, 1, f(dgu), 2 * s.inter, f(xn2), s.h, 0,
                f(dwgu), s.h);
        auto dxn2 = torch::empty({s.m, s.h}, opt);
        k::gemm(false, false, s.m, s.h, 2 * s.inter, 1, f(dgu), 2 * s.inter, f(wgu), s.h, 0,
                f(dxn2), s.h);
        auto dg2 = torch::zeros({s.h}, opt);
        k::rmsNormBackward(f(x2), f(g2), f(rstd2), f(dxn2), f(dx2), f(dg2), s.m, s.h);

        // Attention: x2 = x + attn o^T.
        auto dx = dx2.clone();
        auto dwo = torch::empty({s.h, s.h}, opt);
        k::gemm(true, false, s.h, s.h, s.m, 1, f(dx2), s.h, f(attn), s.h, 0, f(dwo), s.h);
        auto dattn = torch::empty({s.m, s.h}, opt);
        k::gemm(false, false, s.m, s.h, s.h, 1, f(dx2), s.h, f(wo), s.h, 0, f(dattn), s.h);
        auto dqkv = torch::empty({s.m, 3 * s.h}, opt);
        const bool wantBias = ctx->saved_data["bias"].toBool();
        const auto biasHeads = ctx->saved_data["biasHeads"].toInt();
        auto dbias = wantBias ? torch::zeros({biasHeads, s.t, s.t}, opt) : torch::Tensor();
        k::attentionBackward(s.attention(), f(qkv), f(probs), f(dattn), f(dqkv),
                             wantBias ? f(dbias) : nullptr, biasHeads);
        const int ld = 3 * s.h;
        if (cos.numel() > 0)
            k::ropeBackward(f(dqkv), ld, s.b, s.t, 2 * s.heads, s.d, f(cos), f(sin));
        auto dwqkv = torch::empty({3 * s.h, s.h}, opt);
        k::gemm(true, false, 3 * s.h, s.h, s.m, 1, f(dqkv), ld, f(xn1), s.h, 0, f(dwqkv), s.h);
        auto dxn1 = torch::empty({s.m, s.h}, opt);
        k::gemm(false, false, s.m, s.h, 3 * s.h, 1, f(dqkv), ld, f(wqkv), s.h, 0, f(dxn1), s.h);
        auto dg1 = torch::zeros({s.h}, opt);
        k::rmsNormBackward(f(x), f(g1), f(rstd1), f(dxn1), f(dx), f(dg1), s.m, s.h);

        auto split = dwqkv.split(s.h);
        auto gsplit = dwgu.split(s.inter);
        return {dx.view({s.b, s.t, s.h}), dg1, split[0], split[1], split[2], dwo, dg2,
                gsplit[0], gsplit[1], dwdown, torch::Tensor(), torch::Tensor(), dbias,
                torch::Tensor(), torch::Tensor()};
    }
};

}  // namespace

bool fusedLayerApplies(const torch::Tensor& x)
{
    return fusedSwitch().load() && torch::GradMode::is_enabled() && x.device().is_cpu() &&
           x.scalar_type() == torch::kFloat32 && x.dim() == 3 && kernels::hasBlas();
}

void setFusedLayers(bool on) { fusedSwitch().store(on); }

torch::Tensor fusedLlamaLayer(const torch::Tensor& x, const FusedLayerParams& p,
                              const torch::Tensor& cos, const torch::Tensor& sin,
                              const torch::Tensor& bias)
{
    // Custom functions need defined inputs: an empty tensor stands for "none".
    auto orNone = [](const torch::Tensor& t) { return t.defined() ? t : torch::empty({0}); };
    return FusedLayer::apply(x, p.inputNorm, p.q, p.k, p.v, p.o, p.postNorm, p.gate, p.up,
                             p.down, orNone(cos), orNone(sin), orNone(bias),
                             static_cast<std::int64_t>(p.heads), p.eps);
}

}  // namespace lengen::engine::model
