#pragma once
// xPos (Sun et al. 2023, "A Length-Extrapolatable Transformer"): RoPE whose rotation of pair i
// is scaled by zeta_i^(n/gamma) on the query at position n and by zeta_i^(-m/gamma) on the key
// at position m, so that q.k carries zeta_i^((n-m)/gamma): an exponential decay with the
// distance, slower for the low frequencies.
//   zeta_i = (2i/d + 0.4) / 1.4,  i = 0..d/2-1;   gamma = patch.xpos.scale_base (512).
// Positions enter the scale centred on the forward's middle, c = (maxPos + 1) / 2 (as
// torchscale does, so that zeta^(n/gamma) stays in range at long lengths); q.k is unchanged by
// the centre. Pairs are rotate-half (dimension j with j + d/2), as LenGen's RoPE. Rotary
// interventions (pi, ntk, yarn) rescale the rotation; the decay keeps the true distances.

#include "model/position_encoding.h"

namespace lengen::engine::model {

class XposImpl : public RotaryImpl {
public:
    XposImpl(int headDim, double theta, double scaleBase);
    void rotate(torch::Tensor& q, torch::Tensor& k, const PositionSpan& pos,
                const Intervention* edit = nullptr) override;
    /// The query's tables (cos and sin times the decay), [Tq, d].
    std::pair<torch::Tensor, torch::Tensor> rotaryTables(const PositionSpan& pos) override;
    /// The key's tables (cos and sin over the decay), [Tk, d].
    std::pair<torch::Tensor, torch::Tensor> keyTables(const PositionSpan& pos) override;
    std::map<std::string, std::vector<double>> constants() const override;
    /// zeta_i for i = 0..d/2-1.
    static std::vector<double> zeta(int headDim);

private:
    // zeta^(sign (p - c) / gamma) for positions p (int64 [T]) of a forward whose largest
    // position is maxPos, [T, d] float32 on p's device.
    torch::Tensor decay(const torch::Tensor& p, std::int64_t maxPos, double sign);
    // cos and sin at p (under a rotary intervention) times decay(p, maxPos, sign), [T, d].
    std::pair<torch::Tensor, torch::Tensor> scaledTables(const torch::Tensor& p,
                                                         std::int64_t maxPos,
                                                         const Intervention* edit, double sign);
    double m_scaleBase;
    torch::Tensor
        m_logZeta;  // [d] float64: ln zeta_i, twice (rotate-half pairs); on the last device
};

}  // namespace lengen::engine::model
