#pragma once
// Causal multi-head self-attention without biases (Llama, reference §3.3), with a pluggable
// position encoding, and the causal attention kernel that every attention backbone shares.
// Evaluation at long lengths computes scores a block of query rows at a time (AttentionTap) so
// that the [B, heads, T, T] score tensor is never materialised whole.

#include <torch/torch.h>

#include <functional>

#include "model/kernel_policy.h"
#include "model/position_encoding.h"

namespace lengen::engine::model {

/// How attention is computed and what of it is kept, for one forward (evaluation and probes;
/// training passes none). Results are identical with and without chunking.
struct AttentionTap {
    std::int64_t queryChunk = 0;  ///< query rows per score block; 0 = all rows at once
    bool capture = false;         ///< keep the post-softmax weights of every layer
    /// Query rows to keep when capturing, int64 [R] ascending (CPU); undefined = all T rows.
    torch::Tensor rows;
    /// Type the captured weights are kept in (float16 halves the memory of full maps).
    torch::ScalarType captureType = torch::kFloat32;
    /// Per layer [B, heads, R, T] (zeros right of the diagonal), filled when capturing.
    std::vector<torch::Tensor> weights;
    /// An evaluation-time intervention on the forward (docs/interventions.md); none in training.
    const Intervention* edit = nullptr;
};

/// Additive logit bias for query rows [r0, r1) over keys [0, r1): [heads|1, r1-r0, r1], or an
/// undefined tensor for none.
using RowBias = std::function<torch::Tensor(std::int64_t r0, std::int64_t r1)>;

/// Changes the logits (scaled scores plus bias, before the causal mask) of query rows
/// [r0, r1) over keys [0, r1), [B, heads, r1-r0, r1]: the mask interventions (window, Λ) and
/// logit scaling. Masked entries are -inf.
using ScoreEdit =
    std::function<torch::Tensor(const torch::Tensor& logits, std::int64_t r0, std::int64_t r1)>;

/// softmax(q k^T * scale + bias + causal) v for q, k, v [B, heads, T, d] over one span (queries
/// and keys are the same T positions). `onProbs` may transform the probabilities before they
/// weight v (GPT-2's attention dropout); it is only called on the unchunked path. The [T, T]
/// mask is cached per thread. `path` Device on a GPU: LibTorch's fused attention where nothing
/// is captured, edited or dropped. Returns [B, heads, T, d].
torch::Tensor attendCausal(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                           double scale, const RowBias& bias, AttentionTap* tap, LayerPath path,
                           const std::function<torch::Tensor(const torch::Tensor&)>& onProbs = {},
                           const ScoreEdit& scoreEdit = {});

class AttentionImpl : public torch::nn::Module {
public:
    AttentionImpl(int hidden, int heads, PositionEncoding pe);
    /// x [B, T, H] -> [B, T, H]. With a capturing tap, appends this layer's weights to it.
    /// `deviceRotary`: rotary embedding through LenGen's device kernel where it applies
    /// (KernelPolicy::deviceRotary).
    torch::Tensor forward(const torch::Tensor& x, const PositionSpan& pos, AttentionTap* tap,
                          LayerPath path, bool deviceRotary = false);
    PositionEncoding positionEncoding() const { return m_pe; }
    int heads() const { return m_heads; }
    /// Projection weights [H, H] (out, in), for the fused layer.
    const torch::Tensor& qWeight() const { return m_q->weight; }
    const torch::Tensor& kWeight() const { return m_k->weight; }
    const torch::Tensor& vWeight() const { return m_v->weight; }
    const torch::Tensor& oWeight() const { return m_o->weight; }

private:
    // q, k rotated by device::rotaryPair where it applies (true); untouched otherwise.
    bool rotateOnDevice(torch::Tensor& q, torch::Tensor& k, const PositionSpan& pos);
    // The intervention's score edit for this forward (empty when it changes nothing here).
    ScoreEdit scoreEditFor(const Intervention& edit, const torch::Tensor& q0,
                           const torch::Tensor& k, const PositionSpan& pos);
    // LongHeads (attention_edits.cpp): per head, the first chunk, the query's own and the
    // best-matching chunks up to the budget, re-positioned within it (positions 0..budget-1,
    // whatever the forward's own were). q0, k0 unrotated.
    torch::Tensor attendLongHeads(const torch::Tensor& q0, const torch::Tensor& k0,
                                  const torch::Tensor& v, const Intervention& edit,
                                  AttentionTap* tap);
    int m_heads;
    int m_headDim;
    double m_scale;
    torch::nn::Linear m_q{nullptr}, m_k{nullptr}, m_v{nullptr}, m_o{nullptr};
    PositionEncoding m_pe{nullptr};
};
TORCH_MODULE(Attention);

}  // namespace lengen::engine::model
