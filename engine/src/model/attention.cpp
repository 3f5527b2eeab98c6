#include "model/attention.h"

#include <cmath>
#include <limits>

#include "device/device_fused.h"
#include "model/attention_detail.h"
#include "model/small_bmm.h"
#include "torch_compat.h"

namespace lengen::engine::model {

namespace {

torch::nn::Linear linear(int in, int out)
{
    return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}

// Additive causal mask (0 on and below the diagonal, -inf above), [T, T], grown on demand.
torch::Tensor causalMask(std::int64_t t, const torch::Device& device)
{
    thread_local torch::Tensor mask;
    if (!mask.defined() || mask.size(0) < t || mask.device() != device) {
        const float ninf = -std::numeric_limits<float>::infinity();
        mask = torch::full({t, t}, ninf, torch::TensorOptions(torch::kFloat32).device(device))
                   .triu_(1);
    }
    return mask;
}

// Probabilities for query rows [r0, r1) over keys [0, r1): [B, heads, r1-r0, r1].
torch::Tensor blockProbs(const torch::Tensor& q, const torch::Tensor& k, double scale,
                         const RowBias& bias, std::int64_t r0, std::int64_t r1,
                         const ScoreEdit& edit)
{
    auto causal = causalMask(q.size(2), q.device()).slice(0, r0, r1).slice(1, 0, r1);
    auto qs = q.slice(2, r0, r1), ks = k.slice(2, 0, r1);
    auto scores = batchedMatmul(qs * scale, ks, false, true);  // [B, h, r1-r0, r1]
    auto b = bias ? bias(r0, r1) : torch::Tensor();
    if (edit)  // an intervention: logits first, then its changes, then causality
        return torch::softmax(edit(b.defined() ? scores + b : scores, r0, r1) + causal, -1);
    return torch::softmax(scores + (b.defined() ? b + causal : causal), -1);
}

}  // namespace

torch::Tensor attendCausal(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                           double scale, const RowBias& bias, AttentionTap* tap, LayerPath path,
                           const std::function<torch::Tensor(const torch::Tensor&)>& onProbs,
                           const ScoreEdit& scoreEdit)
{
    const auto b = q.size(0), h = q.size(1), t = q.size(2);
    const bool capture = tap && tap->capture;
    const bool allRows = !capture || !tap->rows.defined();
    const std::int64_t chunk = tap && tap->queryChunk > 0 ? std::min(tap->queryChunk, t) : t;
    // The Device path (kernel_policy.h): LibTorch's fused attention (2.1+) on a GPU, the same
    // function without materialising the scores.
    if (chunk == t && !capture && !onProbs && !scoreEdit && path == LayerPath::Device &&
        q.is_cuda())
        return compat::causalAttention(q, k, v, scale, bias ? bias(0, t) : torch::Tensor());
    if (chunk == t) {  // the training path: one block
        auto probs = blockProbs(q, k, scale, bias, 0, t, scoreEdit);  // [B, h, T, T]
        if (capture)
            tap->weights.push_back((allRows
                                        ? probs.detach()
                                        : probs.detach().index_select(2, tap->rows.to(q.device())))
                                       .to(tap->captureType));
        return batchedMatmul(onProbs ? onProbs(probs) : probs, v, false, false);
    }
    auto out = torch::empty({b, h, t, v.size(3)}, v.options());  // [B, h, T, d]
    torch::Tensor kept;
    if (capture) {
        const auto r = allRows ? t : tap->rows.size(0);
        kept = torch::zeros({b, h, r, t}, q.options().dtype(tap->captureType));  // [B, h, R, T]
    }
    const auto rowsCpu = capture && !allRows ? tap->rows.to(torch::kCPU) : torch::Tensor();
    for (std::int64_t r0 = 0; r0 < t; r0 += chunk) {
        const auto r1 = std::min(t, r0 + chunk);
        auto probs = blockProbs(q, k, scale, bias, r0, r1, scoreEdit);  // [B, h, r1-r0, r1]
        out.slice(2, r0, r1).copy_(batchedMatmul(probs, v.slice(2, 0, r1), false, false));
        if (capture && allRows)
            kept.slice(2, r0, r1).slice(-1, 0, r1).copy_(probs);
        else if (capture)
            detail::captureRows(kept, rowsCpu, probs, r0, r1);
    }
    if (capture)
        tap->weights.push_back(kept);
    return out;
}

AttentionImpl::AttentionImpl(int hidden, int heads, PositionEncoding pe)
    : m_heads(heads), m_headDim(hidden / heads), m_scale(1.0 / std::sqrt(hidden / heads))
{
    m_q = register_module("q_proj", linear(hidden, hidden));
    m_k = register_module("k_proj", linear(hidden, hidden));
    m_v = register_module("v_proj", linear(hidden, hidden));
    m_o = register_module("o_proj", linear(hidden, hidden));
    m_pe = register_module("rotary_emb", std::move(pe));
}

bool AttentionImpl::rotateOnDevice(torch::Tensor& q, torch::Tensor& k, const PositionSpan& pos)
{
    // Self-attention over one span with one table for queries and keys (not xPos's own key
    // table); q, k [B, heads, T, d] are views of the linear outputs [B, T, heads, d].
    if (!pos.k.is_same(pos.q) || m_pe->keyTables(pos).first.defined())
        return false;
    const auto [cos, sin] = m_pe->rotaryTables(pos);  // [T, d] float32, or undefined
    const auto qt = q.transpose(1, 2), kt = k.transpose(1, 2);
    if (!device::rotaryApplies(qt, kt, cos, sin))
        return false;
    auto [qr, kr] = device::rotaryPair(qt, kt, cos, sin);  // contiguous [B, T, heads, d]
    q = qr.transpose(1, 2);
    k = kr.transpose(1, 2);
    return true;
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x, const PositionSpan& pos,
                                     AttentionTap* tap, LayerPath path, bool deviceRotary)
{
    const auto b = x.size(0), t = x.size(1);
    auto split = [&](const torch::Tensor& y) {  // [B, T, H] -> [B, heads, T, d]
        return y.view({b, t, m_heads, m_headDim}).transpose(1, 2);
    };
    auto q = split(m_q(x));
    auto k = split(m_k(x));
    auto v = split(m_v(x));
    const Intervention* edit = tap && tap->edit && !tap->edit->identityAt(t) ? tap->edit : nullptr;
    if (edit && edit->kind == Intervention::Kind::LongHeads)
        return m_o(attendLongHeads(q, k, v, *edit, tap)
                       .transpose(1, 2)
                       .reshape({b, t, m_heads * m_headDim}));
    const auto qPlain = q, kPlain = k;  // unrotated, for the Λ-mask's capped global branch
    if (!(deviceRotary && !edit && rotateOnDevice(q, k, pos)))
        m_pe->rotate(q, k, pos, edit);

    // The bias of a row block: a sub-span of the forward's positions (queries r0..r1-1 over
    // keys 0..r1-1), so FIRE and ALiBi evaluate only the rows being computed.
    // CoPE's bias is computed from the content: the rows' own scaled, causally masked logits
    // (a second q.k product; the fused kernel does not apply, encodings.cpp fusedCpu).
    RowBias content = [&](std::int64_t r0, std::int64_t r1) {
        auto qs = q.slice(2, r0, r1);  // [B, h, R, d]
        auto logits = torch::matmul(qs * m_scale, k.slice(2, 0, r1).transpose(-1, -2)) +
                      causalMask(t, q.device()).slice(0, r0, r1).slice(1, 0, r1);  // [B, h, R, r1]
        return m_pe->contentBias(qs, logits);
    };
    RowBias bias = [&](std::int64_t r0, std::int64_t r1) {
        if (r0 == 0 && r1 == t)
            return m_pe->logitBias(pos);
        PositionSpan sub;
        sub.q = pos.q.slice(0, r0, r1);
        sub.k = pos.k.slice(0, 0, r1);
        sub.q0 = pos.consecutive ? pos.q0 + r0 : -1;  // no first position to name otherwise
        sub.k0 = pos.k0;
        sub.maxPos = pos.maxPos;
        sub.consecutive = pos.consecutive;
        return m_pe->logitBias(sub);
    };
    const ScoreEdit scoreEdit = edit ? scoreEditFor(*edit, qPlain, kPlain, pos) : ScoreEdit();
    auto out = attendCausal(q, k, v, m_scale, m_pe->readsContent() ? content : bias, tap, path, {},
                            scoreEdit)  // [B, heads, T, d]
                   .transpose(1, 2)
                   .reshape({b, t, m_heads * m_headDim});
    return m_o(out);
}

}  // namespace lengen::engine::model
