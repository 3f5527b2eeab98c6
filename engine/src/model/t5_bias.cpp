#include "model/t5_bias.h"

#include <cmath>

namespace lengen::engine::model {

T5BiasImpl::T5BiasImpl(int numHeads, int numBuckets, int maxDistance)
    : m_buckets(numBuckets), m_maxDistance(maxDistance)
{
    auto table =
        register_module("relative_attention_bias", torch::nn::Embedding(numBuckets, numHeads));
    m_table = table->weight;
}

torch::Tensor T5BiasImpl::buckets(const torch::Tensor& n, int numBuckets, int maxDistance)
{
    const std::int64_t exact = numBuckets / 2;
    // The same float32 operations in the same order as transformers, so the bucket of every
    // distance matches it exactly (a distance below `exact` never reads its log: clamped).
    auto large = (torch::log(n.clamp_min(exact).to(torch::kFloat32) / double(exact)) /
                  std::log(double(maxDistance) / double(exact)) * double(numBuckets - exact))
                     .to(torch::kLong) +
                 exact;
    large = large.clamp_max(numBuckets - 1);
    return torch::where(n < exact, n, large);
}

torch::Tensor T5BiasImpl::logitBias(const PositionSpan& pos)
{
    // The bias depends on i - j only: one row of the table per distance 0..maxPos, then a
    // gather by each (query, key) pair's distance.
    const auto distances = torch::arange(pos.maxPos + 1, pos.q.options());  // [D]
    const auto perDistance =
        m_table.index_select(0, buckets(distances, m_buckets, m_maxDistance));  // [D, heads]
    const auto n = pos.distances();                                             // [Tq, Tk]
    const auto tq = pos.q.size(0), tk = pos.k.size(0);
    return perDistance.index_select(0, n.reshape({-1}))
        .view({tq, tk, -1})
        .permute({2, 0, 1});  // [heads, Tq, Tk]
}

std::map<std::string, std::vector<double>> T5BiasImpl::constants() const
{
    return {{"num_buckets", {double(m_buckets)}}, {"max_distance", {double(m_maxDistance)}}};
}

}  // namespace lengen::engine::model
