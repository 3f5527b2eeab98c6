#include "train/adamw.h"

#include <cmath>

namespace lengen::engine::training {

AdamW::AdamW(std::vector<std::pair<std::string, torch::Tensor>> params, AdamWOptions options)
    : m_params(std::move(params)), m_opt(options)
{
    for (const auto& [name, p] : m_params) {
        m_m.push_back(torch::zeros_like(p));
        m_v.push_back(torch::zeros_like(p));
    }
}

void AdamW::step(double lr)
{
    torch::NoGradGuard noGrad;
    ++m_steps;
    const double bc1 = 1.0 - std::pow(m_opt.beta1, static_cast<double>(m_steps));
    const double bc2 = 1.0 - std::pow(m_opt.beta2, static_cast<double>(m_steps));
    const double stepSize = lr / bc1;
    const double bc2Sqrt = std::sqrt(bc2);
    for (size_t i = 0; i < m_params.size(); ++i) {
        auto& p = m_params[i].second;
        const auto& g = p.grad();
        if (!g.defined())
            continue;
        if (m_opt.weightDecay != 0.0)
            p.mul_(1.0 - lr * m_opt.weightDecay);
        m_m[i].mul_(m_opt.beta1).add_(g, 1.0 - m_opt.beta1);
        m_v[i].mul_(m_opt.beta2).addcmul_(g, g, 1.0 - m_opt.beta2);
        auto denom = (m_v[i].sqrt() / bc2Sqrt).add_(m_opt.eps);
        p.addcdiv_(m_m[i], denom, -stepSize);
    }
}

void AdamW::zeroGrad()
{
    // Drop the gradients instead of zeroing them (PyTorch's set_to_none): one op less.
    for (auto& [name, p] : m_params)
        p.mutable_grad() = torch::Tensor();
}

double AdamW::clipGradNorm(double maxNorm)
{
    if (maxNorm <= 0)
        return 0.0;  // clipping off: skip the norm (it costs a device sync)
    std::vector<torch::Tensor> grads;
    for (auto& [name, p] : m_params)
        if (p.grad().defined())
            grads.push_back(p.grad());
    if (grads.empty())
        return 0.0;
    std::vector<torch::Tensor> norms;
    for (const auto& g : grads)
        norms.push_back(g.norm(2));
    const double total = torch::stack(norms).norm(2).item<double>();
    const double coef = maxNorm / (total + 1e-6);
    if (coef < 1.0) {
        torch::NoGradGuard noGrad;
        for (auto& g : grads)
            g.mul_(coef);
    }
    return total;
}

}  // namespace lengen::engine::training
