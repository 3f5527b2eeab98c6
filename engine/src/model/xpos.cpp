#include "model/xpos.h"

#include <cmath>

#include "model/attention_detail.h"

namespace lengen::engine::model {

XposImpl::XposImpl(int headDim, double theta, double scaleBase)
    : RotaryImpl(headDim, theta), m_scaleBase(scaleBase)
{
    auto z = torch::tensor(zeta(headDim), torch::kFloat64).log();  // [d/2]
    m_logZeta = torch::cat({z, z});                                  // [d]
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
    auto n = (p.to(torch::kFloat64) - centre) * (sign / m_scaleBase);  // [T]
    return torch::exp(torch::outer(n, m_logZeta)).to(torch::kFloat32);  // [T, d]
}

void XposImpl::rotate(torch::Tensor& q, torch::Tensor& k, const PositionSpan& pos,
                      const Intervention* edit)
{
    auto [cq, sq] = tablesAt(pos.q, pos.maxPos, edit);  // [Tq, d]
    const auto up = decay(pos.q, pos.maxPos, 1.0);
    q = (q * cq + detail::rotateHalf(q) * sq) * up;
    if (pos.k.is_same(pos.q)) {
        const auto down = up.reciprocal();
        k = (k * cq + detail::rotateHalf(k) * sq) * down;
        return;
    }
    auto [ck, sk] = tablesAt(pos.k, pos.maxPos, edit);  // [Tk, d]
    k = (k * ck + detail::rotateHalf(k) * sk) * decay(pos.k, pos.maxPos, -1.0);
}

std::pair<torch::Tensor, torch::Tensor> XposImpl::rotaryTables(const PositionSpan& pos)
{
    auto [c, s] = tablesAt(pos.q, pos.maxPos);
    const auto up = decay(pos.q, pos.maxPos, 1.0);
    return {c * up, s * up};
}

std::pair<torch::Tensor, torch::Tensor> XposImpl::keyTables(const PositionSpan& pos)
{
    auto [c, s] = tablesAt(pos.k, pos.maxPos);
    const auto down = decay(pos.k, pos.maxPos, -1.0);
    return {c * down, s * down};
}

std::map<std::string, std::vector<double>> XposImpl::constants() const
{
    auto out = RotaryImpl::constants();
    out["zeta"] = zeta(m_headDim);
    out["scale_base"] = {m_scaleBase};
    return out;
}

}  // namespace lengen::engine::model
