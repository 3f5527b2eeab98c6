#pragma once
// What the fused Llama layer (fused_layer.cpp) and GPT-2 block (fused_gpt2.cpp) share: raw
// pointers of float32 tensors and the token shape of one call.

#include <torch/torch.h>

#include <cmath>

#include "model/cpu_kernels.h"

namespace lengen::engine::model::fused {

inline float* f(const torch::Tensor& t) { return t.data_ptr<float>(); }

/// Sizes of one call on x [B, T, H]. Rows are tokens (b, t): M = B*T; the projection buffer's
/// rows hold [q | k | v], each H wide, head j at columns j*d..j*d+d-1.
struct TokenShape {
    std::int64_t b = 0, t = 0, m = 0;
    int h = 0, heads = 1, d = 0;

    static TokenShape of(const torch::Tensor& x, std::int64_t heads)
    {
        TokenShape s;
        s.b = x.size(0);
        s.t = x.size(1);
        s.m = s.b * s.t;
        s.h = static_cast<int>(x.size(2));
        s.heads = static_cast<int>(heads);
        s.d = s.h / s.heads;
        return s;
    }

    /// Causal attention over the projection buffer with the 1/sqrt(d) logit scale.
    kernels::AttentionShape attention() const
    {
        return {b, static_cast<int>(t), heads, d,
                static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)))};
    }
};

}  // namespace lengen::engine::model::fused
