#include "model/gpt2.h"

#include <cmath>
#include <limits>
#include <mutex>

#include "lengen/engine/errors.h"
#include "model/attention.h"
#include "model/fused_layer.h"
#include "model/small_bmm.h"

namespace lengen::engine::model {

Conv1DImpl::Conv1DImpl(int in, int out)
{
    m_weight = register_parameter("weight", torch::empty({in, out}));
    m_bias = register_parameter("bias", torch::zeros({out}));
}

torch::Tensor Conv1DImpl::forward(const torch::Tensor& x)
{
    auto flat = x.reshape({-1, x.size(-1)});
    auto out = torch::addmm(m_bias, flat, m_weight);
    auto shape = x.sizes().vec();
    shape.back() = m_weight.size(1);
    return out.view(shape);
}

class Gpt2BlockImpl : public torch::nn::Module {
public:
    Gpt2BlockImpl(const Gpt2Sizes& s, Gpt2Impl* owner) : m_s(s), m_owner(owner)
    {
        auto ln = [&] {
            return torch::nn::LayerNorm(torch::nn::LayerNormOptions({s.hidden}).eps(1e-5));
        };
        m_ln1 = register_module("ln_1", ln());
        auto attn = register_module("attn", std::make_shared<torch::nn::Module>());
        m_cAttn = attn->register_module("c_attn", Conv1D(s.hidden, 3 * s.hidden));
        m_attnProj = attn->register_module("c_proj", Conv1D(s.hidden, s.hidden));
        m_ln2 = register_module("ln_2", ln());
        auto mlp = register_module("mlp", std::make_shared<torch::nn::Module>());
        m_fc = mlp->register_module("c_fc", Conv1D(s.hidden, 4 * s.hidden));
        m_mlpProj = mlp->register_module("c_proj", Conv1D(4 * s.hidden, s.hidden));
    }

    /// Training on the CPU without dropout: the block as one autograd node, same math.
    bool fusedFor(const torch::Tensor& h) const
    {
        return fusedApplies(m_owner->kernelPolicy(), h) && !m_owner->dropsOut(m_s.attnDropout) &&
               !m_owner->dropsOut(m_s.residDropout);
    }

    /// evenRowsOut (where fusedFor): rows 0, 2, 4, ... only, [B, T/2, H] (fused_layer.h).
    torch::Tensor forward(const torch::Tensor& h, AttentionTap* tap, bool evenRowsOut = false)
    {
        const KernelPolicy& policy = m_owner->kernelPolicy();
        if ((!tap && fusedFor(h)) || evenRowsOut) {
            FusedGpt2Params p;
            p.ln1Weight = m_ln1->weight;
            p.ln1Bias = m_ln1->bias;
            p.attnWeight = m_cAttn->weight();
            p.attnBias = m_cAttn->bias();
            p.projWeight = m_attnProj->weight();
            p.projBias = m_attnProj->bias();
            p.ln2Weight = m_ln2->weight;
            p.ln2Bias = m_ln2->bias;
            p.fcWeight = m_fc->weight();
            p.fcBias = m_fc->bias();
            p.mlpProjWeight = m_mlpProj->weight();
            p.mlpProjBias = m_mlpProj->bias();
            p.heads = m_s.heads;
            p.eps = 1e-5;
            p.evenRowsOut = evenRowsOut;
            return fusedGpt2Block(h, p, policy.context());
        }
        const std::int64_t b = h.size(0), t = h.size(1), d = m_s.hidden / m_s.heads;
        auto qkv = m_cAttn(m_ln1(h)).view({b, t, 3, m_s.heads, d}).permute({2, 0, 3, 1, 4});
        auto dropout = [&](const torch::Tensor& p) { return m_owner->dropout(p, m_s.attnDropout); };
        auto attn = attendCausal(qkv[0], qkv[1], qkv[2], 1.0 / std::sqrt(double(d)), {}, tap,
                                 policy.path, dropout)  // [B, heads, T, d]
                        .transpose(1, 2)
                        .reshape({b, t, m_s.hidden});
        auto x = h + m_owner->dropout(m_attnProj(attn), m_s.residDropout);
        auto mlp = m_mlpProj(torch::gelu(m_fc(m_ln2(x)), "tanh"));
        return x + m_owner->dropout(mlp, m_s.residDropout);
    }

private:
    Gpt2Sizes m_s;
    Gpt2Impl* m_owner;
    torch::nn::LayerNorm m_ln1{nullptr}, m_ln2{nullptr};
    Conv1D m_cAttn{nullptr}, m_attnProj{nullptr}, m_fc{nullptr}, m_mlpProj{nullptr};
};

Gpt2Impl::Gpt2Impl(const Gpt2Sizes& s) : m_sizes(s)
{
    m_wpe = register_module("wpe", torch::nn::Embedding(s.positions, s.hidden));
    m_h = register_module("h", torch::nn::ModuleList());
    for (int i = 0; i < s.layers; ++i) {
        m_blocks.push_back(std::make_shared<Gpt2BlockImpl>(s, this));
        m_h->push_back(m_blocks.back());
    }
    m_lnF = register_module(
        "ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({s.hidden}).eps(1e-5)));
}

torch::Tensor Gpt2Impl::dropout(const torch::Tensor& x, double p)
{
    if (!is_training() || p <= 0 || !m_gen.defined())
        return x;
    if (x.is_cuda()) {
        // Drawing on the CPU and copying made a GPT-2 step on an H200 57x slower than PyTorch:
        // the attention masks alone are [B, heads, T, T] per layer (docs/gpu.md). The mask is
        // drawn on the device from its generator, seeded per step (seedDeviceDropout). The
        // draw takes the generator's own mutex; this holds no lock of its own, so that a CUDA
        // graph's capture records it as it is.
        auto keep = torch::empty_like(x);  // 0/1 are exact in x's dtype (bf16 included)
        keep.bernoulli_(1.0 - p, at::globalContext().defaultGenerator(x.device()));
        return x * keep / (1.0 - p);
    }
    auto keep = torch::bernoulli(torch::full(x.sizes(), 1.0 - p, torch::kFloat32), m_gen);
    return x * keep.to(x.device()) / (1.0 - p);
}

std::unique_lock<std::mutex> Gpt2Impl::seedDeviceDropout(const torch::Device& device)
{
    const bool drops = dropsOut(m_sizes.residDropout) || dropsOut(m_sizes.embdDropout) ||
                       dropsOut(m_sizes.attnDropout);
    if (!device.is_cuda() || !drops)
        return {};
    // The device's generator is the process's: two sessions' seed-then-draw steps stay apart.
    static std::mutex seeding;
    std::unique_lock<std::mutex> step(seeding);
    const auto seed =
        torch::randint(std::int64_t(1) << 62, {1}, m_gen, torch::kLong).item<std::int64_t>();
    auto deviceGen = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(deviceGen.mutex());
    deviceGen.set_current_seed(static_cast<std::uint64_t>(seed));  // its offset back to 0
    return step;
}

torch::Tensor Gpt2Impl::forward(const torch::Tensor& h, const PositionSpan& pos, AttentionTap* tap)
{
    if (pos.maxPos >= m_sizes.positions)
        throw Error(ErrorKind::Runtime,
                    "GPT-2 has learned positions for " + std::to_string(m_sizes.positions) +
                        " tokens; this prompt needs " + std::to_string(pos.maxPos + 1) +
                        " (raise model.max_length)");
    auto x = dropout(h + m_wpe(pos.q).unsqueeze(0), m_sizes.embdDropout);
    for (auto& block : m_blocks)
        x = block->forward(x, tap);
    return m_lnF(x);
}

torch::Tensor Gpt2Impl::forwardEvenRows(const torch::Tensor& h, const PositionSpan& pos)
{
    // The blocks' input: h plus the learned positions (dropout off, as the fused path needs).
    if (m_blocks.empty() || h.dim() != 3 || h.size(1) % 2 != 0 || pos.maxPos >= m_sizes.positions ||
        dropsOut(m_sizes.embdDropout) || !m_blocks.back()->fusedFor(h))
        return {};
    auto x = h + m_wpe(pos.q).unsqueeze(0);
    for (size_t i = 0; i + 1 < m_blocks.size(); ++i)
        x = m_blocks[i]->forward(x, nullptr);
    return m_lnF(m_blocks.back()->forward(x, nullptr, true));
}

}  // namespace lengen::engine::model
