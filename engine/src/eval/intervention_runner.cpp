// The forward under an intervention. Forward-level ones go to the model; truncate and
// segments turn each long prompt into prompts no longer than the training length (positions
// restart at 0 in each), run them in micro-batches and read one prediction from each.

#include <algorithm>
#include <map>

#include "eval/interventions.h"
#include "lengen/engine/hash.h"
#include "train/train_loop.h"

namespace lengen::engine::eval {

namespace {

// Predictions [B', P'] for prompts that are all of one length, micro-batched for the budget.
torch::Tensor predictShort(LoadedRun& run, const torch::Tensor& xs, const torch::Tensor& ys,
                           double budgetBytes)
{
    const auto plan =
        planForward(run.config, xs.size(0), 2 * xs.size(1), budgetBytes, run.device.is_cuda());
    return predict(run, xs, ys, plan);
}

// truncate: the prediction at example k >= P reads the window of examples k-P+1..k (its own
// x last), the first P from the prompt's first P examples. [B, N] in, [B, N] out.
torch::Tensor truncated(LoadedRun& run, const torch::Tensor& xs, const torch::Tensor& ys,
                        std::int64_t p, double budget)
{
    const auto b = xs.size(0), n = xs.size(1), d = xs.size(2);
    auto head = predictShort(run, xs.slice(1, 0, p), ys.slice(1, 0, p), budget);  // [B, P]
    // Windows starting at 1..N-P: unfold gives [B, N-P+1, D, P] (x) and [B, N-P+1, P] (y).
    auto wx = xs.unfold(1, p, 1).slice(1, 1).permute({0, 1, 3, 2}).reshape({b * (n - p), p, d});
    auto wy = ys.unfold(1, p, 1).slice(1, 1).reshape({b * (n - p), p});
    auto tail = predictShort(run, wx, wy, budget).select(1, p - 1).view({b, n - p});
    return torch::cat({head, tail}, 1);
}

// segments: the k >= P earlier examples of query k are cut into ceil(k / (P-1)) contiguous
// chunks of near-equal size (earlier chunks one longer); each chunk followed by x_k is one
// prompt; the predictions are averaged (mean, or weighted by chunk size).
torch::Tensor segmented(LoadedRun& run, const torch::Tensor& xs, const torch::Tensor& ys,
                        std::int64_t p, bool bySize, double budget)
{
    const auto b = xs.size(0), n = xs.size(1), d = xs.size(2);
    auto head = predictShort(run, xs.slice(1, 0, p), ys.slice(1, 0, p), budget);  // [B, P]
    const std::int64_t c = p - 1;
    // Per chunk length L: the example indices of each (chunk, query) prompt, [L+1] each, the
    // query's column and its weight.
    struct Group {
        std::vector<std::int64_t> indices, query;
        std::vector<float> weight;
    };
    std::map<std::int64_t, Group> groups;
    for (std::int64_t k = p; k < n; ++k) {
        const std::int64_t m = (k + c - 1) / c, base = k / m, rem = k % m;
        std::int64_t a = 0;
        for (std::int64_t i = 0; i < m; ++i) {
            const std::int64_t len = base + (i < rem ? 1 : 0);
            auto& g = groups[len];
            for (std::int64_t e = a; e < a + len; ++e)
                g.indices.push_back(e);
            g.indices.push_back(k);
            g.query.push_back(k - p);
            g.weight.push_back(bySize ? float(len) / float(k) : 1.0f / float(m));
            a += len;
        }
    }
    auto sum = torch::zeros({b, n - p}, torch::kFloat32);
    for (auto& [len, g] : groups) {
        const auto count = static_cast<std::int64_t>(g.query.size());
        auto idx = torch::tensor(g.indices, torch::kLong);  // [count*(L+1)]
        auto gx = xs.index_select(1, idx).view({b * count, len + 1, d});
        auto gy = ys.index_select(1, idx).view({b * count, len + 1});
        auto pred = predictShort(run, gx, gy, budget).select(1, len).view({b, count});
        auto w = torch::tensor(g.weight, torch::kFloat32).view({1, count});
        sum.index_add_(1, torch::tensor(g.query, torch::kLong), pred * w);
    }
    return torch::cat({head, sum}, 1);
}

// random_positions: each prompt read at its own sorted random subset of 0..range-1, as
// randomized training draws them (Ruoss et al. 2023; the authors' code draws at test time too);
// one forward per prompt (positions are per forward).
torch::Tensor randomPositioned(LoadedRun& run, const torch::Tensor& xs, const torch::Tensor& ys,
                               std::int64_t range, std::uint64_t seed)
{
    torch::NoGradGuard noGrad;
    std::vector<torch::Tensor> out;
    for (std::int64_t i = 0; i < xs.size(0); ++i) {
        const auto x = xs.slice(0, i, i + 1), y = ys.slice(0, i, i + 1);  // [1, N, D], [1, N]
        model::ForwardOptions opt;
        opt.positions = promptPositions(x, y, range, seed);
        out.push_back(run.model->forward(x.to(run.device), y.to(run.device), opt)
                          .predictions.to(torch::kCPU));
    }
    return torch::cat(out, 0);
}

}  // namespace

torch::Tensor promptPositions(const torch::Tensor& x, const torch::Tensor& y, std::int64_t range,
                              std::uint64_t seed)
{
    const auto xc = x.to(torch::kCPU, torch::kFloat32).contiguous();  // [1, N, D]
    const auto yc = y.to(torch::kCPU, torch::kFloat32).contiguous();  // [1, N]
    std::uint64_t h =
        kFnv1aOffset ^ (seed * 0x9E3779B97F4A7C15ULL);  // the seed mixed into the basis
    for (const auto* t : {&xc, &yc})
        h = fnv1a64Bytes(t->data_ptr(), std::size_t(t->numel()) * 4, h);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(h);
    return training::drawPositions(gen, 2 * x.size(1), range);
}

torch::Tensor predictWith(LoadedRun& run, const torch::Tensor& xs, const torch::Tensor& ys,
                          const ForwardPlan& plan, const ResolvedIntervention& edit,
                          double budgetBytes)
{
    using Level = ResolvedIntervention::Level;
    const auto n = xs.size(1);
    switch (edit.level) {
    case Level::Model: return predict(run, xs, ys, plan, &edit.model);
    case Level::Truncate:
        if (n > edit.points)
            return truncated(run, xs, ys, edit.points, budgetBytes);
        break;
    case Level::Segments:
        if (n > edit.points)
            return segmented(run, xs, ys, edit.points, edit.weightBySize, budgetBytes);
        break;
    case Level::Positions:
        if (2 * n < edit.range)  // a prompt that fills the range has one subset: 0..T-1
            return randomPositioned(run, xs, ys, edit.range, edit.seed);
        break;
    case Level::Plain: break;
    }
    return predict(run, xs, ys, plan);
}

}  // namespace lengen::engine::eval
