#include "model/attention.h"

#include <cmath>
#include <limits>

#include "model/small_bmm.h"

namespace lengen::engine::model {

namespace {
torch::nn::Linear linear(int in, int out)
{
    return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}
}  // namespace

AttentionImpl::AttentionImpl(int hidden, int heads, PositionEncoding pe)
    : m_heads(heads), m_headDim(hidden / heads), m_scale(1.0 / std::sqrt(hidden / heads))
{
    m_q = register_module("q_proj", linear(hidden, hidden));
    m_k = register_module("k_proj", linear(hidden, hidden));
    m_v = register_module("v_proj", linear(hidden, hidden));
    m_o = register_module("o_proj", linear(hidden, hidden));
    m_pe = register_module("rotary_emb", std::move(pe));
}

torch::Tensor AttentionImpl::causalMask(std::int64_t t, const torch::Device& device)
{
    if (!m_mask.defined() || m_mask.size(0) < t || m_mask.device() != device) {
        const float ninf = -std::numeric_limits<float>::infinity();
        m_mask = torch::full({t, t}, ninf, torch::TensorOptions(torch::kFloat32).device(device))
                     .triu_(1);
    }
    return m_mask.slice(0, 0, t).slice(1, 0, t);
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x, const PositionSpan& pos,
                                     torch::Tensor* weights)
{
    const auto b = x.size(0), t = x.size(1);
    auto split = [&](const torch::Tensor& y) {  // [B, T, H] -> [B, heads, T, d]
        return y.view({b, t, m_heads, m_headDim}).transpose(1, 2);
    };
    auto q = split(m_q(x));
    auto k = split(m_k(x));
    auto v = split(m_v(x));
    m_pe->rotate(q, k, pos);

    auto scores = batchedMatmul(q * m_scale, k, false, true);       // [B, heads, T, T]
    auto mask = causalMask(t, x.device());                          // [T, T]
    auto bias = m_pe->logitBias(pos);                               // [heads|1, T, T] or none
    scores = scores + (bias.defined() ? bias + mask : mask);
    auto probs = torch::softmax(scores, -1);
    if (weights)
        *weights = probs.detach();
    auto out = batchedMatmul(probs, v, false, false)                // [B, heads, T, d]
                   .transpose(1, 2)
                   .reshape({b, t, m_heads * m_headDim});
    return m_o(out);
}

}  // namespace lengen::engine::model
