#include "device/device_check.h"

#include <torch/torch.h>

#include <chrono>

#include "device/device_fused.h"
#include "device/device_kernels.h"
#include "model/attention_detail.h"

namespace lengen::engine::device {

namespace {

double relative(const torch::Tensor& got, const torch::Tensor& want)
{
    const auto g = got.to(torch::kFloat32), w = want.to(torch::kFloat32);
    return ((g - w).abs().max() / w.abs().max().clamp_min(1e-30)).item<double>();
}

// Milliseconds per call of fn (forward and backward), after two warm-up calls.
template <typename Fn>
double timed(int reps, Fn&& fn)
{
    if (reps <= 0)
        return 0;
    fn();
    fn();
    torch::cuda::synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i)
        fn();
    torch::cuda::synchronize();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
               .count() /
           reps;
}

// Leaves that a backward fills: `t` in `type`, requiring gradients.
torch::Tensor leaf(const torch::Tensor& t, torch::ScalarType type)
{
    return t.to(type).detach().requires_grad_(true);
}

KernelCheck checkNorm(long rows, int h, torch::ScalarType type, int reps)
{
    const auto cuda = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat32);
    torch::manual_seed(3);
    const auto a0 = torch::randn({rows, h}, cuda), b0 = torch::randn({rows, h}, cuda);
    const auto w0 = torch::rand({h}, cuda) + 0.5, dy = torch::randn({rows, h}, cuda);
    const auto dsum = torch::randn({rows, h}, cuda);
    const double eps = 1e-6;
    KernelCheck c{"add_rms_norm", type == torch::kBFloat16 ? "bfloat16" : "float32"};
    // The fused kernels on inputs in `type`; the written-out ops in float32 on the same values.
    auto a = leaf(a0, type), b = leaf(b0, type), w = leaf(w0, torch::kFloat32);
    auto [s, y] = addRmsNorm(a, b, w, eps);
    torch::autograd::backward({s, y}, {dsum.to(type), dy.to(type)});
    auto ra = leaf(a.detach(), torch::kFloat32), rb = leaf(b.detach(), torch::kFloat32);
    auto rw = leaf(w0, torch::kFloat32);
    const auto rs = ra + rb;
    const auto ry = rs * torch::rsqrt(rs.square().mean(-1, true) + eps) * rw;
    torch::autograd::backward({rs, ry},
                              {dsum.to(type).to(torch::kFloat32), dy.to(type).to(torch::kFloat32)});
    c.forward = std::max(relative(s, rs), relative(y, ry));
    c.backward = std::max({relative(a.grad(), ra.grad()), relative(b.grad(), rb.grad()),
                           relative(w.grad(), rw.grad())});
    const auto da = dy.to(type), ds = dsum.to(type);
    c.fusedMs = timed(reps, [&] {
        auto [s2, y2] = addRmsNorm(a, b, w, eps);
        torch::autograd::backward({s2, y2}, {ds, da});
    });
    c.opsMs = timed(reps, [&] {  // the layer's ops as they run without the kernels
        const auto s2 = a + b;
        const auto y2 =
            s2 * torch::rsqrt(s2.to(torch::kFloat32).square().mean(-1, true) + eps).to(type) *
            w.to(type);
        torch::autograd::backward({s2, y2}, {ds, da});
    });
    return c;
}

KernelCheck checkSwiglu(long rows, int inter, torch::ScalarType type, int reps)
{
    const auto cuda = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat32);
    torch::manual_seed(4);
    const auto g0 = torch::randn({rows, inter}, cuda) * 4, u0 = torch::randn({rows, inter}, cuda);
    const auto d0 = torch::randn({rows, inter}, cuda);
    KernelCheck c{"swiglu", type == torch::kBFloat16 ? "bfloat16" : "float32"};
    auto g = leaf(g0, type), u = leaf(u0, type);
    auto o = swiglu(g, u);
    o.backward(d0.to(type));
    auto rg = leaf(g.detach(), torch::kFloat32), ru = leaf(u.detach(), torch::kFloat32);
    auto ro = torch::silu(rg) * ru;
    ro.backward(d0.to(type).to(torch::kFloat32));
    c.forward = relative(o, ro);
    c.backward = std::max(relative(g.grad(), rg.grad()), relative(u.grad(), ru.grad()));
    const auto d = d0.to(type);
    c.fusedMs = timed(reps, [&] { swiglu(g, u).backward(d); });
    c.opsMs = timed(reps, [&] { (torch::silu(g) * u).backward(d); });
    return c;
}

// Rotary of q and k: `rows` = B * T tokens (B = 64 when it divides them) of `hidden` = heads *
// d, d = 64 (the standard config's). q and k are strided views (slices of one [B, T, 2, H]
// tensor, as a fused projection would give); the ops are the op path's applyRotary in float32
// on the [B, heads, T, d] views.
KernelCheck checkRotary(long rows, int hidden, torch::ScalarType type, int reps)
{
    const auto cuda = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat32);
    torch::manual_seed(5);
    const int d = hidden % 64 == 0 ? 64 : hidden, heads = hidden / d;
    const long b = rows % 64 == 0 ? 64 : 1, t = rows / b;
    const auto pos = torch::arange(t, cuda).unsqueeze(1);                      // [T, 1]
    const auto freq = torch::pow(10000.0, -torch::arange(0, d, 2, cuda) / d);  // [d/2]
    const auto angles = torch::cat({pos * freq, pos * freq}, 1);               // [T, d]
    const auto cos = angles.cos(), sin = angles.sin();
    const auto both = torch::randn({b, t, 2, hidden}, cuda);
    const auto dq = torch::randn({b, t, heads, d}, cuda), dk = torch::randn({b, t, heads, d}, cuda);
    KernelCheck c{"rotary", type == torch::kBFloat16 ? "bfloat16" : "float32"};
    auto qk = leaf(both, type);
    auto q = qk.select(2, 0).view({b, t, heads, d}), k = qk.select(2, 1).view({b, t, heads, d});
    auto [qr, kr] = rotaryPair(q, k, cos, sin);
    torch::autograd::backward({qr, kr}, {dq.to(type), dk.to(type)});
    auto rqk = leaf(qk.detach(), torch::kFloat32);
    auto rq = rqk.select(2, 0).view({b, t, heads, d}), rk = rqk.select(2, 1).view({b, t, heads, d});
    const auto rqr = model::detail::applyRotary(rq.transpose(1, 2), cos, sin).transpose(1, 2);
    const auto rkr = model::detail::applyRotary(rk.transpose(1, 2), cos, sin).transpose(1, 2);
    torch::autograd::backward({rqr, rkr},
                              {dq.to(type).to(torch::kFloat32), dk.to(type).to(torch::kFloat32)});
    c.forward = std::max(relative(qr, rqr), relative(kr, rkr));
    c.backward = relative(qk.grad(), rqk.grad());
    const auto gq = dq.to(type), gk = dk.to(type);
    c.fusedMs = timed(reps, [&] {
        auto [q2, k2] = rotaryPair(q, k, cos, sin);
        torch::autograd::backward({q2, k2}, {gq, gk});
    });
    const auto ct = cos.to(type), st = sin.to(type);
    c.opsMs = timed(reps, [&] {  // the op path as the attention runs it on a GPU
        const auto q2 = model::detail::applyRotary(q.transpose(1, 2), ct, st);
        const auto k2 = model::detail::applyRotary(k.transpose(1, 2), ct, st);
        torch::autograd::backward({q2, k2}, {gq.transpose(1, 2), gk.transpose(1, 2)});
    });
    return c;
}

}  // namespace

std::vector<KernelCheck> checkDeviceKernels(long rows, int hidden, int intermediate, int reps)
{
    if (!torch::cuda::is_available() || !kernelsBuilt())
        return {};
    std::vector<KernelCheck> out;
    for (auto type : {torch::kFloat32, torch::kBFloat16}) {
        out.push_back(checkNorm(rows, hidden, type, reps));
        out.push_back(checkSwiglu(rows, intermediate, type, reps));
        out.push_back(checkRotary(rows, hidden, type, reps));
    }
    return out;
}

}  // namespace lengen::engine::device
