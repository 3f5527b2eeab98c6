#pragma once
// T5's relative position bias (Raffel et al. 2020, §2.1; the bucketing of Mesh TensorFlow as
// transformers' T5Attention._relative_position_bucket writes it), causal: a learned scalar per
// head and bucket of the distance n = max(i - j, 0) between query i and key j, added to the
// scaled logits. Buckets 0..B/2-1 hold one distance each; the other B/2 split distances
// B/2..max_distance logarithmically, and every farther distance shares the last bucket:
//   bucket(n) = n                                                  for n < B/2
//             = min(B/2 + floor(ln(n / (B/2)) / ln(D / (B/2)) * B/2), B - 1)  otherwise.
// Parameter under self_attn.rotary_emb: relative_attention_bias.weight [B, heads], one table
// per layer (T5 shares one across layers; here each layer learns its own, as FIRE's MLP).

#include "model/position_encoding.h"

namespace lengen::engine::model {

class T5BiasImpl : public PositionEncodingImpl {
public:
    T5BiasImpl(int numHeads, int numBuckets, int maxDistance);
    /// [heads, Tq, Tk]: the table's row of each distance's bucket (gradients reach the table).
    torch::Tensor logitBias(const PositionSpan& pos) override;
    std::map<std::string, std::vector<double>> constants() const override;
    /// Bucket of each distance 0..maxDistance-1 of `n` (int64 [...], n >= 0), as above.
    static torch::Tensor buckets(const torch::Tensor& n, int numBuckets, int maxDistance);

private:
    int m_buckets, m_maxDistance;
    torch::Tensor m_table;  // [buckets, heads]
};

}  // namespace lengen::engine::model
