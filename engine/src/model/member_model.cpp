#include "model/member_model.h"

#include <cmath>

#include "lengen/engine/config.h"
#include "lengen/engine/encodings.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/trainer.h"

namespace lengen::engine::model {

std::string MemberModel::refusal(const RunConfig& config) { return membersRefusal(config); }

MemberModel::MemberModel(const RunConfig& config, const std::vector<InContextModel>& models)
    : m_members(static_cast<int>(models.size())), m_layers(config.model.numLayers),
      m_heads(config.model.numHeads), m_eps(config.model.rmsNormEps)
{
    if (const auto why = refusal(config); !why.empty())
        throw Error(ErrorKind::Config, "members: " + why);
    if (models.empty())
        throw Error(ErrorKind::Usage, "members: no models to stack");
    torch::NoGradGuard noGrad;
    std::vector<std::vector<torch::Tensor>> own;  // [member][parameter]
    for (const auto& m : models) {
        own.emplace_back();
        for (auto& item : m->named_parameters())
            own.back().push_back(item.value());
    }
    const auto first = models.front()->named_parameters();
    for (size_t i = 0; i < first.size(); ++i) {
        std::vector<torch::Tensor> slices;
        for (const auto& member : own)
            slices.push_back(member.at(i).detach());
        auto stacked = torch::stack(slices);  // [K, ...], its own storage
        for (size_t k = 0; k < own.size(); ++k)
            own[k][i].set_data(stacked.select(0, static_cast<std::int64_t>(k)));
        m_params.emplace_back(first[i].key(), stacked.requires_grad_());
    }
    auto llama = models.front()->llamaBackbone();
    for (int l = 0; l < m_layers; ++l)
        m_pe.push_back(llama->positionEncoding(static_cast<size_t>(l)));
    m_path = models.front()->kernelPolicy().path;
    // Every name the forward reads, checked once here rather than at the first step.
    param("input.weight");
    param("output.weight");
    param("transformer.norm.weight");
}

const torch::Tensor& MemberModel::param(const std::string& name) const
{
    for (const auto& [n, t] : m_params)
        if (n == name)
            return t;
    throw Error(ErrorKind::Runtime, "members: the model has no parameter " + name);
}

// x [K*B, T, in], w [K, out, in] -> [K*B, T, out]: member k's rows times its own weight.
torch::Tensor MemberModel::linear(const torch::Tensor& x, const torch::Tensor& w) const
{
    const auto rows = x.size(0), t = x.size(1);
    auto y = torch::bmm(x.reshape({m_members, -1, x.size(2)}), w.transpose(1, 2));
    return y.view({rows, t, w.size(1)});
}

// RMSNorm as the module path writes it, (x * rsqrt(mean(x^2) + eps)) * g, g [K, H].
torch::Tensor MemberModel::norm(const torch::Tensor& x, const torch::Tensor& w) const
{
    auto y = x * torch::rsqrt(x.square().mean(-1, true) + m_eps);  // [K*B, T, H]
    return (y.view({m_members, -1, y.size(2)}) * w.unsqueeze(1)).view(x.sizes());
}

torch::Tensor MemberModel::attention(const torch::Tensor& x, int layer,
                                     const PositionSpan& pos) const
{
    const std::string at = "transformer.layers." + std::to_string(layer) + ".self_attn.";
    const auto b = x.size(0), t = x.size(1), hidden = x.size(2), d = hidden / m_heads;
    auto split = [&](const torch::Tensor& y) {  // [K*B, T, H] -> [K*B, heads, T, d]
        return y.view({b, t, m_heads, d}).transpose(1, 2);
    };
    auto q = split(linear(x, param(at + "q_proj.weight")));
    auto k = split(linear(x, param(at + "k_proj.weight")));
    auto v = split(linear(x, param(at + "v_proj.weight")));
    PositionEncoding pe = m_pe[static_cast<size_t>(layer)];  // a handle: its tables cache
    pe->rotate(q, k, pos);
    RowBias bias = [&](std::int64_t, std::int64_t) { return pe->logitBias(pos); };
    auto out = attendCausal(q, k, v, 1.0 / std::sqrt(double(d)), bias, nullptr, m_path)
                   .transpose(1, 2)
                   .reshape({b, t, hidden});  // [K*B, T, H]
    return linear(out, param(at + "o_proj.weight"));
}

torch::Tensor MemberModel::forward(const torch::Tensor& xs, const torch::Tensor& ys) const
{
    kernels::adoptBlasThreads();
    auto z = InContextModelImpl::interleave(xs, ys);  // [K*B, 2N, D]
    const auto t = z.size(1);
    const auto pos = PositionSpan::contiguous(0, t, z.device());
    auto h = linear(z, param("input.weight"));  // [K*B, T, H]
    for (int l = 0; l < m_layers; ++l) {
        const std::string at = "transformer.layers." + std::to_string(l) + ".";
        h = h + attention(norm(h, param(at + "input_layernorm.weight")), l, pos);
        const auto m = norm(h, param(at + "post_attention_layernorm.weight"));
        const std::string mlp = at + "mlp.";
        h = h + linear(torch::silu(linear(m, param(mlp + "gate_proj.weight"))) *
                           linear(m, param(mlp + "up_proj.weight")),
                       param(mlp + "down_proj.weight"));
    }
    h = norm(h, param("transformer.norm.weight"));
    auto out = linear(h, param("output.weight")).squeeze(-1);  // [K*B, 2N]
    return out.slice(1, 0, t, 2);                              // x tokens: [K*B, N]
}

}  // namespace lengen::engine::model
