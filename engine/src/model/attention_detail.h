#pragma once
// Small tensor steps shared by the attention paths (attention.cpp, attention_edits.cpp) and
// the rotary encoding (position_encoding.cpp); kept out of attention.h so that the files
// including it do not recompile when these change.

#include <torch/torch.h>

namespace lengen::engine::model::detail {

/// rot([x1 | x2]) = [-x2 | x1] on the last dimension (the rotate-half pairing of RoPE).
inline torch::Tensor rotateHalf(const torch::Tensor& x)
{
    const auto half = x.size(-1) / 2;
    return torch::cat({-x.slice(-1, half), x.slice(-1, 0, half)}, -1);
}

/// x*cos + rot(x)*sin for x [B, h, T, d] and tables [T, d]. On a GPU in x's own type (bf16
/// under autocast: the [T, d] tables are cast, instead of q and k promoted to float32 and cast
/// back for the fused attention) and with one addcmul for the product and sum.
/// Pass the tables through tablesLike once for q and k (a no-op cast here then).
inline torch::Tensor applyRotary(const torch::Tensor& x, const torch::Tensor& cos,
                                 const torch::Tensor& sin)
{
    if (!x.is_cuda())
        return x * cos + rotateHalf(x) * sin;
    const auto type = x.scalar_type();
    return torch::addcmul(x * cos.to(type), rotateHalf(x), sin.to(type));
}

/// The (cos, sin) tables [T, d] as applyRotary uses them on x's device: in x's type on a GPU,
/// cast once for both q and k; unchanged on the CPU.
inline std::pair<torch::Tensor, torch::Tensor> tablesLike(const torch::Tensor& x,
                                                          std::pair<torch::Tensor, torch::Tensor> t)
{
    if (x.is_cuda() && t.first.scalar_type() != x.scalar_type())
        return {t.first.to(x.scalar_type()), t.second.to(x.scalar_type())};
    return t;
}

/// Copies the captured rows (`rows`, int64 [R] on the CPU) that fall in [r0, r1) from a block
/// of weights `probs` [B, h, r1-r0, r1] into `kept` [B, h, R, T].
inline void captureRows(torch::Tensor& kept, const torch::Tensor& rows, const torch::Tensor& probs,
                        std::int64_t r0, std::int64_t r1)
{
    auto r = rows.accessor<std::int64_t, 1>();
    for (std::int64_t i = 0; i < r.size(0); ++i) {
        if (r[i] < r0 || r[i] >= r1)
            continue;
        kept.select(2, i).slice(-1, 0, r1).copy_(probs.select(2, r[i] - r0));
    }
}

}  // namespace lengen::engine::model::detail
