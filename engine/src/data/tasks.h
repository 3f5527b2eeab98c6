#pragma once
// Function classes of reference §1: a TaskSampler draws, every call, a batch of B independent
// random functions (a FunctionBatch); the batch samples inputs and labels them. All randomness
// comes from the caller's CPU generator, so a seeded run is reproducible bit for bit.

#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>

namespace lengen::engine::data {

inline const auto kFloat = torch::TensorOptions().dtype(torch::kFloat32);

/// B functions, one per batch row. Shapes are always kept as [B, N] / [B, N, D].
class FunctionBatch {
public:
    virtual ~FunctionBatch() = default;
    /// Inputs [B, nPoints, D] float32; coordinates >= nDimsTruncated are zero (Gaussian tasks;
    /// boolean tasks use all D, as the reference does). Planting tasks plant here.
    virtual torch::Tensor sampleXs(std::int64_t nPoints, std::int64_t nDimsTruncated,
                                   at::Generator& gen) = 0;
    /// Targets [B, N] for xs [B, N, D]; row b is labelled by function b.
    virtual torch::Tensor evaluate(const torch::Tensor& xs) const = 0;
    /// The drawn function parameters by name (e.g. "w" [B, D]), for inspection and tests.
    virtual std::map<std::string, torch::Tensor> parameters() const = 0;
};

struct TaskShape {
    std::int64_t batch = 1;  ///< B
    std::int64_t dims = 1;   ///< D = n_in_dims
};

/// Creates FunctionBatches of one task (the reference's task-sampler factory).
class TaskSampler {
public:
    TaskSampler(std::string name, TaskShape shape);
    const std::string& name() const { return m_name; }
    bool isBoolean() const { return m_boolean; }                ///< inputs in {-1, +1}
    bool isClassification() const { return m_classification; }  ///< accuracy / BCE
    std::int64_t dims() const { return m_shape.dims; }
    std::int64_t batch() const { return m_shape.batch; }

    /// Draws B fresh functions (a new "task instance").
    std::unique_ptr<FunctionBatch> sample(at::Generator& gen) const;

    /// Per-point metric [B, N]: squared error (regression) or accuracy (boolean; a prediction
    /// of exactly 0 counts as wrong).
    torch::Tensor metric(const torch::Tensor& pred, const torch::Tensor& ys) const;
    /// Training loss (scalar): mean squared error, or binary cross-entropy of sigmoid(pred)
    /// against (y+1)/2 (computed from logits).
    torch::Tensor loss(const torch::Tensor& pred, const torch::Tensor& ys) const;

private:
    std::string m_name;
    TaskShape m_shape;
    bool m_boolean = false;
    bool m_classification = false;
};

// Factories per family (regression_tasks.cpp, boolean_tasks.cpp). Return null for unknown names.
std::unique_ptr<FunctionBatch> makeRegressionBatch(const std::string& name, TaskShape shape,
                                                   at::Generator& gen);
std::unique_ptr<FunctionBatch> makeBooleanBatch(const std::string& name, TaskShape shape,
                                                at::Generator& gen);

/// Standard-normal inputs [B, N, D] with coordinates >= nDimsTruncated zeroed.
torch::Tensor gaussianXs(TaskShape shape, std::int64_t nPoints, std::int64_t nDimsTruncated,
                         at::Generator& gen);
/// Uniform {-1, +1} inputs [B, N, D] (float32).
torch::Tensor booleanXs(TaskShape shape, std::int64_t nPoints, at::Generator& gen);
/// For each row, a random set of k distinct coordinates as a 0/1 mask [B, D].
torch::Tensor randomSubsetMask(TaskShape shape, std::int64_t k, at::Generator& gen);

}  // namespace lengen::engine::data
