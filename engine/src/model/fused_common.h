#pragma once
// What the fused Llama stack (fused_layer.cpp), GPT-2 block (fused_gpt2.cpp) and Mamba block
// share: raw pointers of float32 tensors, the token shape of one call, and the batch split that
// runs a node's forward or backward as one slice per thread of the session's KernelContext.
//
// Why split the batch rather than each product: at the quick size (576 x 64 matrices) a
// threaded BLAS product gains nothing, while two halves of the batch, each with its own
// single-threaded products and element-wise passes, run side by side with one wake-up per node
// (the Llama stack: per forward and per backward of all its layers) instead of one per product.
// Weight gradients are summed per part and added in part order, so a result depends on the number
// of threads, never on their timing.

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "model/cpu_kernels.h"
#include "model/kernel_context.h"

namespace lengen::engine::model::fused {

/// A float32 tensor's data, as the kernels take it (the tensor is contiguous and float32).
inline float* floatsOf(const torch::Tensor& t) { return t.data_ptr<float>(); }

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
    kernels::AttentionShape attention() const { return attention(b); }
    /// The same for `items` batch items (one part's).
    kernels::AttentionShape attention(std::int64_t items) const
    {
        return {items, static_cast<int>(t), heads, d,
                static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)))};
    }
};

/// One part of a BatchParts split: batch items [first, first + items), i.e. token rows
/// [row0, row0 + rows) of every [M, width] buffer.
struct BatchPart {
    int index = 0;
    std::int64_t first = 0, items = 0, row0 = 0;
    int rows = 0;

    /// This part's first row of a row-major [M, width] buffer starting at p.
    float* at(float* p, std::int64_t width) const { return p + row0 * width; }
    float* at(const torch::Tensor& t, std::int64_t width) const { return at(floatsOf(t), width); }
    /// The same in a buffer of every step-th row only ([M / step, width]: the rows a layer
    /// keeps with evenRowsOut, fused_layer.h); this part has rows / step of them.
    float* atKept(float* p, std::int64_t width, int step) const { return p + row0 / step * width; }
    float* atKept(const torch::Tensor& t, std::int64_t width, int step) const
    {
        return atKept(floatsOf(t), width, step);
    }
};

/// rows rows of h floats from src (row stride ldSrc) to dst (row stride ldDst): with evenRowsOut
/// (fused_layer.h) the kept rows are taken out of a full buffer (ldSrc = step h) and their
/// gradients put back into one (ldDst = step h).
inline void copyRows(float* dst, std::int64_t ldDst, const float* src, std::int64_t ldSrc, int rows,
                     int h)
{
    if (ldDst == h && ldSrc == h) {
        std::memcpy(dst, src, sizeof(float) * rows * h);
        return;
    }
    for (int r = 0; r < rows; ++r)
        std::memcpy(dst + r * ldDst, src + r * ldSrc, sizeof(float) * h);
}

/// B batch items of T tokens in `count` contiguous parts: a slice per thread of the context
/// (at most B). The kernels a part calls run on its thread over its rows.
struct BatchParts {
    const kernels::KernelContext* context = nullptr;
    std::int64_t batch = 0, tokens = 0;
    int count = 1;

    static BatchParts of(const kernels::KernelContext& context, std::int64_t batch,
                         std::int64_t tokens)
    {
        return {&context, batch, tokens, context.slicesFor(batch)};
    }

    /// fn(BatchPart) for every part, side by side (KernelContext::run: BLAS on one thread).
    template <class Fn>
    void run(Fn&& fn) const
    {
        context->run(count, [&](kernels::Slice sl) {
            const std::int64_t b0 = sl.begin(batch), b1 = sl.end(batch);
            fn(BatchPart{sl.ith, b0, b1 - b0, b0 * tokens, static_cast<int>((b1 - b0) * tokens)});
        });
    }
};

/// What a fused node's backward needs from its forward beyond tensors (its kernel context, the
/// Llama stack's scratch), held by the autograd context: a share of its ownership where it has
/// shared owners, so a graph that outlives its session or model still has it; serial() and
/// contexts on a caller's stack (the kernel tests) are static or outlive their graphs, and are
/// pointed to.
template <class T>
struct Kept final : torch::CustomClassHolder {
    std::shared_ptr<T> owned;
    T* at = nullptr;
};

template <class T>
void keep(torch::autograd::AutogradContext* ctx, const char* key, std::shared_ptr<T> owned, T& at)
{
    auto kept = c10::make_intrusive<Kept<T>>();
    kept->owned = std::move(owned);
    kept->at = &at;
    ctx->saved_data[key] = c10::IValue::make_capsule(std::move(kept));
}

template <class T>
T& kept(torch::autograd::AutogradContext* ctx, const char* key)
{
    auto capsule = ctx->saved_data[key].toCapsule();
    return *static_cast<const Kept<T>*>(capsule.get())->at;
}

/// The context a fused node's forward ran on, kept for its backward.
inline void keepContext(torch::autograd::AutogradContext* ctx, const kernels::KernelContext& c)
{
    keep<const kernels::KernelContext>(ctx, "kernels", c.weak_from_this().lock(), c);
}

inline const kernels::KernelContext& keptContext(torch::autograd::AutogradContext* ctx)
{
    return kept<const kernels::KernelContext>(ctx, "kernels");
}

/// One gradient summed apart by each part ([parts, shape...]), then added in part order.
class PartSums {
public:
    PartSums(int parts, at::IntArrayRef shape, const torch::TensorOptions& opt, bool zeroed)
    {
        std::vector<std::int64_t> full{parts};
        full.insert(full.end(), shape.begin(), shape.end());
        m_all = zeroed ? torch::zeros(full, opt) : torch::empty(full, opt);
        m_n = m_all[0].numel();
    }

    float* at(int part) const { return floatsOf(m_all) + part * m_n; }

    /// The sum over parts, in part 0's slot (a view of it).
    torch::Tensor total() const
    {
        for (std::int64_t p = 1; p < m_all.size(0); ++p)
            kernels::addInPlace(at(0), at(static_cast<int>(p)), m_n);
        return m_all[0];
    }

private:
    torch::Tensor m_all;
    std::int64_t m_n = 0;
};

}  // namespace lengen::engine::model::fused
