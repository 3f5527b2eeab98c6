#include "eval/statistics.h"

#include <cmath>

namespace lengen::engine::eval {

namespace {
std::vector<double> toVector(const torch::Tensor& t)
{
    auto c = t.to(torch::kFloat64).contiguous();
    return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}
}  // namespace

CurveStats aggregate(const torch::Tensor& metric, int trials, at::Generator& gen)
{
    auto m = metric.to(torch::kFloat64);  // [S, N]
    const auto s = m.size(0);
    CurveStats out;
    out.mean = toVector(m.mean(0));
    out.std = s > 1 ? toVector(m.std(0, /*unbiased=*/true))
                    : std::vector<double>(static_cast<size_t>(m.size(1)), 0.0);
    if (trials < 1 || s < 1) {
        out.bootstrapLow = out.bootstrapHigh = out.mean;
        return out;
    }
    // A resample's mean is counts . rows / S, where counts[t, j] is how often row j was drawn:
    // one [trials, S] x [S, N] product instead of gathering trials * S rows.
    auto idx = torch::randint(s, {trials, s}, gen, torch::kInt64);  // [trials, S]
    auto counts = torch::zeros({trials, s}, torch::kFloat64)
                      .scatter_add_(1, idx, torch::ones({trials, s}, torch::kFloat64));
    auto means = std::get<0>(counts.mm(m).div_(double(s)).sort(0));  // [trials, N]
    const auto lo = static_cast<std::int64_t>(std::floor(0.05 * trials));
    const auto hi = static_cast<std::int64_t>(std::floor(0.95 * trials));
    out.bootstrapLow = toVector(means[lo]);
    out.bootstrapHigh = toVector(means[hi]);
    return out;
}

}  // namespace lengen::engine::eval
