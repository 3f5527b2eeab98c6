#include "eval/eval_methods.h"

#include <cmath>

#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/hash.h"

namespace lengen::engine {

namespace {

// The largest scale-x / scale-y: (1e15 · a 10σ draw)² · 10⁴ points stays below float32's 3.4e38.
constexpr double kMaxMethodScale = 1e15;
}  // namespace

}  // namespace lengen::engine

namespace lengen::engine::eval {

MethodSpec parseMethod(const std::string& name, bool gaussianTask)
{
    using K = MethodSpec::Kind;
    MethodSpec m;
    m.name = name;
    auto shift = [&](K kind) {
        if (!gaussianTask)
            throw Error(ErrorKind::Config, "method '" + name +
                                               "' is a covariate shift of Gaussian inputs; "
                                               "boolean tasks have standard and ood_length");
        m.kind = kind;
        return m;
    };
    if (name == "standard")
        return m;
    if (name == "ood_length") {
        m.kind = K::OodLength;
        return m;
    }
    if (name == "half_subspace")
        return shift(K::HalfSubspace);
    if (name == "skewed")
        return shift(K::Skewed);
    for (const auto& [prefix, kind] : {std::pair{"scale-x=", K::ScaleX}, {"scale-y=", K::ScaleY}}) {
        const std::string p = prefix;
        if (name.rfind(p, 0) != 0)
            continue;
        try {
            size_t used = 0;
            m.scale = std::stod(name.substr(p.size()), &used);
            if (used == name.size() - p.size() && m.scale > 0 && std::isfinite(m.scale) &&
                m.scale <= kMaxMethodScale)
                return shift(kind);
        } catch (const std::logic_error&) {
        }
        // Prompts are float32: a larger scale makes the baselines' Gram matrices overflow
        // (issue 45: 1e100 ended in "internal error: linalg.eigh failed to converge").
        throw Error(ErrorKind::Config, "method '" + name +
                                           "': the scale must be a positive number up to 1e15 "
                                           "(prompts are float32; the baselines square them)");
    }
    throw Error(ErrorKind::Config, "unknown evaluation method '" + name +
                                       "' (standard, ood_length, half_subspace, skewed, "
                                       "scale-x=<s>, scale-y=<s>)");
}

torch::Tensor sampleTransformation(const torch::Tensor& eigenvalues, bool normalize,
                                   at::Generator& gen)
{
    const auto d = eigenvalues.size(0);
    auto g = torch::randn({d, d}, gen, torch::kFloat64);
    auto u = std::get<0>(torch::linalg_svd(g, /*full_matrices=*/true));  // random orthogonal
    auto lambda = eigenvalues.to(torch::kFloat64);
    auto t = u.matmul(torch::diag(lambda)).matmul(u.t());
    if (normalize)
        t = t * std::sqrt(double(d) / lambda.square().sum().item<double>());
    return t.to(torch::kFloat32);
}

torch::Tensor inputTransform(const MethodSpec& method, std::int64_t dims, at::Generator& gen)
{
    using K = MethodSpec::Kind;
    switch (method.kind) {
    case K::HalfSubspace: {
        auto lambda = torch::zeros({dims}, torch::kFloat64);
        lambda.slice(0, 0, dims / 2).fill_(1.0);
        return sampleTransformation(lambda, true, gen);
    }
    case K::Skewed:
        return sampleTransformation(1.0 / torch::arange(1, dims + 1, torch::kFloat64), true, gen);
    case K::ScaleX:  // t = s I: U diag(s) U^T is s I for any orthogonal U
        return torch::eye(dims, torch::kFloat32) * method.scale;
    default: return {};
    }
}

std::uint64_t methodSeed(std::uint64_t seed, const std::string& method)
{
    const std::uint64_t h = fnv1a64(method);
    return seed ^ (h + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
}

}  // namespace lengen::engine::eval
