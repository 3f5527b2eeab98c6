#include "model/mamba.h"

#include <cmath>

#include "model/fused_layer.h"
#include "model/selective_scan.h"

namespace lengen::engine::model {

void defaultUniformInit(torch::Tensor& weight, torch::Tensor* bias, at::Generator& gen)
{
    const double fanIn = static_cast<double>(weight.numel() / weight.size(0));
    const double bound = 1.0 / std::sqrt(fanIn);
    weight.uniform_(-bound, bound, gen);
    if (bias && bias->defined())
        bias->uniform_(-bound, bound, gen);
}

MambaMixerImpl::MambaMixerImpl(const MambaSizes& s) : m_s(s)
{
    auto linear = [](int in, int out, bool bias) {
        return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
    };
    // Registration order mirrors the reference's state dict.
    m_aLog = register_parameter("A_log", torch::zeros({s.inner, s.state}));
    m_d = register_parameter("D", torch::ones({s.inner}));
    m_conv = register_module(
        "conv1d", torch::nn::Conv1d(torch::nn::Conv1dOptions(s.inner, s.inner, s.convKernel)
                                        .groups(s.inner)
                                        .padding(s.convKernel - 1)
                                        .bias(true)));
    m_inProj = register_module("in_proj", linear(s.hidden, 2 * s.inner, false));
    m_xProj = register_module("x_proj", linear(s.inner, s.dtRank + 2 * s.state, false));
    m_dtProj = register_module("dt_proj", linear(s.dtRank, s.inner, true));
    m_outProj = register_module("out_proj", linear(s.inner, s.hidden, false));
}

torch::Tensor MambaMixerImpl::forward(const torch::Tensor& u, double dtScale,
                                      const KernelPolicy& policy)
{
    const auto t = u.size(1);
    auto xz = m_inProj(u);                                           // [B, T, 2E]
    auto x = xz.slice(2, 0, m_s.inner), z = xz.slice(2, m_s.inner);  // [B, T, E] each
    // Depthwise causal conv over time: pad K-1 on both sides, keep the first T outputs.
    auto v = torch::silu(m_conv(x.transpose(1, 2)).slice(2, 0, t).transpose(1, 2));  // [B, T, E]
    auto proj = m_xProj(v);  // [B, T, R + 2N]
    auto dtRaw = proj.slice(2, 0, m_s.dtRank);
    auto bm = proj.slice(2, m_s.dtRank, m_s.dtRank + m_s.state);  // [B, T, N]
    auto cm = proj.slice(2, m_s.dtRank + m_s.state);              // [B, T, N]
    auto delta = torch::softplus(m_dtProj(dtRaw));                // [B, T, E]
    if (dtScale != 1.0)  // mamba_dt: a shorter step forgets more slowly over a longer prompt
        delta = delta * dtScale;
    auto a = -torch::exp(m_aLog);                                       // [E, N]
    auto y = selectiveScan(policy.context(), v, delta, a, bm, cm, m_d,  // [B, T, E]
                           policy.parallelScan);
    return m_outProj(y * torch::silu(z));
}

FusedMambaParams MambaMixerImpl::fusedParams() const
{
    FusedMambaParams p;
    p.inProj = m_inProj->weight;
    p.convWeight = m_conv->weight;
    p.convBias = m_conv->bias;
    p.xProj = m_xProj->weight;
    p.dtWeight = m_dtProj->weight;
    p.dtBias = m_dtProj->bias;
    p.aLog = m_aLog;
    p.d = m_d;
    p.outProj = m_outProj->weight;
    return p;
}

void MambaMixerImpl::initialise(at::Generator& gen)
{
    torch::NoGradGuard noGrad;
    for (auto* lin : {&m_inProj, &m_xProj, &m_outProj})
        defaultUniformInit((*lin)->weight, nullptr, gen);
    defaultUniformInit(m_conv->weight, &m_conv->bias, gen);
    const double dtStd = std::pow(m_s.dtRank, -0.5);
    m_dtProj->weight.uniform_(-dtStd, dtStd, gen);
    // dt ~ exp(U(ln 1e-3, ln 1e-1)), clamped >= 1e-4; bias = softplus^-1(dt) = dt +
    // ln(-expm1(-dt)).
    auto dt = torch::exp(torch::rand({m_s.inner}, gen, torch::kFloat32) *
                             (std::log(0.1) - std::log(1e-3)) +
                         std::log(1e-3))
                  .clamp_min(1e-4);
    m_dtProj->bias.copy_(dt + torch::log(-torch::expm1(-dt)));
    m_aLog.copy_(torch::log(torch::arange(1, m_s.state + 1, torch::kFloat32))
                     .unsqueeze(0)
                     .expand({m_s.inner, m_s.state}));
    m_d.fill_(1.0);
}

MambaBlockImpl::MambaBlockImpl(const MambaSizes& s)
{
    m_norm = register_module("norm", RmsNorm(s.hidden, s.eps));
    m_mixer = register_module("mixer", MambaMixer(s));
}

torch::Tensor MambaBlockImpl::forward(const torch::Tensor& h, double dtScale,
                                      const KernelPolicy& policy)
{
    if (dtScale == 1.0 && fusedApplies(policy, h)) {  // training on the CPU: one node for the block
        FusedMambaParams p = m_mixer->fusedParams();
        p.norm = m_norm->weight();
        p.eps = m_norm->eps();
        return fusedMambaBlock(h, p, policy.context());
    }
    return h + m_mixer->forward(m_norm(h, policy.fusesOnDevice(h)), dtScale, policy);
}

MambaImpl::MambaImpl(const MambaSizes& sizes, int layers)
{
    m_layers = register_module("layers", torch::nn::ModuleList());
    for (int i = 0; i < layers; ++i) {
        m_blocks.push_back(MambaBlock(sizes));
        m_layers->push_back(m_blocks.back());
    }
    m_norm = register_module("norm_f", RmsNorm(sizes.hidden, sizes.eps));
}

torch::Tensor MambaImpl::forward(const torch::Tensor& h, const PositionSpan&, AttentionTap* tap)
{
    const auto* edit = tap ? tap->edit : nullptr;
    const double dtScale = edit && edit->kind == Intervention::Kind::MambaDt ? edit->factor : 1.0;
    auto x = h;
    for (auto& block : m_blocks)
        x = block->forward(x, dtScale, m_policy);
    return m_norm(x, m_policy.fusesOnDevice(x));
}

void MambaImpl::initialise(at::Generator& gen)
{
    for (auto& block : m_blocks)
        block->mixer()->initialise(gen);
    // RMSNorm weights are created as ones.
}

}  // namespace lengen::engine::model
