#include "eval/probe_common.h"

#include "clock_text.h"

namespace lengen::engine::eval {

void writeProbeAttributes(hid_t group, const ProbeContext& ctx, const std::string& path)
{
    io::H5Lock lock(io::h5Mutex());
    const auto& cfg = ctx.run.config;
    const auto& o = *ctx.options;
    io::writeAttribute(group, "checkpoint_step", ctx.run.checkpointStep, path);
    io::writeAttribute(group, "seed", o.common.seed, path);
    io::writeAttribute(group, "bootstrap_trials", std::int64_t{o.common.bootstrapTrials}, path);
    io::writeAttribute(group, "model", modelKey(cfg), path);
    io::writeAttribute(group, "classification", std::int64_t{cfg.isClassification()}, path);
    std::map<std::string, double> params = ctx.params;
    params["dims"] = cfg.inputDims();
    params["train_points"] = cfg.trainPoints();
    // The length the weights last trained on (issue 52): what the figures mark.
    params["trained_points"] = cfg.trainedPoints(ctx.run.checkpointStep);
    params["zero_estimator"] = cfg.inputDims();
    params["prompts"] = o.prompts;
    for (const auto& [name, value] : params)
        io::writeAttribute(group, name, std::vector<double>{value}, path);
    io::writeAttribute(group, "created_at", utcNow(), path);
}

void writeProbeCurve(hid_t group, const ProbeCurve& curve, const std::string& path)
{
    io::writeCurve(group, curve.name, curve.name, curve.stats, path);
    io::H5Lock lock(io::h5Mutex());
    auto g = io::openGroup(group, curve.name, path);
    for (const auto& [mark, span] : curve.spans)
        io::writeAttribute(g.id(), mark + "_span", std::vector<double>{span.first, span.second},
                           path);
    for (const auto& [name, value] : curve.values)
        io::writeAttribute(g.id(), name, std::vector<double>{value}, path);
}

torch::Tensor predictWithinBudget(ProbeContext& ctx, const torch::Tensor& xs,
                                  const torch::Tensor& ys)
{
    const auto plan = planForward(ctx.run.config, xs.size(0), 2 * xs.size(1), ctx.budgetBytes,
                                  ctx.run.device.is_cuda());
    if (ctx.intervention.isNone())
        return predict(ctx.run, xs, ys, plan);
    const auto edit = resolveIntervention(ctx.intervention, ctx.run.config, xs.size(1));
    return predictWith(ctx.run, xs, ys, plan, edit, ctx.budgetBytes);
}

}  // namespace lengen::engine::eval
