#include "model/fused_layer.h"

#include <cstring>

#include "model/cpu_kernels.h"
#include "model/fused_common.h"

namespace lengen::engine::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;
namespace k = kernels;

using fused::floatsOf;

constexpr int kWeights = 9;  // per layer: input norm, q, k, v, o, post norm, gate, up, down
constexpr int kTables = 5;   // per layer: cos, sin, cosK, sinK, bias (each possibly empty: none)
constexpr int kOptions = 5;  // then heads, eps, the last layer's step, the context, the scratch

// The stack's shape (fused_common.h's token shape), the MLP width I and the depth L. gu rows
// hold [gate | up], each I wide. step: 1, or 2 where only rows 0, 2, 4, ... of the output are
// wanted (training's read-out takes the x tokens: LlamaImpl::forwardEvenRows); then the last
// layer keeps mc = m / 2 rows from its attention's output on.
struct Dims : fused::TokenShape {
    int inter = 0, layers = 0, step = 1;
    std::int64_t mc = 0, probs = 0;  // the last layer's kept rows; probabilities per item

    int stepOf(int l) const { return l + 1 == layers ? step : 1; }
    std::int64_t keptOf(int l) const { return l + 1 == layers ? mc : m; }
};

Dims dims(const torch::Tensor& x, std::int64_t inter, std::int64_t heads, std::int64_t layers,
          std::int64_t step)
{
    Dims s;
    static_cast<fused::TokenShape&>(s) = fused::TokenShape::of(x, heads);
    s.inter = static_cast<int>(inter);
    s.layers = static_cast<int>(layers);
    s.step = static_cast<int>(step);
    s.mc = s.m / step;
    s.probs = s.heads * k::attentionProbsPerItem(static_cast<int>(s.t));
    return s;
}

// Offsets in floats of the buffers carved from one tensor, each rounded up to 16 floats so
// that every buffer starts on a 64-byte line (one AVX-512 register).
struct Carver {
    std::int64_t size = 0;
    std::int64_t take(std::int64_t n)
    {
        const auto at = size;
        size += (n + 15) / 16 * 16;
        return at;
    }
};

// One layer's offsets in the three buffers of a call. Weights: copies of its own, [q|k|v] and
// [gate|up] as one matrix each. Rows: what its backward needs, every part's rows (x2 on: its
// kept rows only; y, the next layer's input, absent from the last layer, whose y is the node's
// output). Grads: one part's sums of its weight gradients (bias: [biasHeads, T, T] or none).
struct LayerAt {
    std::int64_t g1, wqkv, wo, g2, wgu, wdown;
    std::int64_t xn1, rstd1, qkv, probs, attn, x2, xn2, rstd2, gu, act, y;
    std::int64_t dqkv, dwo, dg1, dg2, dgu, ddown, dbias, nbias;

    // Layer l's offsets taken from the weights (w), rows (r) and grads (g) buffers, in the
    // order the members above are listed: one take per piece.
    static LayerAt carve(const Dims& s, int l, std::int64_t nbias, Carver& w, Carver& r, Carver& g)
    {
        const std::int64_t h = s.h, in = s.inter, mc = s.keptOf(l);
        LayerAt a{};
        a.g1 = w.take(h);
        a.wqkv = w.take(3 * h * h);
        a.wo = w.take(h * h);
        a.g2 = w.take(h);
        a.wgu = w.take(2 * in * h);
        a.wdown = w.take(h * in);

        a.xn1 = r.take(s.m * h);
        a.rstd1 = r.take(s.m);
        a.qkv = r.take(s.m * 3 * h);
        a.probs = r.take(s.b * s.probs);
        a.attn = r.take(s.m * h);
        a.x2 = r.take(mc * h);  // from x2 on, the kept rows only
        a.xn2 = r.take(mc * h);
        a.rstd2 = r.take(mc);
        a.gu = r.take(mc * 2 * in);
        a.act = r.take(mc * in);
        a.y = l + 1 < s.layers ? r.take(s.m * h) : -1;  // the last layer's y is the output

        a.dqkv = g.take(3 * h * h);
        a.dwo = g.take(h * h);
        a.dg1 = g.take(h);
        a.dg2 = g.take(h);
        a.dgu = g.take(2 * in * h);
        a.ddown = g.take(h * in);
        a.nbias = nbias;
        a.dbias = g.take(nbias);
        return a;
    }
};

struct Layout {
    std::vector<LayerAt> at;
    std::int64_t weights = 0, rows = 0, grads = 0;  // grads: per part
    std::int64_t back = 0;                          // the backward's scratch
    // The backward's scratch, shared by the layers (each part keeps to its own rows).
    std::int64_t dx2 = 0, dact = 0, dgu = 0, dxn2 = 0, dxn1 = 0, dattn = 0, dqkv = 0;
    std::int64_t dyA = 0, dyB = 0;  // gradients between layers, in turn

    static Layout of(const Dims& s, const std::vector<std::int64_t>& biasFloats)
    {
        Layout o;
        Carver w, r, g, b;
        for (int l = 0; l < s.layers; ++l)
            o.at.push_back(LayerAt::carve(s, l, biasFloats[static_cast<size_t>(l)], w, r, g));
        const std::int64_t rowsH = s.m * s.h;
        o.dx2 = b.take(rowsH);
        o.dact = b.take(s.m * s.inter);
        o.dgu = b.take(s.m * 2 * s.inter);
        o.dxn2 = b.take(rowsH);
        o.dxn1 = b.take(rowsH);
        o.dattn = b.take(rowsH);
        o.dqkv = b.take(3 * rowsH);
        o.dyA = b.take(rowsH);
        o.dyB = b.take(rowsH);
        o.weights = w.size;
        o.rows = r.size;
        o.grads = g.size;
        o.back = b.size;
        return o;
    }
};

// Where one layer's pieces lie in a call: its weights, its tables (null: none), its saved rows.
struct Layer {
    int step = 1;
    const float *g1, *wqkv, *wo, *g2, *wgu, *wdown;
    const float *cos = nullptr, *sin = nullptr, *cosK = nullptr, *sinK = nullptr;
    const float* bias = nullptr;
    std::int64_t biasHeads = 0;
    float *xn1, *rstd1, *qkv, *probs, *attn, *x2, *xn2, *rstd2, *gu, *act;

    Layer(const LayerAt& a, float* w, float* r, const tensor_list& tables, int l, int step_)
        : step(step_), g1(w + a.g1), wqkv(w + a.wqkv), wo(w + a.wo), g2(w + a.g2), wgu(w + a.wgu),
          wdown(w + a.wdown), xn1(r + a.xn1), rstd1(r + a.rstd1), qkv(r + a.qkv),
          probs(r + a.probs), attn(r + a.attn), x2(r + a.x2), xn2(r + a.xn2), rstd2(r + a.rstd2),
          gu(r + a.gu), act(r + a.act)
    {
        const auto table = [&](int i) {
            const auto& t = tables[static_cast<size_t>(l * kTables + i)];
            return t.numel() > 0 ? floatsOf(t) : nullptr;
        };
        cos = table(0), sin = table(1), cosK = table(2), sinK = table(3), bias = table(4);
        biasHeads = bias ? tables[static_cast<size_t>(l * kTables + 4)].size(0) : 0;
    }
};

// Layer `L` forward on part q: x (the part's input rows, [rows, H]) -> y (its kept rows).
void forwardPart(const Dims& s, const Layer& L, const fused::BatchPart& q, const float* x, float* y,
                 float eps)
{
    const int h = s.h, h3 = 3 * s.h, in = s.inter, st = L.step, t = static_cast<int>(s.t);
    float* qkv = q.at(L.qkv, h3);
    k::rmsNormForward(x, L.g1, q.at(L.xn1, h), q.at(L.rstd1, 1), q.rows, h, eps);
    k::gemm(false, true, q.rows, h3, h, 1, q.at(L.xn1, h), h, L.wqkv, h, 0, qkv, h3);
    if (L.cos && L.cosK) {  // q's heads, then k's H columns on with their own tables
        k::ropeForward(qkv, h3, q.items, t, s.heads, s.d, L.cos, L.sin);
        k::ropeForward(qkv + h, h3, q.items, t, s.heads, s.d, L.cosK, L.sinK);
    } else if (L.cos) {  // q and k: 2H columns = 2*heads head vectors per row
        k::ropeForward(qkv, h3, q.items, t, 2 * s.heads, s.d, L.cos, L.sin);
    }
    float* attn = q.at(L.attn, h);
    k::attentionForward(s.attention(q.items), qkv, L.bias, L.biasHeads, L.probs + q.first * s.probs,
                        attn);
    // From here on the kept rows only: attn's rows at the step (lda step * h).
    const int rc = q.rows / st;
    float *x2 = q.atKept(L.x2, h, st), *xn2 = q.atKept(L.xn2, h, st);
    float *gu = q.atKept(L.gu, 2 * in, st), *act = q.atKept(L.act, in, st);
    fused::copyRows(x2, h, x, st * h, rc, h);
    k::gemm(false, true, rc, h, h, 1, attn, st * h, L.wo, h, 1, x2, h);
    k::rmsNormForward(x2, L.g2, xn2, q.atKept(L.rstd2, 1, st), rc, h, eps);
    k::gemm(false, true, rc, 2 * in, h, 1, xn2, h, L.wgu, h, 0, gu, 2 * in);
    k::swigluForward(gu, act, rc, in);
    std::memcpy(y, x2, sizeof(float) * rc * h);
    k::gemm(false, true, rc, h, in, 1, act, in, L.wdown, in, 1, y, h);
}

// One part's sums of one layer's weight gradients.
struct Grads {
    float *qkv, *o, *g1, *g2, *gu, *down, *bias;
};

// Layer `L` backward on part q: dy (the part's kept output rows) -> dx (its input rows); x is
// the layer's input. `b`: the backward's scratch, shared by the layers.
void backwardPart(const Dims& s, const Layer& L, const Grads& g, float* b, const Layout& o,
                  const fused::BatchPart& q, const float* x, const float* dy, float* dx)
{
    const int h = s.h, h3 = 3 * s.h, in = s.inter, st = L.step, t = static_cast<int>(s.t);
    // MLP over the kept rows (rc of them): y = x2 + act down^T.
    const int rc = q.rows / st;
    // The scratch's rows are the part's full rows, also for the kept ones: another part may
    // be at another layer (without the step) meanwhile.
    const float* act = q.atKept(L.act, in, st);
    float *dx2 = q.at(b + o.dx2, h), *dact = q.at(b + o.dact, in);
    float *dgu = q.at(b + o.dgu, 2 * in), *dxn2 = q.at(b + o.dxn2, h);
    std::memcpy(dx2, dy, sizeof(float) * rc * h);
    k::gemm(true, false, h, in, rc, 1, dy, h, act, in, 0, g.down, in);
    k::gemm(false, false, rc, in, h, 1, dy, h, L.wdown, in, 0, dact, in);
    k::swigluBackward(q.atKept(L.gu, 2 * in, st), dact, dgu, rc, in);
    k::gemm(true, false, 2 * in, h, rc, 1, dgu, 2 * in, q.atKept(L.xn2, h, st), h, 0, g.gu, h);
    k::gemm(false, false, rc, h, 2 * in, 1, dgu, 2 * in, L.wgu, h, 0, dxn2, h);
    k::rmsNormBackward(q.atKept(L.x2, h, st), L.g2, q.atKept(L.rstd2, 1, st), dxn2, dx2, g.g2, rc,
                       h);

    // Attention: x2 = x + attn o^T on the kept rows; the others get no gradient.
    float *dattn = q.at(b + o.dattn, h), *dqkv = q.at(b + o.dqkv, h3);
    float* dxn1 = q.at(b + o.dxn1, h);
    if (st != 1) {
        std::memset(dx, 0, sizeof(float) * q.rows * h);
        std::memset(dattn, 0, sizeof(float) * q.rows * h);
    }
    fused::copyRows(dx, st * h, dx2, h, rc, h);
    const float* attn = q.at(L.attn, h);
    k::gemm(true, false, h, h, rc, 1, dx2, h, attn, st * h, 0, g.o, h);
    k::gemm(false, false, rc, h, h, 1, dx2, h, L.wo, h, 0, dattn, st * h);
    const float* qkv = q.at(L.qkv, h3);
    k::attentionBackward(s.attention(q.items), qkv, L.probs + q.first * s.probs, dattn, dqkv,
                         g.bias, L.biasHeads);
    if (L.cos && L.cosK) {
        k::ropeBackward(dqkv, h3, q.items, t, s.heads, s.d, L.cos, L.sin);
        k::ropeBackward(dqkv + h, h3, q.items, t, s.heads, s.d, L.cosK, L.sinK);
    } else if (L.cos) {
        k::ropeBackward(dqkv, h3, q.items, t, 2 * s.heads, s.d, L.cos, L.sin);
    }
    k::gemm(true, false, h3, h, q.rows, 1, dqkv, h3, q.at(L.xn1, h), h, 0, g.qkv, h);
    k::gemm(false, false, q.rows, h, h3, 1, dqkv, h3, L.wqkv, h, 0, dxn1, h);
    k::rmsNormBackward(x, L.g1, q.at(L.rstd1, 1), dxn1, dx, g.g1, q.rows, h);
}

// What the forward leaves its backward besides tensors: one typed record, whose keys in the
// autograd context's saved_data are written and read here only (ggml's compute params).
struct StackCall {
    std::int64_t heads = 0, step = 1, inter = 0;
    std::vector<std::int64_t> biasFloats;  // per layer: its bias's gradient, or none (0)

    void saveTo(AutogradContext* ctx) const
    {
        ctx->saved_data["heads"] = heads;
        ctx->saved_data["step"] = step;
        ctx->saved_data["inter"] = inter;
        ctx->saved_data["biasFloats"] = biasFloats;
    }
    static StackCall of(AutogradContext* ctx)
    {
        StackCall c;
        c.heads = ctx->saved_data["heads"].toInt();
        c.step = ctx->saved_data["step"].toInt();
        c.inter = ctx->saved_data["inter"].toInt();
        c.biasFloats = ctx->saved_data["biasFloats"].toIntVector();
        return c;
    }
};

class FusedStack : public torch::autograd::Function<FusedStack> {
public:
    // Inputs: x, then kWeights tensors per layer (input norm, q, k, v, o, post norm, gate, up,
    // down), kTables per layer (cos, sin, cosK, sinK, bias), heads, eps, the step of the last
    // layer's output rows, the kernel context and the scratch.
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                                 at::TensorList weights, at::TensorList tables, std::int64_t heads,
                                 double eps, std::int64_t step,
                                 const kernels::KernelContext* context,
                                 std::shared_ptr<FusedScratch> scratch)
    {
        const std::int64_t layers = static_cast<std::int64_t>(weights.size()) / kWeights;
        const Dims s = dims(x, weights[6].size(0), heads, layers, step);
        const auto opt = x.options();
        auto xc = x.contiguous();
        tensor_list tabs;
        std::vector<std::int64_t> biasFloats;  // per layer: its bias's gradient, or none (0)
        for (std::int64_t l = 0; l < layers; ++l) {
            for (int i = 0; i < kTables; ++i)
                tabs.push_back(tables[l * kTables + i].contiguous());
            // The input's flag: a contiguous copy made here (no grad mode) has none.
            const auto& bias = tables[l * kTables + kTables - 1];
            biasFloats.push_back(bias.numel() > 0 && bias.requires_grad() ? bias.numel() : 0);
        }
        const Layout o = Layout::of(s, biasFloats);
        auto wbuf = scratch->take(FusedScratch::Weights, o.weights);
        auto rbuf = scratch->take(FusedScratch::Rows, o.rows);
        float *w = floatsOf(wbuf), *r = floatsOf(rbuf);
        // This call's copies of the weights: [q|k|v] and [gate|up] each as one matrix.
        for (std::int64_t l = 0; l < layers; ++l) {
            const LayerAt& a = o.at[static_cast<size_t>(l)];
            const auto put = [&](std::int64_t offset, std::initializer_list<int> which) {
                for (int i : which) {
                    const auto p = weights[l * kWeights + i].contiguous();
                    std::memcpy(w + offset, floatsOf(p), sizeof(float) * p.numel());
                    offset += p.numel();
                }
            };
            put(a.g1, {0});
            put(a.wqkv, {1, 2, 3});
            put(a.wo, {4});
            put(a.g2, {5});
            put(a.wgu, {6, 7});
            put(a.wdown, {8});
        }
        auto y = torch::empty({s.b, s.t / s.step, s.h}, opt);
        const float e = static_cast<float>(eps);
        fused::BatchParts::of(*context, s.b, s.t).run([&](const fused::BatchPart& q) {
            const float* input = q.at(floatsOf(xc), s.h);
            for (int l = 0; l < s.layers; ++l) {
                const LayerAt& a = o.at[static_cast<size_t>(l)];
                float* out =
                    l + 1 < s.layers ? q.at(r + a.y, s.h) : q.atKept(floatsOf(y), s.h, s.stepOf(l));
                forwardPart(s, Layer(a, w, r, tabs, l, s.stepOf(l)), q, input, out, e);
                input = out;
            }
        });

        tensor_list saved{xc, wbuf, rbuf};
        saved.insert(saved.end(), tabs.begin(), tabs.end());
        ctx->save_for_backward(saved);
        StackCall{heads, step, s.inter, std::move(biasFloats)}.saveTo(ctx);
        auto& at = *scratch;  // the graph keeps a share: it may outlive its model
        fused::keep(ctx, "scratch", std::move(scratch), at);
        fused::keepContext(ctx, *context);
        return y;
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list grads)
    {
        const auto sv = ctx->get_saved_variables();
        const auto &x = sv[0], &wbuf = sv[1], &rbuf = sv[2];
        const tensor_list tabs(sv.begin() + 3, sv.end());
        const auto layers = static_cast<std::int64_t>(tabs.size()) / kTables;
        const StackCall call = StackCall::of(ctx);
        const Dims s = dims(x, call.inter, call.heads, layers, call.step);
        const Layout o = Layout::of(s, call.biasFloats);
        auto& scratch = fused::kept<FusedScratch>(ctx, "scratch");
        const auto opt = x.options();
        const auto parts = fused::BatchParts::of(fused::keptContext(ctx), s.b, s.t);
        // Per part: sums of every layer's weight gradients, added in part order below.
        auto gbuf = scratch.take(FusedScratch::Grads, parts.count * o.grads);
        auto bbuf = scratch.take(FusedScratch::Backward, o.back);
        auto dy = grads[0].contiguous();
        auto dx = torch::empty({s.b, s.t, s.h}, opt);
        float *w = floatsOf(wbuf), *r = floatsOf(rbuf), *b = floatsOf(bbuf);
        parts.run([&](const fused::BatchPart& q) {
            float* gp = floatsOf(gbuf) + q.index * o.grads;
            const float* d = q.atKept(floatsOf(dy), s.h, s.step);
            for (int l = s.layers - 1; l >= 0; --l) {
                const LayerAt& a = o.at[static_cast<size_t>(l)];
                // dg1, dg2 and dbias are sums over rows: they start at zero.
                std::memset(gp + a.dg1, 0, sizeof(float) * s.h);
                std::memset(gp + a.dg2, 0, sizeof(float) * s.h);
                std::memset(gp + a.dbias, 0, sizeof(float) * a.nbias);
                const Grads g{gp + a.dqkv,
                              gp + a.dwo,
                              gp + a.dg1,
                              gp + a.dg2,
                              gp + a.dgu,
                              gp + a.ddown,
                              a.nbias > 0 ? gp + a.dbias : nullptr};
                const float* input = l == 0 ? q.at(floatsOf(x), s.h)
                                            : q.at(r + o.at[static_cast<size_t>(l - 1)].y, s.h);
                float* out = l == 0 ? q.at(floatsOf(dx), s.h)
                                    : q.at(b + ((s.layers - l) % 2 ? o.dyA : o.dyB), s.h);
                backwardPart(s, Layer(a, w, r, tabs, l, s.stepOf(l)), g, b, o, q, input, d, out);
                d = out;
            }
        });
        // The parts' sums in part order (the same bits on any number of threads).
        float* g0 = floatsOf(gbuf);
        for (int p = 1; p < parts.count; ++p)
            k::addInPlace(g0, g0 + p * o.grads, o.grads);

        tensor_list out{dx};
        const auto grad = [&](std::int64_t offset, at::IntArrayRef shape) {
            std::int64_t n = 1;
            for (auto d : shape)
                n *= d;
            return gbuf.narrow(0, offset, n).view(shape);
        };
        const std::int64_t h = s.h, in = s.inter;
        for (std::int64_t l = 0; l < layers; ++l) {
            const LayerAt& a = o.at[static_cast<size_t>(l)];
            out.push_back(grad(a.dg1, {h}));
            for (int j = 0; j < 3; ++j)
                out.push_back(grad(a.dqkv + j * h * h, {h, h}));
            out.push_back(grad(a.dwo, {h, h}));
            out.push_back(grad(a.dg2, {h}));
            out.push_back(grad(a.dgu, {in, h}));
            out.push_back(grad(a.dgu + in * h, {in, h}));
            out.push_back(grad(a.ddown, {h, in}));
        }
        for (std::int64_t l = 0; l < layers; ++l) {
            for (int i = 0; i < kTables - 1; ++i)
                out.emplace_back();
            const LayerAt& a = o.at[static_cast<size_t>(l)];
            const auto& bias = tabs[static_cast<size_t>(l * kTables + 4)];
            out.push_back(a.nbias > 0 ? grad(a.dbias, bias.sizes()) : torch::Tensor());
        }
        for (int i = 0; i < kOptions; ++i)
            out.emplace_back();
        return out;
    }
};

}  // namespace

torch::Tensor FusedScratch::take(Slot slot, std::int64_t floats)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    auto& t = m_slots[slot];
    // Ours alone: no saved graph and no gradient views it (they hold its storage).
    if (t.defined() && t.numel() >= floats && t.use_count() == 1 && t.storage().use_count() == 1)
        return t;
    // Zeroed once: the gradient sums are added over whole parts, the 64-byte padding between
    // regions included, which nothing else writes.
    t = slot == Grads ? torch::zeros({std::max<std::int64_t>(floats, 1)}, torch::kFloat32)
                      : torch::empty({std::max<std::int64_t>(floats, 1)}, torch::kFloat32);
    return t;
}

bool fusedApplies(const KernelPolicy& policy, const torch::Tensor& x)
{
    return policy.path == LayerPath::Fused && torch::GradMode::is_enabled() &&
           x.device().is_cpu() && x.scalar_type() == torch::kFloat32 && x.dim() == 3;
}

torch::Tensor fusedLlamaStack(const torch::Tensor& x, const std::vector<FusedLayerParams>& layers,
                              bool evenRowsOut, const kernels::KernelContext& context,
                              std::shared_ptr<FusedScratch> scratch)
{
    TORCH_CHECK(!layers.empty(), "fusedLlamaStack: no layers");
    if (!scratch)  // buffers for this call alone
        scratch = std::make_shared<FusedScratch>();
    // Each part's kept rows start at its first row / 2: exact only for whole prompts of even T.
    TORCH_CHECK(!evenRowsOut || x.size(1) % 2 == 0, "fusedLlamaStack: even rows of odd T");
    // Custom functions need defined inputs: an empty tensor stands for "none".
    auto orNone = [](const torch::Tensor& t) { return t.defined() ? t : torch::empty({0}); };
    std::vector<torch::Tensor> weights, tables;
    for (const auto& p : layers) {
        TORCH_CHECK(p.heads == layers[0].heads && p.eps == layers[0].eps &&
                        p.gate.size(0) == layers[0].gate.size(0),
                    "fusedLlamaStack: layers of different shapes");
        for (const auto* t :
             {&p.inputNorm, &p.q, &p.k, &p.v, &p.o, &p.postNorm, &p.gate, &p.up, &p.down})
            weights.push_back(*t);
        for (const auto* t : {&p.cos, &p.sin, &p.cosK, &p.sinK, &p.bias})
            tables.push_back(orNone(*t));
    }
    return FusedStack::apply(x, at::TensorList(weights), at::TensorList(tables),
                             static_cast<std::int64_t>(layers[0].heads), layers[0].eps,
                             static_cast<std::int64_t>(evenRowsOut ? 2 : 1), &context,
                             std::move(scratch));
}

}  // namespace lengen::engine::model
