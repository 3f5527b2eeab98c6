#pragma once
// Sandwich (Chi et al. 2023, "Dissecting Transformer Length Extrapolation via the Lens of
// Receptive Field Analysis"): the inner product of two sinusoidal position vectors of width d',
// which depends on the distance n = i - j alone, shifted to 0 at n = 0 and scaled per head
// as ALiBi's slopes spread heads over scales:
//   b_h(n) = (sum_{k=1}^{d'/2} cos(n / 10000^(2k/d')) - d'/2) * H / (8 h),   h = 1..H.
// Nothing is learned. The per-distance values are computed once in float64 and gathered.

#include "model/position_encoding.h"

namespace lengen::engine::model {

class SandwichImpl : public PositionEncodingImpl {
public:
    SandwichImpl(int numHeads, int dim);
    /// [heads, Tq, Tk]; keys after the query read distance 0 (masked anyway).
    torch::Tensor logitBias(const PositionSpan& pos) override;
    std::map<std::string, std::vector<double>> constants() const override;
    /// b(n) before the head scale, for n = 0..count-1, in float64.
    static std::vector<double> profile(int dim, std::int64_t count);
    /// H / (8 h) for h = 1..H.
    static std::vector<double> headScales(int numHeads);

private:
    int m_dim;
    torch::Tensor m_scales;       // [heads, 1]
    torch::Tensor m_perDistance;  // [heads, D] on the device of the last forward
};

}  // namespace lengen::engine::model
