#pragma once
// FIRE (reference §4.4): a learned relative bias per layer, b_h(i, j) = MLP(r_ij)_h with
// r_ij = psi(i - j) / (psi(max(i, tau)) + eps), psi(u) = ln(|c u| + 1), tau = |lambda * L0|.
// Parameters under self_attn.rotary_emb: mlp.0.{weight,bias}, mlp.2.{weight,bias}, c (0.1),
// init_L (512, frozen), L_multiplier (1.0).

#include "model/position_encoding.h"

namespace lengen::engine::model {

class FireImpl : public PositionEncodingImpl {
public:
    FireImpl(int numHeads, int mlpWidth);
    /// [heads, Tq, Tk], computed once per forward for the whole batch (it does not depend on
    /// the batch), and only for the query rows asked for.
    torch::Tensor logitBias(const PositionSpan& pos) override;
    std::map<std::string, std::vector<double>> constants() const override;

    static constexpr double kInitC = 0.1;
    static constexpr double kInitL = 512.0;
    static constexpr double kEps = 1e-6;

private:
    int m_width;
    torch::nn::Sequential m_mlp{nullptr};
    torch::Tensor m_c, m_initL, m_multiplier;
};

}  // namespace lengen::engine::model
