#pragma once
// Causal multi-head self-attention without biases (Llama, reference §3.3), with a pluggable
// position encoding. Can hand back the post-softmax weights for the attention probes.

#include <torch/torch.h>

#include "model/position_encoding.h"

namespace lengen::engine::model {

class AttentionImpl : public torch::nn::Module {
public:
    AttentionImpl(int hidden, int heads, PositionEncoding pe);
    /// x [B, T, H] -> [B, T, H]. If `weights` is non-null it receives the attention
    /// probabilities [B, heads, T, T] (float32, causal zeros above the diagonal).
    torch::Tensor forward(const torch::Tensor& x, const PositionSpan& pos,
                          torch::Tensor* weights = nullptr);
    PositionEncoding positionEncoding() const { return m_pe; }

private:
    torch::Tensor causalMask(std::int64_t t, const torch::Device& device);

    int m_heads;
    int m_headDim;
    double m_scale;
    torch::nn::Linear m_q{nullptr}, m_k{nullptr}, m_v{nullptr}, m_o{nullptr};
    PositionEncoding m_pe{nullptr};
    torch::Tensor m_mask;  // cached [T, T] additive causal mask (0 / -inf)
};
TORCH_MODULE(Attention);

}  // namespace lengen::engine::model
