#pragma once
// Classical in-context learners the transformer is compared with (reference §6.4). Each one
// predicts point i of a prompt from points 0..i-1 of the same prompt only; the prediction for
// i = 0 is 0 (the null classifier predicts -1 everywhere). All inputs are CPU tensors
// xs [B, N, D] and ys [B, N]; outputs are predictions [B, N] float32. Computed in float64.

#include <torch/torch.h>

#include <string>
#include <vector>

namespace lengen::engine::eval {

/// Minimum-norm least squares (what LAPACK gelsy returns): w = pinv(X_<i) y_<i. Solved through
/// the Gram matrix with a Cholesky factorisation where it is well conditioned, and an
/// eigenvalue pseudo-inverse (relative cut 1e-10) where the prefix is rank deficient
/// (i < D, or inputs confined to a subspace).
torch::Tensor leastSquares(const torch::Tensor& xs, const torch::Tensor& ys);

/// k nearest neighbours by Euclidean distance among the i earlier points (k' = min(i, k)),
/// uniform weights. Ties (frequent on {-1, +1} inputs) go to the earlier point: a stable order,
/// where the reference's was arbitrary.
torch::Tensor nearestNeighbours(const torch::Tensor& xs, const torch::Tensor& ys, int k);

/// w = (1/i) sum_{j<i} y_j x_j, prediction <x_i, w>.
torch::Tensor averaging(const torch::Tensor& xs, const torch::Tensor& ys);

struct LassoOptions {
    double alpha = 0.01;   ///< objective (1/(2n))||y - Xw||^2 + alpha ||w||_1, no intercept
    int maxIter = 100000;  ///< coordinate-descent epochs per fit
    double tol = 1e-4;     ///< duality gap < tol * ||y||^2 (scikit-learn's rule)
};

/// Cyclic coordinate descent per prompt and prefix, warm-started from the previous prefix's
/// solution (same optimum, far fewer epochs). `unconverged` counts fits that hit maxIter: the
/// reference aborted on them; here they are kept and reported.
torch::Tensor lasso(const torch::Tensor& xs, const torch::Tensor& ys, const LassoOptions& options,
                    std::int64_t& unconverged);

/// -1 everywhere.
torch::Tensor nullClassifier(const torch::Tensor& ys);

/// A baseline of a task's evaluation: the reference's internal key (metrics.json), its legend.
struct BaselineSpec {
    std::string key;    ///< "OLS_driver=None", "NN_n=3_uniform", "averaging", ...
    std::string label;  ///< "Least Squares", "3-Nearest Neighbors", ...
};

/// The reference's per-task list (§6.4); empty for quadratic_regression and unknown tasks.
std::vector<BaselineSpec> baselinesFor(const std::string& task);

/// Predictions of the baseline `key` (one of baselinesFor's keys).
torch::Tensor runBaseline(const std::string& key, const torch::Tensor& xs, const torch::Tensor& ys,
                          std::int64_t& lassoUnconverged);

}  // namespace lengen::engine::eval
