#include "model/llama.h"

#include "device/device_fused.h"
#include "lengen/engine/config.h"
#include "lengen/engine/encodings.h"
#include "model/fused_layer.h"
#include "torch_compat.h"

namespace lengen::engine::model {

RmsNormImpl::RmsNormImpl(int hidden, double eps) : m_eps(eps)
{
    m_weight = register_parameter("weight", torch::ones({hidden}));
}

torch::Tensor RmsNormImpl::forward(const torch::Tensor& x, bool fused)
{
    if (fused)
        return compat::rmsNorm(x, m_weight, m_eps);
    return x * torch::rsqrt(x.square().mean(-1, true) + m_eps) * m_weight;
}

SwiGluImpl::SwiGluImpl(int hidden, int intermediate)
{
    auto linear = [](int in, int out) {
        return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
    };
    m_gate = register_module("gate_proj", linear(hidden, intermediate));
    m_up = register_module("up_proj", linear(hidden, intermediate));
    m_down = register_module("down_proj", linear(intermediate, hidden));
}

torch::Tensor SwiGluImpl::forward(const torch::Tensor& x, bool fused)
{
    if (fused)
        return m_down(device::swiglu(m_gate(x), m_up(x)));
    return m_down(torch::silu(m_gate(x)) * m_up(x));
}

LlamaLayerImpl::LlamaLayerImpl(const RunConfig& config) : m_fusable(encodingOf(config).fusedCpu)
{
    const auto& m = config.model;
    // Registration order mirrors the reference's state dict: self_attn, mlp, norms.
    m_attn = register_module("self_attn",
                             Attention(m.hiddenSize, m.numHeads, makePositionEncoding(config)));
    m_mlp = register_module("mlp", SwiGlu(m.hiddenSize, m.intermediateSize));
    m_inputNorm = register_module("input_layernorm", RmsNorm(m.hiddenSize, m.rmsNormEps));
    m_postNorm = register_module("post_attention_layernorm", RmsNorm(m.hiddenSize, m.rmsNormEps));
}

torch::Tensor LlamaLayerImpl::forward(const torch::Tensor& h, const PositionSpan& pos,
                                      AttentionTap* tap, const KernelPolicy& policy)
{
    const bool fuse = policy.fusesOnDevice(h);
    auto a = m_attn(m_inputNorm(h, fuse), pos, tap, policy.path, fuse && policy.deviceRotary);
    if (fuse && policy.deviceKernels && device::fusedApplies(a)) {
        // The residual add and the norm after it in one kernel each way, SwiGLU's gate too.
        auto [x, n] = device::addRmsNorm(h, a, m_postNorm->weight(), m_postNorm->eps());
        return x + m_mlp(n, true);
    }
    auto x = h + a;
    return x + m_mlp(m_postNorm(x, fuse));
}

bool LlamaLayerImpl::fusedFor(const torch::Tensor& h, const PositionSpan& pos,
                              const KernelPolicy& policy) const
{
    return pos.k.is_same(pos.q) && m_fusable && fusedApplies(policy, h);
}

FusedLayerParams LlamaLayerImpl::fusedParams(const PositionSpan& pos) const
{
    auto pe = m_attn->positionEncoding();
    FusedLayerParams p;
    std::tie(p.cos, p.sin) = pe->rotaryTables(pos);  // [T, d] each, or undefined
    std::tie(p.cosK, p.sinK) = pe->keyTables(pos);   // the keys' own (xPos), or undefined
    p.bias = pe->logitBias(pos);
    p.inputNorm = m_inputNorm->weight();
    p.q = m_attn->qWeight();
    p.k = m_attn->kWeight();
    p.v = m_attn->vWeight();
    p.o = m_attn->oWeight();
    p.postNorm = m_postNorm->weight();
    p.gate = m_mlp->gateWeight();
    p.up = m_mlp->upWeight();
    p.down = m_mlp->downWeight();
    p.heads = m_attn->heads();
    p.eps = m_inputNorm->eps();
    return p;
}

LlamaImpl::LlamaImpl(const RunConfig& config)
{
    m_layers = register_module("layers", torch::nn::ModuleList());
    for (int i = 0; i < config.model.numLayers; ++i) {
        m_layerList.push_back(LlamaLayer(config));
        m_layers->push_back(m_layerList.back());
    }
    m_norm = register_module("norm", RmsNorm(config.model.hiddenSize, config.model.rmsNormEps));
}

PositionEncoding LlamaImpl::positionEncoding(size_t layer) const
{
    return m_layerList.at(layer)->positionEncoding();
}

bool LlamaImpl::fusedFor(const torch::Tensor& h, const PositionSpan& pos) const
{
    for (const auto& layer : m_layerList)
        if (!layer->fusedFor(h, pos, m_policy))
            return false;
    return !m_layerList.empty();
}

torch::Tensor LlamaImpl::fusedStack(const torch::Tensor& h, const PositionSpan& pos,
                                    bool evenRowsOut)
{
    std::vector<FusedLayerParams> params;
    for (const auto& layer : m_layerList)
        params.push_back(layer->fusedParams(pos));
    return fusedLlamaStack(h, params, evenRowsOut, m_policy.context(), m_scratch);
}

torch::Tensor LlamaImpl::forward(const torch::Tensor& h, const PositionSpan& pos, AttentionTap* tap)
{
    // Training on the CPU: the whole stack as one autograd node (fused_layer.h), same math.
    if (!tap && fusedFor(h, pos))
        return m_norm(fusedStack(h, pos, false), false);
    auto x = h;
    for (auto& layer : m_layerList)
        x = layer->forward(x, pos, tap, m_policy);
    return m_norm(x, m_policy.fusesOnDevice(x));
}

torch::Tensor LlamaImpl::forwardEvenRows(const torch::Tensor& h, const PositionSpan& pos)
{
    if (h.dim() != 3 || h.size(1) % 2 != 0 || !fusedFor(h, pos))
        return {};
    return m_norm(fusedStack(h, pos, true), false);
}

}  // namespace lengen::engine::model
