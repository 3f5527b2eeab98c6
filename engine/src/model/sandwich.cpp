#include "model/sandwich.h"

#include <cmath>

namespace lengen::engine::model {

SandwichImpl::SandwichImpl(int numHeads, int dim) : m_dim(dim)
{
    m_scales = torch::tensor(headScales(numHeads), torch::kFloat64).view({-1, 1});  // [heads, 1]
}

std::vector<double> SandwichImpl::profile(int dim, std::int64_t count)
{
    std::vector<double> freq;  // 10000^(-2k/d'), k = 1..d'/2 (the paper's sum starts at 1)
    for (int k = 1; k <= dim / 2; ++k)
        freq.push_back(std::pow(10000.0, -2.0 * k / dim));
    std::vector<double> out(static_cast<size_t>(std::max<std::int64_t>(count, 0)));
    for (std::int64_t n = 0; n < count; ++n) {
        double sum = 0;
        for (const double f : freq)
            sum += std::cos(double(n) * f);
        out[static_cast<size_t>(n)] = sum - dim / 2.0;
    }
    return out;
}

std::vector<double> SandwichImpl::headScales(int numHeads)
{
    std::vector<double> s(static_cast<size_t>(numHeads));
    for (int h = 1; h <= numHeads; ++h)
        s[static_cast<size_t>(h - 1)] = double(numHeads) / (8.0 * h);
    return s;
}

torch::Tensor SandwichImpl::logitBias(const PositionSpan& pos)
{
    const std::int64_t count = pos.maxPos + 1;
    if (!m_perDistance.defined() || m_perDistance.size(1) < count ||
        m_perDistance.device() != pos.q.device()) {
        auto b = torch::tensor(profile(m_dim, count), torch::kFloat64).unsqueeze(0);  // [1, D]
        m_perDistance = (b * m_scales).to(torch::kFloat32).to(pos.q.device());        // [heads, D]
    }
    const auto n = pos.distances();  // [Tq, Tk]
    const auto tq = pos.q.size(0), tk = pos.k.size(0);
    return m_perDistance.index_select(1, n.reshape({-1})).view({-1, tq, tk});  // [heads, Tq, Tk]
}

std::map<std::string, std::vector<double>> SandwichImpl::constants() const
{
    auto s = m_scales.reshape({-1}).contiguous();
    return {{"dim", {double(m_dim)}},
            {"head_scales",
             std::vector<double>(s.data_ptr<double>(), s.data_ptr<double>() + s.numel())}};
}

}  // namespace lengen::engine::model
