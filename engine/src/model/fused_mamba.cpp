// The Mamba block as one autograd node (fused_layer.h): RMSNorm, in_proj, the depthwise causal
// convolution and SiLU, x_proj, dt_proj and softplus, the selective scan (cpu_scan.h), the SiLU
// gate and out_proj, forward and backward over raw buffers, one part of the batch per kernel
// thread (fused_common.h). The module path (mamba.cpp) builds ~25 graph nodes per block, with a
// transpose and copy around the convolution; here the scan reads B and C straight from the
// x_proj output and writes their gradients straight into its gradient.
//
// Shapes, per token row (M = B*T rows): x [M, H]; xz [M, 2E] = [conv input | gate input z];
// cv, v, dtLin, delta, ys, gated [M, E]; proj [M, P] = [dt (R) | B (N) | C (N)], P = R + 2N.

#include <cstring>

#include "model/cpu_kernels.h"
#include "model/cpu_mamba.h"
#include "model/cpu_scan.h"
#include "model/fused_common.h"
#include "model/fused_layer.h"

namespace lengen::engine::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;
namespace k = kernels;

using fused::floatsOf;

struct Sizes {
    std::int64_t b = 0, t = 0, m = 0;
    int h = 0, e = 0, n = 0, r = 0, p = 0, taps = 0;

    static Sizes of(const torch::Tensor& x, const torch::Tensor& aLog, const torch::Tensor& dtW,
                    const torch::Tensor& convW)
    {
        Sizes s;
        s.b = x.size(0);
        s.t = x.size(1);
        s.m = s.b * s.t;
        s.h = static_cast<int>(x.size(2));
        s.e = static_cast<int>(aLog.size(0));
        s.n = static_cast<int>(aLog.size(1));
        s.r = static_cast<int>(dtW.size(1));
        s.p = s.r + 2 * s.n;
        s.taps = static_cast<int>(convW.size(2));
        return s;
    }
    k::ConvShape conv(std::int64_t items) const { return {items, static_cast<int>(t), e, taps}; }
    k::ScanShape scan(std::int64_t items) const { return {items, static_cast<int>(t), e, n, p}; }
};

class FusedMamba : public torch::autograd::Function<FusedMamba> {
public:
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                                 const torch::Tensor& g, const torch::Tensor& win,
                                 const torch::Tensor& convW, const torch::Tensor& convB,
                                 const torch::Tensor& wx, const torch::Tensor& wdt,
                                 const torch::Tensor& bdt, const torch::Tensor& aLog,
                                 const torch::Tensor& d, const torch::Tensor& wout, double eps,
                                 const kernels::KernelContext* context)
    {
        const Sizes s = Sizes::of(x, aLog, wdt, convW);
        const auto opt = x.options();
        auto xc = x.contiguous();
        auto a = -torch::exp(aLog);    // [E, N]
        auto cw = convW.contiguous();  // [E, 1, K]
        // Every buffer holds all rows; each part of the batch fills its own rows.
        auto xn = torch::empty({s.m, s.h}, opt), rstd = torch::empty({s.m}, opt);
        auto xz = torch::empty({s.m, 2 * s.e}, opt);
        auto cv = torch::empty({s.m, s.e}, opt), v = torch::empty({s.m, s.e}, opt);
        auto proj = torch::empty({s.m, s.p}, opt);
        auto dtLin = torch::empty({s.m, s.e}, opt), delta = torch::empty({s.m, s.e}, opt);
        auto ys = torch::empty({s.m, s.e}, opt), gated = torch::empty({s.m, s.e}, opt);
        auto y = torch::empty({s.m, s.h}, opt);
        const int h = s.h, e = s.e, e2 = 2 * s.e, p = s.p;
        fused::BatchParts::of(*context, s.b, s.t).run([&](const fused::BatchPart& q) {
            k::rmsNormForward(q.at(xc, h), floatsOf(g), q.at(xn, h), q.at(rstd, 1), q.rows, h,
                              static_cast<float>(eps));
            k::gemm(false, true, q.rows, e2, h, 1, q.at(xn, h), h, floatsOf(win), h, 0,
                    q.at(xz, e2), e2);
            k::convSiluForward(s.conv(q.items), q.at(xz, e2), e2, floatsOf(cw), floatsOf(convB),
                               q.at(cv, e), q.at(v, e));
            k::gemm(false, true, q.rows, p, e, 1, q.at(v, e), e, floatsOf(wx), e, 0, q.at(proj, p),
                    p);
            k::fillRows(q.at(dtLin, e), floatsOf(bdt), q.rows, e);
            k::gemm(false, true, q.rows, e, s.r, 1, q.at(proj, p), p, floatsOf(wdt), s.r, 1,
                    q.at(dtLin, e), e);
            k::softplusForward(q.at(dtLin, e), q.at(delta, e), std::int64_t{q.rows} * e);
            const float* bc = q.at(proj, p) + s.r;
            k::scanForward(s.scan(q.items),
                           {q.at(v, e), q.at(delta, e), floatsOf(a), bc, bc + s.n, floatsOf(d)},
                           q.at(ys, e));
            k::gateForward(q.at(ys, e), q.at(xz, e2) + e, e2, q.at(gated, e), q.rows, e);
            std::memcpy(q.at(y, h), q.at(xc, h), sizeof(float) * q.rows * h);
            k::gemm(false, true, q.rows, h, e, 1, q.at(gated, e), e, floatsOf(wout), e, 1,
                    q.at(y, h), h);
        });
        ctx->save_for_backward({xc, g, win, cw, wx, wdt, a, d, wout, xn, rstd, xz, cv, v, proj,
                                dtLin, delta, ys, gated});
        fused::keepContext(ctx, *context);
        return y.view({s.b, s.t, s.h});
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list grads)
    {
        const auto sv = ctx->get_saved_variables();
        const auto &x = sv[0], &g = sv[1], &win = sv[2], &cw = sv[3], &wx = sv[4], &wdt = sv[5],
                   &a = sv[6], &d = sv[7], &wout = sv[8], &xn = sv[9], &rstd = sv[10], &xz = sv[11],
                   &cv = sv[12], &v = sv[13], &proj = sv[14], &dtLin = sv[15], &delta = sv[16],
                   &ys = sv[17], &gated = sv[18];
        const Sizes s = Sizes::of(x, a, wdt, cw);
        const auto opt = x.options();
        auto dy = grads[0].contiguous();

        // Row buffers (each part fills its rows) and per-part sums of the parameter gradients.
        auto dgated = torch::empty({s.m, s.e}, opt), dys = torch::empty({s.m, s.e}, opt);
        auto dxz = torch::empty({s.m, 2 * s.e}, opt), dv = torch::empty({s.m, s.e}, opt);
        auto ddt = torch::empty({s.m, s.e}, opt), dproj = torch::empty({s.m, s.p}, opt);
        auto dxn = torch::empty({s.m, s.h}, opt), dx = torch::empty({s.m, s.h}, opt);
        const auto parts = fused::BatchParts::of(fused::keptContext(ctx), s.b, s.t);
        const int np = parts.count;
        using fused::PartSums;
        PartSums dwout(np, {s.h, s.e}, opt, false), da(np, {s.e, s.n}, opt, true),
            dd(np, {s.e}, opt, true), dwdt(np, {s.e, s.r}, opt, false), dbdt(np, {s.e}, opt, true),
            dwx(np, {s.p, s.e}, opt, false), dcw(np, {s.e, 1, s.taps}, opt, true),
            dcb(np, {s.e}, opt, true), dwin(np, {2 * s.e, s.h}, opt, false),
            dg(np, {s.h}, opt, true);
        const int h = s.h, e = s.e, e2 = 2 * s.e, p = s.p;
        parts.run([&](const fused::BatchPart& q) {
            // out_proj and the gate: y = x + (ys * silu(z)) Wout^T.
            k::gemm(true, false, h, e, q.rows, 1, q.at(dy, h), h, q.at(gated, e), e, 0,
                    dwout.at(q.index), e);
            k::gemm(false, false, q.rows, e, h, 1, q.at(dy, h), h, floatsOf(wout), e, 0,
                    q.at(dgated, e), e);
            k::gateBackward(q.at(ys, e), q.at(xz, e2) + e, e2, q.at(dgated, e), q.at(dys, e),
                            q.at(dxz, e2) + e, e2, q.rows, e);

            // The scan: dB and dC land in their columns of dproj.
            const float* bc = q.at(proj, p) + s.r;
            float* dbc = q.at(dproj, p) + s.r;
            k::scanBackward(
                s.scan(q.items),
                {q.at(v, e), q.at(delta, e), floatsOf(a), bc, bc + s.n, floatsOf(d)}, q.at(dys, e),
                {q.at(dv, e), q.at(ddt, e), da.at(q.index), dbc, dbc + s.n, dd.at(q.index)});

            // dt_proj and softplus: delta = softplus(dt Wdt^T + bdt).
            k::softplusBackward(q.at(dtLin, e), q.at(ddt, e), q.at(ddt, e),
                                std::int64_t{q.rows} * e);
            k::gemm(true, false, e, s.r, q.rows, 1, q.at(ddt, e), e, q.at(proj, p), p, 0,
                    dwdt.at(q.index), s.r);
            k::addColumnSums(q.at(ddt, e), dbdt.at(q.index), q.rows, e);
            k::gemm(false, false, q.rows, s.r, e, 1, q.at(ddt, e), e, floatsOf(wdt), s.r, 0,
                    q.at(dproj, p), p);

            // x_proj: proj = v Wx^T; v also feeds the scan (dv so far).
            k::gemm(true, false, p, e, q.rows, 1, q.at(dproj, p), p, q.at(v, e), e, 0,
                    dwx.at(q.index), e);
            k::gemm(false, false, q.rows, e, p, 1, q.at(dproj, p), p, floatsOf(wx), e, 1,
                    q.at(dv, e), e);

            // Convolution and SiLU, then in_proj and the norm.
            k::convSiluBackward(s.conv(q.items), q.at(xz, e2), e2, floatsOf(cw), q.at(cv, e),
                                q.at(dv, e), q.at(dxz, e2), e2, dcw.at(q.index), dcb.at(q.index));
            k::gemm(true, false, e2, h, q.rows, 1, q.at(dxz, e2), e2, q.at(xn, h), h, 0,
                    dwin.at(q.index), h);
            k::gemm(false, false, q.rows, h, e2, 1, q.at(dxz, e2), e2, floatsOf(win), h, 0,
                    q.at(dxn, h), h);
            std::memcpy(q.at(dx, h), q.at(dy, h), sizeof(float) * q.rows * h);
            k::rmsNormBackward(q.at(x, h), floatsOf(g), q.at(rstd, 1), q.at(dxn, h), q.at(dx, h),
                               dg.at(q.index), q.rows, h);
        });
        // A = -exp(A_log): dL/dA_log = dL/dA * A.
        return {dx.view({s.b, s.t, s.h}),
                dg.total(),
                dwin.total(),
                dcw.total(),
                dcb.total(),
                dwx.total(),
                dwdt.total(),
                dbdt.total(),
                da.total() * a,
                dd.total(),
                dwout.total(),
                torch::Tensor(),
                torch::Tensor()};
    }
};

}  // namespace

torch::Tensor fusedMambaBlock(const torch::Tensor& x, const FusedMambaParams& p,
                              const kernels::KernelContext& context)
{
    return FusedMamba::apply(x, p.norm, p.inProj, p.convWeight, p.convBias, p.xProj, p.dtWeight,
                             p.dtBias, p.aLog, p.d, p.outProj, p.eps, &context);
}

}  // namespace lengen::engine::model
