// `probeRun`: duplicated-example attacks (§8.1–8.3) and the serial-position test (§8.4), each
// a set of assembled prompts whose per-position error is aggregated over prompts; dispatches
// the attention probe (attention_probe.cpp).

#include <numeric>

#include "data/tasks.h"
#include "eval/eval_methods.h"
#include "eval/interventions.h"
#include "eval/probe_common.h"
#include "eval/probe_cost.h"
#include "eval/probe_layouts.h"
#include "eval/statistics.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/jobs.h"

namespace lengen::engine {

namespace {

using eval::Layout;
using eval::ProbeContext;
using eval::ProbeSizes;

struct Material {
    data::TaskSampler sampler;
    std::unique_ptr<data::FunctionBatch> functions;
    torch::Tensor xs;  // [B, N, D], the one draw every layout is assembled from
};

// Per-position metric [B, len] of one assembled layout.
torch::Tensor layoutMetric(ProbeContext& ctx, Material& m, const Layout& layout)
{
    auto idx = torch::tensor(layout.indices, torch::kLong);
    auto seq = m.xs.index_select(1, idx);  // [B, len, D]
    auto ys = m.functions->evaluate(seq);  // same functions
    return m.sampler.metric(eval::predictWithinBudget(ctx, seq, ys), ys);
}

ProbeCurve curveOf(const std::string& name, const torch::Tensor& metric, at::Generator& gen,
                   int trials)
{
    ProbeCurve c;
    c.name = name;
    c.stats = eval::aggregate(metric, trials, gen);
    return c;
}

// Stores one group of curves: /probes/<groupPath>/<curve>.
void storeGroup(ProbeContext& ctx, const std::string& groupPath,
                const std::vector<ProbeCurve>& curves)
{
    io::AnalysisWriter writer(ctx.analysisFile, ctx.run.info.runId);
    auto g = writer.group(ctx.root + "/" + groupPath, /*fresh=*/true);
    eval::writeProbeAttributes(g.id(), ctx, writer.path());
    std::string order;
    for (const auto& c : curves) {
        eval::writeProbeCurve(g.id(), c, writer.path());
        order += (order.empty() ? "" : "\n") + c.name;
    }
    {
        io::H5Lock lock(io::h5Mutex());
        io::writeAttribute(g.id(), "order", order, writer.path());
    }
    g.reset();
    writer.commit();
}

// A stage's units counted across its parts (the duplicated probe's three sweeps): one count
// for the stage, so its bar moves through every part (issue 80, defect 22: it counted each part
// from 0, and the bar stood at the first part's end while the other two ran).
struct StageCount {
    std::int64_t done = 0, total = 1;
};

// Runs a list of layouts; false if cancelled. `count`: the stage's units, this list's among
// them (none: this list alone).
bool runLayouts(ProbeContext& ctx, Material& m, const std::vector<Layout>& layouts,
                const std::string& stage, at::Generator& bootGen, std::vector<ProbeCurve>& out,
                StageCount* count = nullptr)
{
    StageCount own{0, static_cast<std::int64_t>(layouts.size())};
    auto& units = count ? *count : own;
    for (size_t i = 0; i < layouts.size(); ++i) {
        if (!ctx.control->shouldContinue())
            return false;
        ctx.observer->onProgress(stage, units.done++, units.total);
        auto c = curveOf(layouts[i].name, layoutMetric(ctx, m, layouts[i]), bootGen,
                         ctx.options->common.bootstrapTrials);
        for (const auto& [mark, span] : layouts[i].spans)
            c.spans[mark] = {double(span.first), double(span.second)};
        out.push_back(std::move(c));
    }
    return true;
}

bool duplicatedProbe(ProbeContext& ctx, Material& m, const ProbeSizes& s, at::Generator& gen)
{
    const auto& o = *ctx.options;
    const std::vector<int> counts = eval::noiseCounts(o);
    auto bootGen = at::make_generator<at::CPUGeneratorImpl>(
        eval::methodSeed(o.common.seed, "duplicated/bootstrap"));
    const auto countSweep = eval::countSweepLayouts(s, counts);
    const auto instNoise = eval::instNoiseTargetLayouts(s);
    const auto instPosition = eval::instructionPositionLayouts(s);
    StageCount count{0,
                     std::int64_t(countSweep.size() + 1 + instNoise.size() + instPosition.size())};
    std::vector<ProbeCurve> sweep;
    if (!runLayouts(ctx, m, countSweep, "duplicated: count sweep", bootGen, sweep, &count))
        return false;
    storeGroup(ctx, "duplicated/count_sweep", sweep);

    // "Random points": a fresh draw of L points from the same functions.
    std::vector<ProbeCurve> inst;
    {
        ctx.observer->onProgress("duplicated: random points", count.done++, count.total);
        auto fresh = m.functions->sampleXs(s.testLength, s.dims, gen);  // [B, L, D]
        auto ys = m.functions->evaluate(fresh);
        auto metric = m.sampler.metric(eval::predictWithinBudget(ctx, fresh, ys), ys);
        inst.push_back(curveOf("random", metric, bootGen, o.common.bootstrapTrials));
    }
    if (!runLayouts(ctx, m, instNoise, "duplicated: instruction + noise + target", bootGen, inst,
                    &count))
        return false;
    storeGroup(ctx, "duplicated/inst_noise_target", inst);

    std::vector<ProbeCurve> position;
    if (!runLayouts(ctx, m, instPosition, "duplicated: instruction position", bootGen, position,
                    &count))
        return false;
    storeGroup(ctx, "duplicated/instruction_position", position);
    return true;
}

bool serialPositionProbe(ProbeContext& ctx, Material& m, const ProbeSizes& s)
{
    const auto& o = *ctx.options;
    auto bootGen = at::make_generator<at::CPUGeneratorImpl>(
        eval::methodSeed(o.common.seed, "serial/bootstrap"));
    std::vector<ProbeCurve> curves;
    for (const auto& layout : eval::serialPositionLayouts(s)) {
        if (!ctx.control->shouldContinue())
            return false;
        ctx.observer->onProgress("serial position", static_cast<std::int64_t>(curves.size()), 3);
        auto metric = layoutMetric(ctx, m, layout);  // [B, L]
        auto c = curveOf(layout.name, metric, bootGen, o.common.bootstrapTrials);
        for (const auto& [mark, span] : layout.spans)
            c.spans[mark] = {double(span.first), double(span.second)};
        // Summary of the target block: per-prompt mean over its positions, then the band.
        const auto& t = layout.spans.at("target");
        auto block = metric.slice(1, t.first, t.second).mean(1, true);  // [B, 1]
        const auto st = eval::aggregate(block, o.common.bootstrapTrials, bootGen);
        c.values["target_mean"] = st.mean[0];
        c.values["target_low"] = st.bootstrapLow[0];
        c.values["target_high"] = st.bootstrapHigh[0];
        c.values["answer_distance"] = double(t.first - layout.spans.at("answer").first);
        curves.push_back(std::move(c));
    }
    storeGroup(ctx, "serial_position", curves);
    return true;
}

// Sets the one intervention the probes run under (text as given), refused early when it does
// not apply to the run's config; its probes are stored under their own root.
void applyProbeIntervention(ProbeContext& ctx, const std::string& text)
{
    const auto& cfg = ctx.run.config;
    const auto specs = parseInterventions(text);
    if (specs.size() != 1)
        throw Error(ErrorKind::Usage, "probe takes one intervention at a time, not '" + text + "'");
    ctx.intervention = specs.front();
    eval::resolveIntervention(ctx.intervention, cfg, cfg.trainPoints());  // refuses early
    ctx.root = probeRoot(ctx.intervention.isNone() ? "" : ctx.intervention.text());
}

// Whether the run's model under the probes' intervention has one attention map to probe.
bool promptLevelIntervention(const ProbeContext& ctx)
{
    const auto* row = findIntervention(ctx.intervention.name);
    return row && row->manyPrompts;  // many short prompts: no single map
}

// The attention probe, or why it is skipped (said in summary and as a warning); false if
// cancelled.
bool attentionProbeStage(ProbeContext& ctx, ProbeSummary& summary)
{
    const auto& cfg = ctx.run.config;
    if (promptLevelIntervention(ctx)) {
        summary.skipped.push_back("attention (" + ctx.intervention.name +
                                  " runs many short prompts: no single attention map)");
        ctx.observer->onWarning("attention probe skipped under " + ctx.intervention.name +
                                ": it runs many short prompts, with no single map to show");
    } else if (!ctx.run.model->hasAttention()) {
        summary.skipped.push_back("attention (" + cfg.model.family + " has no attention)");
        ctx.observer->onWarning("attention probe skipped: the " + cfg.model.family +
                                " backbone has no attention weights");
    } else if (!eval::runAttentionProbe(ctx)) {
        return false;
    } else {
        summary.computed.push_back("attention");
    }
    return true;
}

// The prompt sizes of the duplicated and serial-position probes, stored with every group
// (ctx.params); Error(Config) when GPT-2's learned positions cannot hold them.
ProbeSizes promptProbeSizes(ProbeContext& ctx)
{
    const auto& cfg = ctx.run.config;
    const auto& options = *ctx.options;
    const auto sizes =
        eval::resolveSizes(cfg.trainPoints(), cfg.inputDims(), options.testLength,
                           options.instructionPoints, options.answerPoints, options.targetPoints);
    ctx.params = {{"test_length", double(sizes.testLength)},
                  {"instruction", double(sizes.instruction)},
                  {"answer", double(sizes.answer)},
                  {"target", double(sizes.target)},
                  {"noise_index", double(sizes.noiseIndex())}};
    if (cfg.model.backbone == Backbone::Gpt2 &&
        2 * sizes.testLength > cfg.model.maxPositionEmbeddings)
        throw Error(ErrorKind::Config, "GPT-2 has learned positions for " +
                                           std::to_string(cfg.model.maxPositionEmbeddings) +
                                           " tokens; the probes need " +
                                           std::to_string(2 * sizes.testLength));
    return sizes;
}

}  // namespace

ProbeSummary probeRun(const std::string& run, const ProbeOptions& options, RunControl& control,
                      AnalysisObserver& observer)
{
    if (!options.attention && !options.duplicated && !options.serialPosition)
        throw Error(ErrorKind::Usage, "choose a probe: attention, duplicated or serial position");
    if (options.prompts < 1 || options.attentionPrompts < 1)
        throw Error(ErrorKind::Config, "probe prompts must be >= 1");
    ProbeContext ctx;
    ctx.run = eval::loadRun(run, options.common);
    const AnalysisJobMarker marker(run, JobKindId::Probe);  // seen by every process's job list
    ctx.options = &options;
    ctx.control = &control;
    ctx.observer = &observer;
    ctx.analysisFile = analysisFileFor(run);
    ctx.budgetBytes = eval::forwardBudgetBytes(ctx.run.device, options.common.memoryBudgetMiB);
    const auto& cfg = ctx.run.config;
    if (!options.intervention.empty())
        applyProbeIntervention(ctx, options.intervention);
    ProbeSummary summary;
    summary.analysisFile = ctx.analysisFile;
    // Progress weighed by cost: a 400-point layout costs some forty 30-point ones (probe_cost.h).
    eval::CostWeightedObserver weighed(
        observer,
        eval::probeUnitCosts(options, cfg.trainPoints(), cfg.inputDims(),
                             ctx.run.model->hasAttention() && !promptLevelIntervention(ctx)));
    ctx.observer = &weighed;

    const int stages =
        int(options.attention) + int(options.duplicated) + int(options.serialPosition);
    int stage = 0;
    if (options.attention) {
        weighed.onStage(stage++, stages, "attention");
        if (!attentionProbeStage(ctx, summary)) {
            summary.cancelled = true;
            return summary;
        }
    }
    if (!options.duplicated && !options.serialPosition)
        return summary;
    const auto sizes = promptProbeSizes(ctx);
    auto gen =
        at::make_generator<at::CPUGeneratorImpl>(eval::methodSeed(options.common.seed, "probes"));
    Material m{data::TaskSampler(cfg.task.name, data::TaskShape{options.prompts, cfg.inputDims()}),
               nullptr, torch::Tensor()};
    m.functions = m.sampler.sample(gen);
    m.xs = m.functions->sampleXs(sizes.points, cfg.inputDims(), gen);  // [B, N, D]
    if (options.duplicated) {
        weighed.onStage(stage++, stages, "duplicated");
        if (!duplicatedProbe(ctx, m, sizes, gen)) {
            summary.cancelled = true;
            return summary;
        }
        summary.computed.push_back("duplicated");
    }
    if (options.serialPosition) {
        weighed.onStage(stage++, stages, "serial position");
        if (!serialPositionProbe(ctx, m, sizes)) {
            summary.cancelled = true;
            return summary;
        }
        summary.computed.push_back("serial_position");
    }
    return summary;
}

}  // namespace lengen::engine
