#pragma once
// CoPE, contextual position encoding (Golovneva et al. 2024, "Contextual Position Encoding:
// Learning to Count What's Important"): a query counts positions through gates on the content
// rather than tokens. For query i and key j <= i, with z the scaled logits q.k / sqrt(d):
//   g_it = sigmoid(z_it),   p_ij = sum_{t=j}^{i} g_it   (clamped to npos_max - 1),
//   bias_ij = q_i . e[p_ij], e interpolated linearly between the integer positions
//             floor(p_ij) and ceil(p_ij) of a learned table e [head_dim, npos_max],
// added to z before the softmax (the paper's listing; the authors' repository's --cope-nodiv),
// or bias_ij / sqrt(d) with `patch.cope.divide_position_logits` (that repository's default,
// which divides the sum of both logits). One table per layer, shared by its heads, zero at the
// start (the paper's initialisation). Parameter under self_attn.rotary_emb: pos_emb [head_dim,
// npos_max]. In an ICL prompt an example is two tokens: CoPE can learn to count examples.

#include "model/position_encoding.h"

namespace lengen::engine::model {

class CopeImpl : public PositionEncodingImpl {
public:
    /// `dividePositionLogits`: the bias is scaled by 1/sqrt(headDim) as the content logits are.
    CopeImpl(int headDim, int maxPositions, bool dividePositionLogits = false);
    /// q [B, h, R, d], maskedLogits [B, h, R, Tk] (-inf after each query) -> [B, h, R, Tk].
    torch::Tensor contentBias(const torch::Tensor& q, const torch::Tensor& maskedLogits) override;
    bool readsContent() const override { return true; }
    std::map<std::string, std::vector<double>> constants() const override;

private:
    int m_positions;
    double m_biasScale;   // 1, or 1/sqrt(head_dim)
    torch::Tensor m_emb;  // [d, npos_max]
};

}  // namespace lengen::engine::model
