#include "model/fire.h"

namespace lengen::engine::model {

FireImpl::FireImpl(int numHeads, int mlpWidth) : m_width(mlpWidth)
{
    m_mlp = register_module("mlp",
                            torch::nn::Sequential(torch::nn::Linear(1, mlpWidth), torch::nn::ReLU(),
                                                  torch::nn::Linear(mlpWidth, numHeads)));
    m_c = register_parameter("c", torch::tensor(kInitC, torch::kFloat32));
    m_initL = register_parameter("init_L", torch::tensor(kInitL, torch::kFloat32),
                                 /*requires_grad=*/false);
    m_multiplier = register_parameter("L_multiplier", torch::tensor(1.0, torch::kFloat32));
}

torch::Tensor FireImpl::logitBias(const PositionSpan& pos)
{
    auto psi = [&](const torch::Tensor& u) { return torch::log((m_c * u).abs() + 1); };
    auto qp = pos.q.to(torch::kFloat32);           // [Tq]
    auto kp = pos.k.to(torch::kFloat32);           // [Tk]
    auto rel = qp.unsqueeze(1) - kp.unsqueeze(0);  // [Tq, Tk]
    auto tau = (m_multiplier * m_initL).abs();
    auto norm = psi(torch::maximum(qp, tau)) + kEps;  // [Tq]
    auto r = psi(rel) / norm.unsqueeze(1);            // [Tq, Tk]
    auto bias = m_mlp->forward(r.unsqueeze(-1));      // [Tq, Tk, heads]
    return bias.permute({2, 0, 1});                   // [heads, Tq, Tk]
}

std::map<std::string, std::vector<double>> FireImpl::constants() const
{
    return {{"mlp_width", {static_cast<double>(m_width)}},
            {"c", {m_c.item<double>()}},
            {"tau", {(m_multiplier * m_initL).abs().item<double>()}}};
}

}  // namespace lengen::engine::model
