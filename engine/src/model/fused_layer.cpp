#include "model/fused_layer.h"

#include <cstring>

#include "model/cpu_kernels.h"
#include "model/fused_common.h"

namespace lengen::engine::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;
namespace k = kernels;

using fused::f;

// The token shape (fused_common.h) and the MLP width I: gu rows hold [gate | up], each I wide.
// step: 1, or 2 where only rows 0, 2, 4, ... of the output are wanted (the last layer in
// training, whose read-out takes the x tokens: LlamaImpl::forwardEvenRows). Those rows are mc =
// m / step; the rows after attention (x2 on) exist only for them.
struct Dims : fused::TokenShape {
    int inter = 0, step = 1;
    std::int64_t mc = 0;
};

Dims dims(const torch::Tensor& x, std::int64_t inter, std::int64_t heads, std::int64_t step)
{
    Dims s;
    static_cast<fused::TokenShape&>(s) = fused::TokenShape::of(x, heads);
    s.inter = static_cast<int>(inter);
    s.step = static_cast<int>(step);
    s.mc = s.m / step;
    return s;
}

class FusedLayer : public torch::autograd::Function<FusedLayer> {
public:
    // Inputs as in the module: x, input norm, q, k, v, o, post norm, gate, up, down, then the
    // PE's cos, sin, the keys' cos and sin where they differ (xPos), bias (each possibly empty:
    // none), heads, eps and the kernel context.
    static torch::Tensor
    forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& g1,
            const torch::Tensor& wq, const torch::Tensor& wk, const torch::Tensor& wv,
            const torch::Tensor& wo, const torch::Tensor& g2, const torch::Tensor& wgate,
            const torch::Tensor& wup, const torch::Tensor& wdown, const torch::Tensor& cos,
            const torch::Tensor& sin, const torch::Tensor& cosK, const torch::Tensor& sinK,
            const torch::Tensor& bias, std::int64_t heads, double eps, std::int64_t step,
            const kernels::KernelContext* context)
    {
        const Dims s = dims(x, wgate.size(0), heads, step);
        const auto opt = x.options();
        auto xc = x.contiguous();
        auto wqkv = torch::cat({wq, wk, wv});  // [3H, H]
        auto wgu = torch::cat({wgate, wup});   // [2I, H]
        const bool hasBias = bias.numel() > 0, rotary = cos.numel() > 0, ownKeys = cosK.numel() > 0;
        auto biasC = hasBias ? bias.contiguous() : torch::Tensor();

        // Every buffer holds all rows; each part of the batch fills its own rows.
        auto xn1 = torch::empty({s.m, s.h}, opt), rstd1 = torch::empty({s.m}, opt);
        auto qkv = torch::empty({s.m, 3 * s.h}, opt);  // [M, 3H]
        auto probs = torch::empty({s.b, s.heads, k::attentionProbsPerItem(static_cast<int>(s.t))},
                                  opt);             // [B, heads, T * padded T]
        auto attn = torch::empty({s.m, s.h}, opt);  // [M, H], heads merged
        auto x2 = torch::empty({s.mc, s.h}, opt);   // x + attn o^T, kept rows
        auto xn2 = torch::empty({s.mc, s.h}, opt), rstd2 = torch::empty({s.mc}, opt);
        auto gu = torch::empty({s.mc, 2 * s.inter}, opt);  // [Mc, 2I]
        auto act = torch::empty({s.mc, s.inter}, opt);     // [Mc, I]
        auto y = torch::empty({s.mc, s.h}, opt);           // x2 + act down^T
        const int h = s.h, h3 = 3 * s.h, in = s.inter, st = s.step;
        const float e = static_cast<float>(eps);
        fused::BatchParts::of(*context, s.b, s.t).run([&](const fused::BatchPart& q) {
            k::rmsNormForward(q.at(xc, h), f(g1), q.at(xn1, h), q.at(rstd1, 1), q.rows, h, e);
            k::gemm(false, true, q.rows, h3, h, 1, q.at(xn1, h), h, f(wqkv), h, 0, q.at(qkv, h3),
                    h3);
            if (rotary && ownKeys) {  // q's heads, then k's H columns on with their tables
                k::ropeForward(q.at(qkv, h3), h3, q.items, static_cast<int>(s.t), s.heads, s.d,
                               f(cos), f(sin));
                k::ropeForward(q.at(qkv, h3) + h, h3, q.items, static_cast<int>(s.t), s.heads, s.d,
                               f(cosK), f(sinK));
            } else if (rotary) {  // q and k: 2H columns = 2*heads head vectors per row
                k::ropeForward(q.at(qkv, h3), h3, q.items, static_cast<int>(s.t), 2 * s.heads, s.d,
                               f(cos), f(sin));
            }
            k::attentionForward(s.attention(q.items), q.at(qkv, h3), hasBias ? f(biasC) : nullptr,
                                hasBias ? biasC.size(0) : 0, f(probs) + q.first * probs.stride(0),
                                q.at(attn, h));
            // From here on the kept rows only: attn's rows at the step (lda step * h).
            const int rc = q.rows / st;
            float *x2p = q.atKept(x2, h, st), *xn2p = q.atKept(xn2, h, st);
            float *gup = q.atKept(gu, 2 * in, st), *actp = q.atKept(act, in, st);
            fused::copyRows(x2p, h, q.at(xc, h), st * h, rc, h);
            k::gemm(false, true, rc, h, h, 1, q.at(attn, h), st * h, f(wo), h, 1, x2p, h);
            k::rmsNormForward(x2p, f(g2), xn2p, q.atKept(rstd2, 1, st), rc, h, e);
            k::gemm(false, true, rc, 2 * in, h, 1, xn2p, h, f(wgu), h, 0, gup, 2 * in);
            k::swigluForward(gup, actp, rc, in);
            std::memcpy(q.atKept(y, h, st), x2p, sizeof(float) * rc * h);
            k::gemm(false, true, rc, h, in, 1, actp, in, f(wdown), in, 1, q.atKept(y, h, st), h);
        });

        ctx->save_for_backward({xc,  g1,    wqkv, wo, g2,  wgu,   wdown, cos, sin,  xn1, rstd1,
                                qkv, probs, attn, x2, xn2, rstd2, gu,    act, cosK, sinK});
        ctx->saved_data["heads"] = heads;
        ctx->saved_data["step"] = step;
        fused::keepContext(ctx, *context);
        ctx->saved_data["bias"] = hasBias && bias.requires_grad();
        ctx->saved_data["biasHeads"] = hasBias ? biasC.size(0) : 0;
        return y.view({s.b, s.t / s.step, s.h});
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list grads)
    {
        const auto sv = ctx->get_saved_variables();
        const auto &x = sv[0], &g1 = sv[1], &wqkv = sv[2], &wo = sv[3], &g2 = sv[4], &wgu = sv[5],
                   &wdown = sv[6], &cos = sv[7], &sin = sv[8], &xn1 = sv[9], &rstd1 = sv[10],
                   &qkv = sv[11], &probs = sv[12], &attn = sv[13], &x2 = sv[14], &xn2 = sv[15],
                   &rstd2 = sv[16], &gu = sv[17], &act = sv[18], &cosK = sv[19], &sinK = sv[20];
        const auto heads = ctx->saved_data["heads"].toInt();
        const Dims s = dims(x, wgu.size(0) / 2, heads, ctx->saved_data["step"].toInt());
        const auto opt = x.options();
        auto dy = grads[0].contiguous().view({s.mc, s.h});
        const bool wantBias = ctx->saved_data["bias"].toBool();
        const auto biasHeads = ctx->saved_data["biasHeads"].toInt();

        // Row buffers (each part fills its rows) and per-part sums of the weight gradients.
        auto dx2 = torch::empty({s.mc, s.h}, opt), dx = torch::empty({s.m, s.h}, opt);
        auto dact = torch::empty({s.mc, s.inter}, opt);
        auto dgu = torch::empty({s.mc, 2 * s.inter}, opt);
        auto dxn2 = torch::empty({s.mc, s.h}, opt), dxn1 = torch::empty({s.m, s.h}, opt);
        auto dattn = torch::empty({s.m, s.h}, opt);
        auto dqkv = torch::empty({s.m, 3 * s.h}, opt);
        const auto parts = fused::BatchParts::of(fused::keptContext(ctx), s.b, s.t);
        const int n = parts.count;
        fused::PartSums dwdown(n, {s.h, s.inter}, opt, false),
            dwgu(n, {2 * s.inter, s.h}, opt, false), dwo(n, {s.h, s.h}, opt, false),
            dwqkv(n, {3 * s.h, s.h}, opt, false), dg1(n, {s.h}, opt, true),
            dg2(n, {s.h}, opt, true), dbias(n, {wantBias ? biasHeads : 0, s.t, s.t}, opt, true);
        const int h = s.h, h3 = 3 * s.h, in = s.inter, st = s.step;
        parts.run([&](const fused::BatchPart& q) {
            // MLP over the kept rows (rc of them): y = x2 + act down^T.
            const int rc = q.rows / st;
            const float *dyp = q.atKept(dy, h, st), *actp = q.atKept(act, in, st);
            float *dx2p = q.atKept(dx2, h, st), *dactp = q.atKept(dact, in, st);
            float* dgup = q.atKept(dgu, 2 * in, st);
            std::memcpy(dx2p, dyp, sizeof(float) * rc * h);
            k::gemm(true, false, h, in, rc, 1, dyp, h, actp, in, 0, dwdown.at(q.index), in);
            k::gemm(false, false, rc, in, h, 1, dyp, h, f(wdown), in, 0, dactp, in);
            k::swigluBackward(q.atKept(gu, 2 * in, st), dactp, dgup, rc, in);
            k::gemm(true, false, 2 * in, h, rc, 1, dgup, 2 * in, q.atKept(xn2, h, st), h, 0,
                    dwgu.at(q.index), h);
            k::gemm(false, false, rc, h, 2 * in, 1, dgup, 2 * in, f(wgu), h, 0,
                    q.atKept(dxn2, h, st), h);
            k::rmsNormBackward(q.atKept(x2, h, st), f(g2), q.atKept(rstd2, 1, st),
                               q.atKept(dxn2, h, st), dx2p, dg2.at(q.index), rc, h);

            // Attention: x2 = x + attn o^T on the kept rows; the others get no gradient.
            if (st != 1) {
                std::memset(q.at(dx, h), 0, sizeof(float) * q.rows * h);
                std::memset(q.at(dattn, h), 0, sizeof(float) * q.rows * h);
            }
            fused::copyRows(q.at(dx, h), st * h, dx2p, h, rc, h);
            k::gemm(true, false, h, h, rc, 1, dx2p, h, q.at(attn, h), st * h, 0, dwo.at(q.index),
                    h);
            k::gemm(false, false, rc, h, h, 1, dx2p, h, f(wo), h, 0, q.at(dattn, h), st * h);
            k::attentionBackward(s.attention(q.items), q.at(qkv, h3),
                                 f(probs) + q.first * probs.stride(0), q.at(dattn, h),
                                 q.at(dqkv, h3), wantBias ? dbias.at(q.index) : nullptr, biasHeads);
            if (cos.numel() > 0 && cosK.numel() > 0) {
                k::ropeBackward(q.at(dqkv, h3), h3, q.items, static_cast<int>(s.t), s.heads, s.d,
                                f(cos), f(sin));
                k::ropeBackward(q.at(dqkv, h3) + h, h3, q.items, static_cast<int>(s.t), s.heads,
                                s.d, f(cosK), f(sinK));
            } else if (cos.numel() > 0) {
                k::ropeBackward(q.at(dqkv, h3), h3, q.items, static_cast<int>(s.t), 2 * s.heads,
                                s.d, f(cos), f(sin));
            }
            k::gemm(true, false, h3, h, q.rows, 1, q.at(dqkv, h3), h3, q.at(xn1, h), h, 0,
                    dwqkv.at(q.index), h);
            k::gemm(false, false, q.rows, h, h3, 1, q.at(dqkv, h3), h3, f(wqkv), h, 0,
                    q.at(dxn1, h), h);
            k::rmsNormBackward(q.at(x, h), f(g1), q.at(rstd1, 1), q.at(dxn1, h), q.at(dx, h),
                               dg1.at(q.index), q.rows, h);
        });

        auto split = dwqkv.total().split(s.h);
        auto gsplit = dwgu.total().split(s.inter);
        return {dx.view({s.b, s.t, s.h}),
                dg1.total(),
                split[0],
                split[1],
                split[2],
                dwo.total(),
                dg2.total(),
                gsplit[0],
                gsplit[1],
                dwdown.total(),
                torch::Tensor(),
                torch::Tensor(),
                torch::Tensor(),
                torch::Tensor(),
                wantBias ? dbias.total() : torch::Tensor(),
                torch::Tensor(),
                torch::Tensor(),
                torch::Tensor(),
                torch::Tensor()};
    }
};

}  // namespace

bool fusedApplies(const KernelPolicy& policy, const torch::Tensor& x)
{
    return policy.path == LayerPath::Fused && torch::GradMode::is_enabled() &&
           x.device().is_cpu() && x.scalar_type() == torch::kFloat32 && x.dim() == 3;
}

torch::Tensor fusedLlamaLayer(const torch::Tensor& x, const FusedLayerParams& p,
                              const torch::Tensor& cos, const torch::Tensor& sin,
                              const torch::Tensor& cosK, const torch::Tensor& sinK,
                              const torch::Tensor& bias, const kernels::KernelContext& context)
{
    // Custom functions need defined inputs: an empty tensor stands for "none".
    auto orNone = [](const torch::Tensor& t) { return t.defined() ? t : torch::empty({0}); };
    return FusedLayer::apply(x, p.inputNorm, p.q, p.k, p.v, p.o, p.postNorm, p.gate, p.up, p.down,
                             orNone(cos), orNone(sin), orNone(cosK), orNone(sinK), orNone(bias),
                             static_cast<std::int64_t>(p.heads), p.eps,
                             static_cast<std::int64_t>(p.evenRowsOut ? 2 : 1), &context);
}

}  // namespace lengen::engine::model
