#include "model/cope.h"

#include <cmath>

namespace lengen::engine::model {

CopeImpl::CopeImpl(int headDim, int maxPositions, bool dividePositionLogits)
    : m_positions(maxPositions),
      m_biasScale(dividePositionLogits ? 1.0 / std::sqrt(double(headDim)) : 1.0)
{
    m_emb = register_parameter("pos_emb", torch::zeros({headDim, maxPositions}, torch::kFloat32));
}

torch::Tensor CopeImpl::contentBias(const torch::Tensor& q, const torch::Tensor& maskedLogits)
{
    // Gates are 0 for masked keys (sigmoid(-inf)), so the suffix sum from key j to the end of
    // the row is the count from j to the query.
    const auto gates = torch::sigmoid(maskedLogits);  // [B, h, R, Tk]
    const auto pos = gates.flip(-1).cumsum(-1).flip(-1).clamp_max(m_positions - 1);
    const auto lo = pos.floor(), w = pos - lo;  // w: gradient to the gates
    const auto loIdx = lo.to(torch::kLong), hiIdx = pos.ceil().to(torch::kLong);
    const auto perPosition = torch::matmul(q, m_emb.to(q.scalar_type()));  // [B, h, R, npos]
    auto bias = perPosition.gather(-1, hiIdx) * w + perPosition.gather(-1, loIdx) * (1 - w);
    return m_biasScale == 1.0 ? bias : bias * m_biasScale;
}

std::map<std::string, std::vector<double>> CopeImpl::constants() const
{
    std::map<std::string, std::vector<double>> out{{"npos_max", {double(m_positions)}}};
    if (m_biasScale != 1.0)  // patch.cope.divide_position_logits
        out["position_logit_scale"] = {m_biasScale};
    return out;
}

}  // namespace lengen::engine::model
