#include "data/tasks.h"

#include <algorithm>

#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"

namespace lengen::engine::data {

torch::Tensor gaussianXs(TaskShape shape, std::int64_t nPoints, std::int64_t nDimsTruncated,
                         at::Generator& gen)
{
    auto xs = torch::randn({shape.batch, nPoints, shape.dims}, gen, kFloat);
    if (nDimsTruncated >= 0 && nDimsTruncated < shape.dims)
        xs.slice(2, nDimsTruncated).zero_();
    return xs;
}

torch::Tensor booleanXs(TaskShape shape, std::int64_t nPoints, at::Generator& gen)
{
    return torch::randint(0, 2, {shape.batch, nPoints, shape.dims}, gen, kFloat).mul_(2).sub_(1);
}

torch::Tensor randomSubsetMask(TaskShape shape, std::int64_t k, at::Generator& gen)
{
    // A uniformly random k-subset per row: the first k indices of a random permutation,
    // obtained by arg-sorting i.i.d. uniforms (ties have probability zero).
    auto order = torch::rand({shape.batch, shape.dims}, gen, kFloat)
                     .argsort(/*dim=*/static_cast<std::int64_t>(1), /*descending=*/false);
    auto mask = torch::zeros({shape.batch, shape.dims}, kFloat);
    mask.scatter_(1, order.slice(1, 0, std::min(k, shape.dims)), 1.0);
    return mask;
}

TaskSampler::TaskSampler(std::string name, TaskShape shape)
    : m_name(std::move(name)), m_shape(shape), m_boolean(isBooleanTaskName(m_name)),
      m_classification(isClassificationTaskName(m_name))
{
    if (shape.dims < 1 || shape.batch < 1)
        throw Error(ErrorKind::Config, "task " + m_name + ": dimensions and batch must be >= 1");
    const auto known = knownTaskNames();
    if (std::find(known.begin(), known.end(), m_name) == known.end())
        throw Error(ErrorKind::Config, "unknown task '" + m_name + "'");
}

std::unique_ptr<FunctionBatch> TaskSampler::sample(at::Generator& gen) const
{
    return m_boolean ? makeBooleanBatch(m_name, m_shape, gen)
                     : makeRegressionBatch(m_name, m_shape, gen);
}

torch::Tensor TaskSampler::metric(const torch::Tensor& pred, const torch::Tensor& ys) const
{
    if (m_classification)
        return ys.eq(pred.sign()).to(torch::kFloat32);
    return (ys - pred).square();
}

torch::Tensor TaskSampler::loss(const torch::Tensor& pred, const torch::Tensor& ys) const
{
    if (m_classification)
        return torch::binary_cross_entropy_with_logits(pred, (ys + 1) * 0.5);
    return (ys - pred).square().mean();
}

}  // namespace lengen::engine::data
