#include "model/kerple.h"

namespace lengen::engine::model {

KerpleImpl::KerpleImpl(int numHeads, Kernel kernel) : m_kernel(kernel)
{
    // Placeholders: InContextModelImpl::initialise draws p ~ U(0, 2) and a ~ U(0, 1).
    m_p = register_parameter("bias_p", torch::ones({numHeads}, torch::kFloat32));
    m_a = register_parameter("bias_a", torch::ones({numHeads}, torch::kFloat32));
}

torch::Tensor KerpleImpl::logitBias(const PositionSpan& pos)
{
    {
        // The paper's projection: each forward sees parameters inside their ranges.
        torch::NoGradGuard noGrad;
        m_a.clamp_min_(kEps);
        if (m_kernel == Kernel::Power)
            m_p.clamp_(kEps, 2.0);
        else
            m_p.clamp_min_(kEps);
    }
    const auto n = pos.distances().to(torch::kFloat32);             // [Tq, Tk]
    const auto p = m_p.view({-1, 1, 1}), a = m_a.view({-1, 1, 1});  // [h, 1, 1]
    if (m_kernel == Kernel::Log)
        return -p * torch::log1p(a * n);  // [h, Tq, Tk]
    return -a * n.pow(p);
}

std::map<std::string, std::vector<double>> KerpleImpl::constants() const
{
    return {{"kernel", {m_kernel == Kernel::Log ? 0.0 : 1.0}}};
}

}  // namespace lengen::engine::model
