#include "model/icl_model.h"

#include <cmath>

#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"
#include "model/kernel_context.h"

namespace lengen::engine::model {

InContextModelImpl::InContextModelImpl(const RunConfig& config)
{
    const auto& m = config.model;
    m_input = register_module(
        "input", torch::nn::Linear(torch::nn::LinearOptions(m.nInDims, m.hiddenSize).bias(false)));
    if (m.backbone == Backbone::Llama) {
        m_llama = std::make_shared<LlamaImpl>(config);
        m_backbone = register_module("transformer", m_llama);
    } else if (m.backbone == Backbone::Mamba) {
        MambaSizes sizes;
        sizes.hidden = m.hiddenSize;
        sizes.state = m.stateSize;
        sizes.inner = 2 * m.hiddenSize;
        sizes.dtRank = (m.hiddenSize + 15) / 16;
        m_mamba = std::make_shared<MambaImpl>(sizes, m.numLayers);
        m_backbone = register_module("backbone", m_mamba);
    } else {
        Gpt2Sizes sizes;
        sizes.hidden = m.hiddenSize;
        sizes.layers = m.numLayers;
        sizes.heads = m.numHeads;
        sizes.positions = m.maxPositionEmbeddings;
        sizes.residDropout = m.residDropout;
        sizes.embdDropout = m.embdDropout;
        sizes.attnDropout = m.attnDropout;
        m_gpt2 = std::make_shared<Gpt2Impl>(sizes);
        m_backbone = register_module("transformer", m_gpt2);
    }
    m_output = register_module(
        "output", torch::nn::Linear(torch::nn::LinearOptions(m.hiddenSize, 1).bias(false)));
}

torch::Tensor InContextModelImpl::interleave(const torch::Tensor& xs, const torch::Tensor& ys)
{
    const auto b = xs.size(0), n = xs.size(1), d = xs.size(2);
    auto yWide = torch::zeros_like(xs);  // [B, N, D]
    yWide.select(2, 0).copy_(ys);
    return torch::stack({xs, yWide}, 2).view({b, 2 * n, d});
}

ForwardResult InContextModelImpl::forward(const torch::Tensor& xs, const torch::Tensor& ys,
                                          const ForwardOptions& options)
{
    kernels::adoptBlasThreads();  // MKL: LibTorch's products here too take the session's count
    auto z = interleave(xs, ys);  // [B, 2N, D]
    const auto t = z.size(1);
    auto pos = options.positions.defined()
                   ? PositionSpan::at(options.positions, z.device())
                   : PositionSpan::contiguous(options.positionOffset, t, z.device());
    ForwardResult result;
    AttentionTap tap;
    tap.queryChunk = options.queryChunk;
    tap.capture = options.returnAttention;
    tap.rows = options.attentionRows;
    tap.captureType = options.attentionType;
    tap.edit = options.intervention && !options.intervention->identityAt(t) ? options.intervention
                                                                            : nullptr;
    const bool useTap = tap.capture || tap.queryChunk > 0 || tap.edit;
    auto in = m_input(z);
    if (!useTap) {
        // Training on the CPU: the last layer computes the x tokens' rows alone.
        if (auto hx = m_backbone->forwardEvenRows(in, pos); hx.defined()) {
            result.predictions = m_output(hx).squeeze(-1);  // [B, N]
            return result;
        }
    }
    auto h = m_backbone->forward(in, pos, useTap ? &tap : nullptr);
    result.attention = std::move(tap.weights);
    auto out = m_output(h).squeeze(-1);          // [B, 2N]
    result.predictions = out.slice(1, 0, t, 2);  // x tokens: [B, N]
    return result;
}

void InContextModelImpl::initialise(at::Generator& gen)
{
    if (m_mamba) {  // HF Mamba does not re-initialise Linear layers (reference §3.4)
        torch::NoGradGuard noGrad;
        defaultUniformInit(m_input->weight, nullptr, gen);
        defaultUniformInit(m_output->weight, nullptr, gen);
        m_mamba->initialise(gen);
        return;
    }
    // HF post_init: every Linear weight N(0, 0.02^2) (FIRE's MLP too), biases 0, norms 1.
    torch::NoGradGuard noGrad;
    for (auto& item : named_parameters()) {
        const std::string& name = item.key();
        auto& p = item.value();
        auto endsWith = [&](const std::string& tail) {
            return name.size() >= tail.size() &&
                   name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
        };
        if (p.dim() == 0)  // FIRE's scalars keep their own initial values
            continue;
        // KERPLE's kernel parameters, as its paper's code draws them: p ~ U(0, 2), a ~ U(0, 1);
        // CoPE's position table starts at zero, as in its paper.
        if (endsWith("rotary_emb.pos_emb"))
            p.zero_();
        else if (endsWith("rotary_emb.bias_p"))
            p.uniform_(0.0, 2.0, gen);
        else if (endsWith("rotary_emb.bias_a"))
            p.uniform_(0.0, 1.0, gen);
        else if (endsWith(".bias"))
            p.zero_();
        else if (p.dim() == 1)  // RMSNorm / LayerNorm weights
            p.fill_(1.0);
        else if (m_gpt2 && endsWith("c_proj.weight"))  // GPT-2's scaled residual projections
            p.normal_(0.0, 0.02 / std::sqrt(2.0 * m_gpt2->layers()), gen);
        else
            p.normal_(0.0, 0.02, gen);
    }
}

void InContextModelImpl::setDropoutGenerator(const at::Generator& gen)
{
    if (m_gpt2)
        m_gpt2->setDropoutGenerator(gen);
}

std::unique_lock<std::mutex> InContextModelImpl::seedDeviceDropout(const torch::Device& device)
{
    return m_gpt2 ? m_gpt2->seedDeviceDropout(device) : std::unique_lock<std::mutex>();
}

std::int64_t InContextModelImpl::parameterCount() const
{
    std::int64_t n = 0;
    for (const auto& p : parameters())
        n += p.numel();
    return n;
}

std::map<std::string, std::vector<double>> InContextModelImpl::positionConstants() const
{
    if (!m_llama)
        return {};
    return m_llama->positionEncoding(0)->constants();
}

InContextModel buildModel(const RunConfig& config) { return InContextModel(config); }

}  // namespace lengen::engine::model
