#pragma once
// K models of one Llama config computed as one (issue 58: seeds trained as one batched model).
// Every parameter is stacked along a leading member dimension, [K, ...], and the members' own
// models keep their parameters as views into the stack, so that a member's run file, its
// checkpoints and its evaluation see an ordinary model. Activations carry the members along the
// batch dimension, member-major: [K*B, T, H]. A linear layer is one batched product
// ([K, B*T, in] x [K, in, out]); a norm multiplies by its member's weight; attention and the
// position encoding act on [K*B, ...] as on any batch, since the encodings taken here have no
// weights of their own (each member's would be the same table). The math is the module path's
// (kernel_policy.h) op for op, so a member matches its solo run within float rounding.

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "model/icl_model.h"

namespace lengen::engine {
struct RunConfig;
}

namespace lengen::engine::model {

class MemberModel {
public:
    /// Why runs of `config` cannot train as members ("" = they can): the Llama backbone with a
    /// position encoding without weights of its own, at fixed positions.
    static std::string refusal(const RunConfig& config);

    /// `models`: the members' own models, built from `config` on one device and initialised.
    /// Their parameters become views into the stack (the stack starts from their values).
    MemberModel(const RunConfig& config, const std::vector<InContextModel>& models);

    int members() const { return m_members; }
    /// The stacked leaves [K, ...], named and ordered as a solo model's parameters.
    const std::vector<std::pair<std::string, torch::Tensor>>& params() const { return m_params; }
    /// xs [K*B, N, D], ys [K*B, N] (member k's prompts at rows k*B .. k*B+B-1) -> [K*B, N].
    torch::Tensor forward(const torch::Tensor& xs, const torch::Tensor& ys) const;

private:
    const torch::Tensor& param(const std::string& name) const;
    torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& w) const;
    torch::Tensor norm(const torch::Tensor& x, const torch::Tensor& w) const;
    torch::Tensor attention(const torch::Tensor& x, int layer, const PositionSpan& pos) const;

    int m_members = 0, m_layers = 0, m_heads = 0;
    double m_eps = 0;
    std::vector<std::pair<std::string, torch::Tensor>> m_params;
    std::vector<PositionEncoding> m_pe;  // member 0's, one per layer (the members' are equal)
    LayerPath m_path = LayerPath::Module;
};

}  // namespace lengen::engine::model
