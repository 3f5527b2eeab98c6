#pragma once
// KERPLE (Chi et al. 2022, "Kernelized Relative Positional Embedding for Length
// Extrapolation"): a conditionally positive definite kernel of the distance n = max(i - j, 0),
// learned per head and added to the scaled logits:
//   log:    b_h(n) = -p_h * ln(1 + a_h * n),   p_h, a_h >= 0.01
//   power:  b_h(n) = -a_h * n ^ p_h,           a_h >= 0.01, 0.01 <= p_h <= 2
// As the paper's code, p starts uniform in (0, 2) and a in (0, 1) (icl_model's initialise
// draws them from the run's generator), and both are projected into their ranges before every
// forward (clamped in place, outside autograd). Parameters under self_attn.rotary_emb:
// bias_p [heads], bias_a [heads].

#include "model/position_encoding.h"

namespace lengen::engine::model {

class KerpleImpl : public PositionEncodingImpl {
public:
    enum class Kernel { Log, Power };
    KerpleImpl(int numHeads, Kernel kernel);
    /// [heads, Tq, Tk]; 0 for keys after the query (masked anyway).
    torch::Tensor logitBias(const PositionSpan& pos) override;
    std::map<std::string, std::vector<double>> constants() const override;

    static constexpr double kEps = 1e-2;

private:
    Kernel m_kernel;
    torch::Tensor m_p, m_a;  // [heads] each
};

}  // namespace lengen::engine::model
