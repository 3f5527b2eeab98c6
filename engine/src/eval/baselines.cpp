#include "eval/baselines.h"

#include <algorithm>
#include <cmath>

#include "lengen/engine/errors.h"

namespace lengen::engine::eval {

namespace {

constexpr double kGramBudgetBytes = 128.0 * 1024 * 1024;  // [prompts, N, D, D] doubles at once
constexpr double kRankCut = 1e-10;  // eigenvalue / pivot^2 ratio treated as rank deficient

// Exclusive prefix sums along points: out[:, i] = sum_{j<i} v[:, j].
torch::Tensor exclusiveCumsum(const torch::Tensor& v) { return v.cumsum(1) - v; }

}  // namespace

torch::Tensor leastSquares(const torch::Tensor& xs, const torch::Tensor& ys)
{
    auto x = xs.to(torch::kFloat64), y = ys.to(torch::kFloat64);  // [B, N, D], [B, N]
    const auto b = x.size(0), n = x.size(1), d = x.size(2);
    auto pred = torch::zeros({b, n}, torch::kFloat64);
    if (n < 2)
        return pred.to(torch::kFloat32);
    const auto chunk = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(kGramBudgetBytes / (double(n) * d * d * 8)));
    for (std::int64_t b0 = 0; b0 < b; b0 += chunk) {
        const auto b1 = std::min(b, b0 + chunk);
        auto xc = x.slice(0, b0, b1), yc = y.slice(0, b0, b1);
        auto gram = exclusiveCumsum(xc.unsqueeze(-1) * xc.unsqueeze(-2));  // [Bc, N, D, D]
        auto rhs = exclusiveCumsum(xc * yc.unsqueeze(-1));                 // [Bc, N, D]
        // Positions 1..N-1 as one batch of M = Bc * (N - 1) systems G w = r.
        auto g = gram.slice(1, 1).reshape({-1, d, d});
        auto r = rhs.slice(1, 1).reshape({-1, d, 1});
        auto xq = x.slice(0, b0, b1).slice(1, 1).reshape({-1, 1, d});
        auto [chol, info] = torch::linalg_cholesky_ex(g);
        auto diag = chol.diagonal(0, -2, -1);  // [M, D]
        auto ratio = (diag.amin(-1) / diag.amax(-1).clamp_min(1e-300)).square();
        auto good = info.eq(0) & ratio.gt(kRankCut) & ratio.isfinite();
        auto w = torch::zeros({g.size(0), d, 1}, torch::kFloat64);
        auto goodIdx = good.nonzero().squeeze(1), badIdx = good.logical_not().nonzero().squeeze(1);
        if (goodIdx.numel() > 0)
            w.index_copy_(
                0, goodIdx,
                torch::cholesky_solve(r.index_select(0, goodIdx), chol.index_select(0, goodIdx)));
        if (badIdx.numel() > 0) {
            auto pinv = torch::linalg_pinv(g.index_select(0, badIdx), c10::nullopt, kRankCut,
                                           /*hermitian=*/true);
            w.index_copy_(0, badIdx, torch::matmul(pinv, r.index_select(0, badIdx)));
        }
        auto p = torch::matmul(xq, w).view({b1 - b0, n - 1});
        pred.slice(0, b0, b1).slice(1, 1).copy_(p);
    }
    return pred.to(torch::kFloat32);
}

torch::Tensor nearestNeighbours(const torch::Tensor& xs, const torch::Tensor& ys, int k)
{
    auto x = xs.to(torch::kFloat64).contiguous(), y = ys.to(torch::kFloat64).contiguous();
    const auto b = x.size(0), n = x.size(1);
    auto pred = torch::zeros({b, n}, torch::kFloat64);
    auto pa = pred.accessor<double, 2>();
    auto ya = y.accessor<double, 2>();
    std::vector<std::pair<double, std::int64_t>> best;  // (distance^2, index), ascending
    for (std::int64_t p = 0; p < b; ++p) {
        auto xp = x[p];                // [N, D]
        auto sq = xp.square().sum(1);  // [N]
        auto d2 = (sq.unsqueeze(1) + sq.unsqueeze(0) - 2 * xp.mm(xp.t())).contiguous();
        auto da = d2.accessor<double, 2>();
        for (std::int64_t i = 1; i < n; ++i) {
            const auto kk = static_cast<size_t>(std::min<std::int64_t>(i, k));
            best.clear();
            for (std::int64_t j = 0; j < i; ++j) {
                const double dist = da[i][j];
                if (best.size() == kk && !(dist < best.back().first))
                    continue;  // strictly closer only: the earlier of two equal points stays
                auto at = std::upper_bound(best.begin(), best.end(), dist,
                                           [](double v, const auto& e) { return v < e.first; });
                best.insert(at, {dist, j});
                if (best.size() > kk)
                    best.pop_back();
            }
            double sum = 0;
            for (const auto& e : best)
                sum += ya[p][e.second];
            pa[p][i] = sum / static_cast<double>(best.size());
        }
    }
    return pred.to(torch::kFloat32);
}

torch::Tensor averaging(const torch::Tensor& xs, const torch::Tensor& ys)
{
    auto x = xs.to(torch::kFloat64), y = ys.to(torch::kFloat64);
    const auto n = x.size(1);
    auto sums = exclusiveCumsum(x * y.unsqueeze(-1));  // [B, N, D]
    auto counts = torch::arange(n, torch::kFloat64).clamp_min(1).view({1, n, 1});
    return ((sums / counts) * x).sum(-1).to(torch::kFloat32);  // [B, N]
}

torch::Tensor lasso(const torch::Tensor& xs, const torch::Tensor& ys, const LassoOptions& o,
                    std::int64_t& unconverged)
{
    auto x = xs.to(torch::kFloat64).contiguous(), y = ys.to(torch::kFloat64).contiguous();
    const auto b = x.size(0), n = x.size(1), d = x.size(2);
    auto pred = torch::zeros({b, n}, torch::kFloat64);
    auto xa = x.accessor<double, 3>();
    auto ya = y.accessor<double, 2>();
    auto pa = pred.accessor<double, 2>();
    const auto du = static_cast<size_t>(d);
    std::vector<double> h(du * du), q(du), w(du), hw(du);
    for (std::int64_t p = 0; p < b; ++p) {
        std::fill(h.begin(), h.end(), 0.0);
        std::fill(q.begin(), q.end(), 0.0);
        std::fill(w.begin(), w.end(), 0.0);
        double yy = 0;
        for (std::int64_t i = 1; i < n; ++i) {
            // Add point i-1 to the Gram statistics H = X^T X, q = X^T y.
            for (size_t r = 0; r < du; ++r) {
                q[r] += ya[p][i - 1] * xa[p][i - 1][r];
                for (size_t c = 0; c < du; ++c)
                    h[r * du + c] += xa[p][i - 1][r] * xa[p][i - 1][c];
            }
            yy += ya[p][i - 1] * ya[p][i - 1];
            for (size_t r = 0; r < du; ++r) {
                hw[r] = 0;
                for (size_t c = 0; c < du; ++c)
                    hw[r] += h[r * du + c] * w[c];
            }
            // scikit-learn scales the problem to 0.5||y - Xw||^2 + (alpha n)||w||_1.
            const double alphaN = o.alpha * static_cast<double>(i);
            bool converged = false;
            for (int iter = 0; iter < o.maxIter && !converged; ++iter) {
                double wMax = 0, dwMax = 0;
                for (size_t c = 0; c < du; ++c) {
                    const double hcc = h[c * du + c];
                    if (hcc == 0)
                        continue;
                    const double old = w[c];
                    const double tmp = q[c] - hw[c] + hcc * old;
                    const double nw =
                        std::copysign(std::max(std::abs(tmp) - alphaN, 0.0), tmp) / hcc;
                    if (nw != old) {
                        for (size_t r = 0; r < du; ++r)
                            hw[r] += (nw - old) * h[r * du + c];
                        w[c] = nw;
                    }
                    dwMax = std::max(dwMax, std::abs(nw - old));
                    wMax = std::max(wMax, std::abs(nw));
                }
                if (!(wMax == 0 || dwMax / wMax < o.tol || iter == o.maxIter - 1))
                    continue;
                // Duality gap of the Gram formulation (scikit-learn's enet_..._gram).
                double qw = 0, whw = 0, dual = 0, l1 = 0;
                for (size_t c = 0; c < du; ++c) {
                    qw += q[c] * w[c];
                    whw += w[c] * hw[c];
                    dual = std::max(dual, std::abs(q[c] - hw[c]));
                    l1 += std::abs(w[c]);
                }
                const double rNorm2 = std::max(yy + whw - 2 * qw, 0.0);
                double gap = rNorm2, scale = 1;
                if (dual > alphaN) {
                    scale = alphaN / dual;
                    gap = 0.5 * (rNorm2 + rNorm2 * scale * scale);
                }
                gap += alphaN * l1 - scale * yy + scale * qw;
                converged = gap <= o.tol * yy;
            }
            if (!converged)
                ++unconverged;
            double s = 0;
            for (size_t c = 0; c < du; ++c)
                s += xa[p][i][c] * w[c];
            pa[p][i] = s;
        }
    }
    return pred.to(torch::kFloat32);
}

torch::Tensor nullClassifier(const torch::Tensor& ys) { return torch::full_like(ys, -1.0); }

std::vector<BaselineSpec> baselinesFor(const std::string& task)
{
    const BaselineSpec ols{"OLS_driver=None", "Least Squares"};
    const BaselineSpec nn3{"NN_n=3_uniform", "3-Nearest Neighbors"};
    const BaselineSpec nn1{"NN_n=1_uniform", "1-Nearest Neighbors"};
    const BaselineSpec avg{"averaging", "Averaging"};
    const BaselineSpec las{"lasso_alpha=0.01_max_iter=100000", "Lasso"};
    const BaselineSpec nul{"nullclassifier", "Null classifier"};
    if (task == "linear_regression" || task == "noisy_linear_regression")
        return {ols, nn3, avg};
    if (task == "sparse_linear_regression")
        return {ols, nn3, avg, las};
    if (task == "conjunction" || task == "disjunction" || task == "majority")
        return {nn1, avg, nul};
    if (task == "cnf" || task == "dnf" || task == "int_halfspace" || task == "parity" ||
        task == "sparse_disjunction" || task == "sparse_parity" || task == "sparse_thres")
        return {nn3, avg, nul};
    return {};
}

torch::Tensor runBaseline(const std::string& key, const torch::Tensor& xs, const torch::Tensor& ys,
                          std::int64_t& lassoUnconverged)
{
    if (key == "OLS_driver=None")
        return leastSquares(xs, ys);
    if (key == "NN_n=3_uniform")
        return nearestNeighbours(xs, ys, 3);
    if (key == "NN_n=1_uniform")
        return nearestNeighbours(xs, ys, 1);
    if (key == "averaging")
        return averaging(xs, ys);
    if (key == "lasso_alpha=0.01_max_iter=100000")
        return lasso(xs, ys, LassoOptions{}, lassoUnconverged);
    if (key == "nullclassifier")
        return nullClassifier(ys);
    throw Error(ErrorKind::Internal, "unknown baseline '" + key + "'");
}

}  // namespace lengen::engine::eval
