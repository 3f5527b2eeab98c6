#include "model/parallel_scan.h"

#include <algorithm>

namespace lengen::engine::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// Hillis-Steele doubling along `dim`, in new tensors (each pass reads the previous one): after
// it, b[t] is the recurrence run from the dim's start and, when `products`, a[t] = a[0] ... a[t].
// Pass k: b[t] += a[t] * b[t - k] and a[t] *= a[t - k] for t >= k; the first k stay. Reversed,
// the recurrence runs from the dim's end: b[t] += a[t] * b[t + k] for t < n - k.
void doubling(torch::Tensor& a, torch::Tensor& b, std::int64_t dim, bool products, bool reverse)
{
    const auto n = a.size(dim);
    for (std::int64_t k = 1; k < n; k *= 2) {
        const auto tail = n - k;
        const auto to = reverse ? 0 : k, from = reverse ? k : 0, kept = reverse ? tail : 0;
        auto nb = torch::empty_like(b);
        nb.narrow(dim, kept, k).copy_(b.narrow(dim, kept, k));
        auto out = nb.narrow(dim, to, tail);
        torch::addcmul_out(out, b.narrow(dim, to, tail), a.narrow(dim, to, tail),
                           b.narrow(dim, from, tail));
        if (products || 2 * k < n) {  // the last pass's products only serve the caller
            auto na = torch::empty_like(a);
            na.narrow(dim, kept, k).copy_(a.narrow(dim, kept, k));
            auto outA = na.narrow(dim, to, tail);
            torch::mul_out(outA, a.narrow(dim, to, tail), a.narrow(dim, from, tail));
            a = na;
        }
        b = nb;
    }
}

// The recurrence without autograd, from the start (or, `reverse`, from the end: h_t = a_t h_{t+1}
// + b_t). a, b: [B, T, ...] -> h of that shape.
torch::Tensor recurrence(torch::Tensor a, torch::Tensor b, std::int64_t chunk, bool reverse)
{
    const auto sizes = a.sizes().vec();
    const auto batch = a.size(0), t = a.size(1);
    a = a.reshape({batch, t, -1});  // [B, T, F]
    b = b.reshape({batch, t, -1});
    const auto f = a.size(2);
    const std::int64_t q = std::clamp<std::int64_t>(chunk, 1, std::max<std::int64_t>(t, 1));
    const auto chunks = (t + q - 1) / q;
    if (const auto pad = chunks * q - t; pad > 0) {
        // Identity steps after the end (a = 1, b = 0) change nothing before them, and reversed
        // they start from the zero state.
        a = torch::cat({a, torch::ones({batch, pad, f}, a.options())}, 1);
        b = torch::cat({b, torch::zeros({batch, pad, f}, b.options())}, 1);
    }
    auto a4 = a.reshape({batch, chunks, q, f});  // [B, C, Q, F]
    auto b4 = b.reshape({batch, chunks, q, f});
    a = b = torch::Tensor();  // the padded copies go with the first pass (evaluation's memory)
    doubling(a4, b4, 2, chunks > 1, reverse);  // b4: each chunk's states from a zero start
    if (chunks > 1) {
        // The chunks' last states [B, C, F] carried across chunks: end[c] = P[c] end[c-1] +
        // local[c] (reversed: from chunk c + 1).
        const auto last = reverse ? 0 : q - 1;
        auto decay = a4.select(2, last).contiguous();
        auto end = b4.select(2, last).contiguous();
        doubling(decay, end, 1, false, reverse);
        auto start = torch::zeros_like(end);  // the state each chunk starts from
        start.narrow(1, reverse ? 0 : 1, chunks - 1)
            .copy_(end.narrow(1, reverse ? 1 : 0, chunks - 1));
        b4 = torch::addcmul(b4, a4, start.unsqueeze(2));  // h = local + P_within * start
    }
    return b4.reshape({batch, chunks * q, f}).narrow(1, 0, t).reshape(sizes);
}

// The adjoint of h = recurrence(a, b): with lambda_t = dL/dh_t in full (through every later
// state), lambda_t = g_t + a_{t+1} lambda_{t+1}, the recurrence run from the end with `a` shifted
// one step. Then dL/db_t = lambda_t and dL/da_t = lambda_t h_{t-1}. a, h, g: [B, T, ...].
struct Adjoint {
    torch::Tensor da, db;
};
Adjoint adjoint(const torch::Tensor& a, const torch::Tensor& h, torch::Tensor g, std::int64_t chunk)
{
    const auto t = a.size(1);
    auto aNext = torch::zeros_like(a);  // a_{t+1}; the last is never read (lambda_T = 0)
    aNext.narrow(1, 0, t - 1).copy_(a.narrow(1, 1, t - 1));
    auto lambda = recurrence(std::move(aNext), std::move(g), chunk, true);
    auto hPrev = torch::zeros_like(h);  // h_{t-1}, h_{-1} = 0
    hPrev.narrow(1, 1, t - 1).copy_(h.narrow(1, 0, t - 1));
    auto da = lambda * hPrev;
    return {std::move(da), std::move(lambda)};
}

class LinearScanFunction : public torch::autograd::Function<LinearScanFunction> {
public:
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& a,
                                 const torch::Tensor& b, std::int64_t chunk)
    {
        auto h = recurrence(a, b, chunk, false);
        ctx->save_for_backward({a, h});
        ctx->saved_data["chunk"] = chunk;
        return h;
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list grads)
    {
        if (!grads[0].defined())
            return {torch::Tensor(), torch::Tensor(), torch::Tensor()};
        const auto saved = ctx->get_saved_variables();
        auto [da, db] = adjoint(saved[0], saved[1], grads[0], ctx->saved_data["chunk"].toInt());
        return {da, db, torch::Tensor()};
    }
};

// The selective scan with its state history recomputed in the backward: autograd keeps the
// inputs ([B, T, E] and [B, T, N]), never decay or h ([B, T, E, N], N = 16 times larger). With
// autograd keeping both, the standard Mamba (32 layers, batch 64) held 2 x 32 x 0.43 GB at
// N = 101 and ran out of an H100's 80 GB; at N = 201 it would need 55 GB for these alone.
class ParallelSelectiveScan : public torch::autograd::Function<ParallelSelectiveScan> {
public:
    struct States {
        torch::Tensor decay, h;  // [B, T, E, N]
    };
    // decay = exp(delta A), h_t = decay_t h_{t-1} + delta_t v_t B_t.
    static States states(const torch::Tensor& v, const torch::Tensor& delta, const torch::Tensor& A,
                         const torch::Tensor& Bm, std::int64_t chunk)
    {
        auto decay = torch::exp(delta.unsqueeze(-1) * A);          // [B, T, E, N]
        auto input = (delta * v).unsqueeze(-1) * Bm.unsqueeze(2);  // [B, T, E, N]
        auto h = recurrence(decay, std::move(input), chunk, false);
        return {std::move(decay), std::move(h)};
    }

    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& v,
                                 const torch::Tensor& delta, const torch::Tensor& A,
                                 const torch::Tensor& Bm, const torch::Tensor& Cm,
                                 const torch::Tensor& D, std::int64_t chunk)
    {
        ctx->save_for_backward({v, delta, A, Bm, Cm, D});
        ctx->saved_data["chunk"] = chunk;
        const auto h = states(v, delta, A, Bm, chunk).h;
        // Elementwise and a sum rather than a matmul, so bf16 autocast leaves it in float32.
        return (h * Cm.unsqueeze(2)).sum(-1) + D * v;  // [B, T, E]
    }

    // With g = dL/dy [B, T, E]: dL/dh = g C, then the linear scan's adjoint gives
    // lambda = dL/d(input) and dL/d(decay) = lambda h_{t-1}; the chain rule through exp(delta A)
    // and (delta v) B gives the rest.
    static tensor_list backward(AutogradContext* ctx, tensor_list grads)
    {
        const auto saved = ctx->get_saved_variables();
        const auto &v = saved[0], &delta = saved[1], &A = saved[2], &Bm = saved[3], &Cm = saved[4],
                   &D = saved[5];
        const auto& g = grads[0];  // [B, T, E]
        if (!g.defined())
            return tensor_list(7);
        const auto chunk = ctx->saved_data["chunk"].toInt();
        auto [decay, h] = states(v, delta, A, Bm, chunk);
        auto dC = (g.unsqueeze(-1) * h).sum(2);  // [B, T, N]
        auto [dDecay, lambda] = adjoint(decay, h, g.unsqueeze(-1) * Cm.unsqueeze(2), chunk);
        h = torch::Tensor();
        // d/d(delta A) of exp(delta A) is the decay itself: [B, T, E, N].
        auto dArg = dDecay * decay;
        dDecay = decay = torch::Tensor();
        auto dDelta = (dArg * A).sum(-1);                                      // [B, T, E]
        auto dA = (dArg * delta.unsqueeze(-1)).sum(torch::IntArrayRef{0, 1});  // [E, N]
        auto dInput = (lambda * Bm.unsqueeze(2)).sum(-1);       // d(delta v): [B, T, E]
        auto dB = (lambda * (delta * v).unsqueeze(-1)).sum(2);  // [B, T, N]
        dDelta = dDelta + dInput * v;
        auto dV = dInput * delta + g * D;
        auto dD = (g * v).sum(torch::IntArrayRef{0, 1});  // [E]
        auto like = [](const torch::Tensor& grad, const torch::Tensor& x) {
            return grad.to(x.scalar_type());
        };
        return {like(dV, v),  like(dDelta, delta), like(dA, A),    like(dB, Bm),
                like(dC, Cm), like(dD, D),         torch::Tensor()};
    }
};

}  // namespace

torch::Tensor linearScan(const torch::Tensor& a, const torch::Tensor& b, std::int64_t chunk)
{
    TORCH_CHECK(a.sizes() == b.sizes() && a.dim() >= 2 && a.scalar_type() == b.scalar_type(),
                "linearScan: a and b of one shape [B, T, ...] and one type");
    if (a.size(1) == 0)
        return torch::zeros_like(b);
    return LinearScanFunction::apply(a, b, chunk);
}

torch::Tensor selectiveScanParallel(const torch::Tensor& v, const torch::Tensor& delta,
                                    const torch::Tensor& A, const torch::Tensor& Bm,
                                    const torch::Tensor& Cm, const torch::Tensor& D,
                                    std::int64_t chunk)
{
    return ParallelSelectiveScan::apply(v, delta, A, Bm, Cm, D, chunk);
}

}  // namespace lengen::engine::model
