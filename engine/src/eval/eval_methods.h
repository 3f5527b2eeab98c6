#pragma once
// Evaluation methods (reference §6.2) and the covariate shifts the reference meant to apply
// (§9.21): half_subspace, skewed, scale-x=s transform the inputs, scale-y=s the targets.

#include <torch/torch.h>

#include <string>

namespace lengen::engine::eval {

struct MethodSpec {
    enum class Kind { Standard, OodLength, HalfSubspace, Skewed, ScaleX, ScaleY };
    std::string name;
    Kind kind = Kind::Standard;
    double scale = 1;  ///< s of scale-x=s / scale-y=s

    bool isLong() const { return kind != Kind::Standard; }
};

/// Parses a method name; Error(Config) naming it if unknown or (covariate shifts) not
/// applicable to a boolean task.
MethodSpec parseMethod(const std::string& name, bool gaussianTask);

/// sample_transformation (§2): U diag(lambda) U^T with U a random orthogonal matrix (from the
/// SVD of a standard-normal D x D draw), normalised so that E||x t||^2 = D when asked. [D, D]
torch::Tensor sampleTransformation(const torch::Tensor& eigenvalues, bool normalize,
                                   at::Generator& gen);

/// The input transform of a method, x <- x t, or an undefined tensor for none. [D, D]
torch::Tensor inputTransform(const MethodSpec& method, std::int64_t dims, at::Generator& gen);

/// FNV-1a of the method name mixed with the seed: each method draws its own prompts, whatever
/// other methods run in the same call.
std::uint64_t methodSeed(std::uint64_t seed, const std::string& method);

}  // namespace lengen::engine::eval
