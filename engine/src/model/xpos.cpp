#include "model/xpos.h"

#include <cmath>

#include "model/attention_detail.h"

namespace lengen::engine::model {

XposImpl::XposImpl(int headDim, double theta, double scaleBase)
    : RotaryImpl(headDim, theta), m_scaleBase(scaleBase)
{
    auto z = torch::tensor(zeta(headDim), torch::kFloat64).log();  // [d/2]
    m_logZeta = torch::cat({z, z});                                // [d]
}

std::vector<double> XposImpl::zeta(int headDim)
{
    std::vector<double> z(static_cast<size_t>(headDim / 2));
    for (size_t i = 0; i < z.size(); ++i)
        z[i] = (2.0 * double(i) / headDim + 0.4) / 1.4;
    return z;
}

torch::Tensor XposImpl::decay(const torch::Tensor& p, std::int64_t maxPos, double sign)
{
    if (m_logZeta.device() != p.device())  // moved once: no copy inside a captured CUDA graph
        m_logZeta = m_logZeta.to(p.device());
    const double centre = double((maxPos + 1) / 2);
    auto n = (p.to(torch::kFloat64) - centre) * (sign / m_scaleBase);   // [T]
    return torch::exp(torch::outer(n, m_logZeta)).to(torch::kFloat32);  // [T, d]
}

std::pair<torch::Tensor, torch::Tensor> XposImpl::scaledTables(const torch::Tensor& p,
                                                               std::int64_t maxPos,
                                                               const Intervention* edit,
                                                               double sign)
{
    auto [c, s] = tablesAt(p, maxPos, edit);  // [T, d]
    const auto d = decay(p, maxPos, sign);
    return {c * d, s * d};
}

// The decay folded into the [T, d] tables, so q and k take RoPE's one product (applyRotary),
// not a second pass over [B, h, T, d]; the same tables the fused layer takes.
void XposImpl::rotate(torch::Tensor& q, torch::Tensor& k, const PositionSpan& pos,
                      const Intervention* edit)
{
    auto [cq, sq] = detail::tablesLike(q, scaledTables(pos.q, pos.maxPos, edit, 1.0));   // [Tq, d]
    auto [ck, sk] = detail::tablesLike(k, scaledTables(pos.k, pos.maxPos, edit, -1.0));  // [Tk, d]
    q = detail::applyRotary(q, cq, sq);
    k = detail::applyRotary(k, ck, sk);
}

std::pair<torch::Tensor, torch::Tensor> XposImpl::rotaryTables(const PositionSpan& pos)
{
    return scaledTables(pos.q, pos.maxPos, nullptr, 1.0);
}

std::pair<torch::Tensor, torch::Tensor> XposImpl::keyTables(const PositionSpan& pos)
{
    return scaledTables(pos.k, pos.maxPos, nullptr, -1.0);
}

std::map<std::string, std::vector<double>> XposImpl::constants() const
{
    auto out = RotaryImpl::constants();
    out["zeta"] = zeta(m_headDim);
    out["scale_base"] = {m_scaleBase};
    return out;
}

}  // namespace lengen::engine::model
