// `evaluateRun`: error per in-context position of the trained model and its task's baselines
// at the training length and beyond (reference §6), stored in analysis.h5 under
// /eval/<method>/<model>. Prompts come from one seeded CPU generator per method.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>

#include "clock_text.h"
#include "data/tasks.h"
#include "eval/baselines.h"
#include "eval/eval_methods.h"
#include "eval/interventions.h"
#include "eval/model_runner.h"
#include "eval/statistics.h"
#include "io/analysis_store.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/jobs.h"

namespace fs = std::filesystem;

namespace lengen::engine {

namespace {

// What produced a stored method; equal provenance means re-running is a no-op.
struct Provenance {
    std::int64_t checkpointStep = 0;
    std::uint64_t seed = 0;
    std::int64_t prompts = 0, nPoints = 0, trials = 0, baselines = 0;
    bool operator==(const Provenance& o) const
    {
        return checkpointStep == o.checkpointStep && seed == o.seed && prompts == o.prompts &&
               nPoints == o.nPoints && trials == o.trials && baselines == o.baselines;
    }
};

bool alreadyStored(const std::string& analysis, const std::string& group, const Provenance& want)
{
    if (!fs::exists(analysis))
        return false;
    auto file = io::openAnalysis(analysis);
    io::H5Lock lock(io::h5Mutex());
    const std::string& g = group;
    if (!io::exists(file.id(), g))
        return false;
    auto grp = io::openGroup(file.id(), g, analysis);
    Provenance have;
    have.checkpointStep = io::intAttr(grp.id(), "checkpoint_step", -1, analysis);
    have.seed =
        io::hasAttribute(grp.id(), "seed") ? io::readUIntAttribute(grp.id(), "seed", analysis) : 0;
    have.prompts = io::intAttr(grp.id(), "prompts", -1, analysis);
    have.nPoints = io::intAttr(grp.id(), "n_points", -1, analysis);
    have.trials = io::intAttr(grp.id(), "bootstrap_trials", -1, analysis);
    have.baselines = io::intAttr(grp.id(), "baselines", -1, analysis);
    return have == want;
}

// One unit of work: a method under an intervention (or none). Each is stored on its own, so an
// interrupted evaluation keeps every unit that finished.
struct Unit {
    const eval::MethodSpec* method = nullptr;
    InterventionSpec spec;  // none = the plain evaluation, with the baselines
    std::string group() const
    {
        return spec.isNone() ? "eval/" + method->name
                             : "interventions/" + spec.text() + "/" + method->name;
    }
    std::string name() const
    {
        return spec.isNone() ? method->name : method->name + "+" + spec.text();
    }
};

struct MethodMetrics {
    std::vector<std::string> keys, labels;          // transformer first, then baselines
    std::vector<std::vector<torch::Tensor>> parts;  // per model: [b, N] metric blocks
};

}  // namespace

std::string pairWithStoredEvaluation(const std::string& run, EvalOptions& options,
                                     PairedSettings take)
{
    const auto wanted = [&](const std::string& method) {
        return options.methods.empty() || std::find(options.methods.begin(), options.methods.end(),
                                                    method) != options.methods.end();
    };
    const EvalResult* first = nullptr;
    const EvalResult* longest = nullptr;
    const auto stored = readEvaluations(run);
    for (const auto& r : stored) {
        if (!r.intervention.empty() || r.source != "lengen" || !wanted(r.method))
            continue;
        if (!first)
            first = &r;
        if (r.trainPoints > 0 && r.nPoints > r.trainPoints &&
            (!longest || r.nPoints > longest->nPoints))
            longest = &r;
    }
    if (!first)
        return {};
    std::string took;
    const auto add = [&took](const std::string& part) {
        took += (took.empty() ? "" : ", ") + part;
    };
    if (take.prompts) {
        options.prompts = first->prompts;
        add(std::to_string(options.prompts) + " prompts");
    }
    if (take.seed) {
        options.common.seed = first->seed;
        add("seed " + std::to_string(options.common.seed));
    }
    if (take.oodFactor && longest) {
        options.oodFactor = std::max(1, longest->nPoints / longest->trainPoints);
        add(std::to_string(options.oodFactor) + "× the training length");
    }
    return took;
}

namespace {

// The plain evaluation first, then every intervention asked for, each checked against the run
// before anything runs (exit 2); a sweep's inapplicable ones are skipped with a warning.
std::vector<InterventionSpec> checkedInterventions(const EvalOptions& options, const RunConfig& cfg,
                                                   AnalysisObserver& observer)
{
    std::vector<InterventionSpec> specs{InterventionSpec{"none", {}}};
    for (auto& spec : expandInterventions(options.interventions, cfg)) {  // `all`: a union
        if (options.skipInapplicable) {
            if (const auto why = interventionRefusal(spec, cfg); !why.empty()) {
                observer.onWarning(spec.text() + " skipped: " + why);
                continue;
            }
        }
        eval::resolveIntervention(spec, cfg, cfg.trainPoints() * options.oodFactor);
        if (std::none_of(specs.begin(), specs.end(),
                         [&](const auto& s) { return s.text() == spec.text(); }))
            specs.push_back(spec);
    }
    return specs;
}

// What one unit needs besides the loaded run.
struct UnitPlan {
    const Unit& unit;
    std::int64_t n = 0;  // points per prompt
    eval::ResolvedIntervention edit;
    std::vector<eval::BaselineSpec> baselines;  // empty for an intervention
};

// Draws the unit's prompts batch by batch from its method's generator and scores the model
// (and the baselines) on them: per model, [b, N] metric blocks. False when stopped.
bool scoreUnit(eval::LoadedRun& loaded, const EvalOptions& options, const UnitPlan& u,
               double budget, RunControl& control, AnalysisObserver& observer, MethodMetrics& mm,
               std::int64_t& lassoUnconverged)
{
    const RunConfig& cfg = loaded.config;
    const auto& method = *u.unit.method;
    const std::int64_t dims = cfg.inputDims();
    auto gen = at::make_generator<at::CPUGeneratorImpl>(
        eval::methodSeed(options.common.seed, method.name));
    auto transform = eval::inputTransform(method, dims, gen);  // [D, D] or none
    const auto plan =
        eval::planForward(cfg, options.batchSize, 2 * u.n, budget, loaded.device.is_cuda());
    const bool referenceCompat = cfg.compat == CompatMode::Reference;
    const std::int64_t batches = (options.prompts + options.batchSize - 1) / options.batchSize;
    for (std::int64_t bi = 0; bi < batches; ++bi) {
        if (!control.shouldContinue())
            return false;
        const std::int64_t size =
            std::min<std::int64_t>(options.batchSize, options.prompts - bi * options.batchSize);
        data::TaskSampler sampler(cfg.task.name, data::TaskShape{size, dims});
        auto functions = sampler.sample(gen);
        auto xs = functions->sampleXs(u.n, dims, gen);  // [b, N, D]
        if (transform.defined())
            xs = torch::matmul(xs, transform);
        // §9.22: the reference labels with a second, independent task instance.
        auto ys = referenceCompat ? sampler.sample(gen)->evaluate(xs) : functions->evaluate(xs);
        if (method.kind == eval::MethodSpec::Kind::ScaleY)
            ys = ys * method.scale;
        observer.onProgress(u.unit.name() + ": " + mm.keys[0], bi, batches);
        mm.parts[0].push_back(
            sampler.metric(eval::predictWith(loaded, xs, ys, plan, u.edit, budget), ys));
        for (size_t m = 1; m < mm.keys.size(); ++m)
            mm.parts[m].push_back(
                sampler.metric(eval::runBaseline(mm.keys[m], xs, ys, lassoUnconverged), ys));
    }
    observer.onProgress(u.unit.name() + ": aggregating", batches, batches);
    return true;
}

// Writes one unit's group: what produced it (the provenance alreadyStored compares), then each
// model's curve with its bootstrap band. One commit: a unit is stored whole or not at all.
void storeUnit(const std::string& analysisFile, const eval::LoadedRun& loaded,
               const EvalOptions& options, const UnitPlan& u, const MethodMetrics& mm)
{
    const RunConfig& cfg = loaded.config;
    const auto& method = *u.unit.method;
    const bool plain = u.unit.spec.isNone();
    io::AnalysisWriter writer(analysisFile, loaded.info.runId);
    auto grp = writer.group(u.unit.group(), /*fresh=*/true);
    {
        io::H5Lock lock(io::h5Mutex());
        const auto& p = writer.path();
        const auto id = grp.id();
        io::writeAttribute(id, "checkpoint_step", loaded.checkpointStep, p);
        io::writeAttribute(id, "seed", options.common.seed, p);
        io::writeAttribute(id, "prompts", std::int64_t{options.prompts}, p);
        io::writeAttribute(id, "n_points", u.n, p);
        io::writeAttribute(id, "train_points", std::int64_t{cfg.trainPoints()}, p);
        io::writeAttribute(id, "trained_points",
                           std::int64_t{cfg.trainedPoints(loaded.checkpointStep)}, p);
        io::writeAttribute(id, "dims", std::int64_t{cfg.inputDims()}, p);
        io::writeAttribute(id, "bootstrap_trials", std::int64_t{options.common.bootstrapTrials}, p);
        io::writeAttribute(id, "baselines", std::int64_t{u.baselines.empty() ? 0 : 1}, p);
        if (!plain) {
            io::writeAttribute(id, "intervention", u.unit.spec.text(), p);
            io::writeAttribute(id, "parameters", u.edit.description, p);
        }
        io::writeAttribute(id, "batch_size", std::int64_t{options.batchSize}, p);
        io::writeAttribute(id, "classification", std::int64_t{cfg.isClassification()}, p);
        // E[y^2] = s^2 D when the targets (scale-y) or the inputs (scale-x: y = w.(s x)) are
        // scaled by s.
        const bool scaled = method.kind == eval::MethodSpec::Kind::ScaleY ||
                            method.kind == eval::MethodSpec::Kind::ScaleX;
        const double s = scaled ? method.scale : 1.0;
        io::writeAttribute(id, "zero_estimator",
                           std::vector<double>{double(cfg.inputDims()) * s * s}, p);
        io::writeAttribute(
            id, "compat",
            std::string(cfg.compat == CompatMode::Reference ? "reference" : "intended"), p);
        io::writeAttribute(id, "source", std::string("lengen"), p);
        io::writeAttribute(id, "created_at", utcNow(), p);
        std::string order;
        for (const auto& k : mm.keys)
            order += (order.empty() ? "" : "\n") + k;
        io::writeAttribute(id, "order", order, p);
    }
    auto bootGen = at::make_generator<at::CPUGeneratorImpl>(
        eval::methodSeed(options.common.seed, method.name + "/bootstrap"));
    for (size_t m = 0; m < mm.keys.size(); ++m) {
        auto metric = torch::cat(mm.parts[m], 0);  // [prompts, N]
        io::writeCurve(grp.id(), mm.keys[m], mm.labels[m],
                       eval::aggregate(metric, options.common.bootstrapTrials, bootGen),
                       writer.path());
    }
    grp.reset();
    writer.commit();
}

}  // namespace

EvalSummary evaluateRun(const std::string& run, const EvalOptions& options, RunControl& control,
                        AnalysisObserver& observer)
{
    if (options.prompts < 1 || options.batchSize < 1 || options.oodFactor < 1)
        throw Error(ErrorKind::Config, "prompts, batch size and OOD factor must be >= 1");
    auto loaded = eval::loadRun(run, options.common);
    // Seen by every process's job list while it runs (`lengen jobs`, the studio's Jobs panel).
    const AnalysisJobMarker marker(run, JobKindId::Evaluation);
    const RunConfig& cfg = loaded.config;
    std::vector<eval::MethodSpec> methods;
    for (const auto& name :
         options.methods.empty() ? evalMethodsFor(cfg.task.name) : options.methods)
        methods.push_back(eval::parseMethod(name, !cfg.isBooleanTask()));
    const auto baselines =
        options.baselines ? eval::baselinesFor(cfg.task.name) : std::vector<eval::BaselineSpec>{};
    const auto specs = checkedInterventions(options, cfg, observer);
    std::vector<Unit> units;
    for (const auto& method : methods)
        for (const auto& spec : specs)
            units.push_back(Unit{&method, spec});

    EvalSummary summary;
    summary.analysisFile = analysisFileFor(run);
    const double budget = eval::forwardBudgetBytes(loaded.device, options.common.memoryBudgetMiB);
    int stage = 0;
    for (const auto& unit : units) {
        observer.onStage(stage++, int(units.size()), unit.name());
        const bool plain = unit.spec.isNone();
        UnitPlan u{unit, 0, {}, {}};  // every member named: no missing-initializer warning
        u.n = cfg.trainPoints() * (unit.method->isLong() ? options.oodFactor : 1);
        u.edit = eval::resolveIntervention(unit.spec, cfg, u.n);
        if (plain)
            u.baselines = baselines;
        const Provenance prov{
            loaded.checkpointStep,          options.common.seed,        options.prompts, u.n,
            options.common.bootstrapTrials, u.baselines.empty() ? 0 : 1};
        if (!options.common.force && alreadyStored(summary.analysisFile, unit.group(), prov)) {
            summary.skipped.push_back(unit.name());
            continue;
        }
        const auto tokens = u.edit.forwardTokens(u.n);
        if (cfg.model.backbone == Backbone::Gpt2 && tokens > cfg.model.maxPositionEmbeddings) {
            observer.onWarning(unit.name() + ": skipped, GPT-2 has learned positions for " +
                               std::to_string(cfg.model.maxPositionEmbeddings) + " tokens and " +
                               "this method needs " + std::to_string(tokens));
            continue;
        }
        MethodMetrics mm;
        mm.keys.push_back(eval::modelKey(cfg));
        mm.labels.push_back(plain ? eval::modelKey(cfg)
                                  : eval::modelKey(cfg) + " + " + unit.spec.text());
        for (const auto& b : u.baselines) {
            mm.keys.push_back(b.key);
            mm.labels.push_back(b.label);
        }
        mm.parts.resize(mm.keys.size());
        if (!scoreUnit(loaded, options, u, budget, control, observer, mm,
                       summary.lassoUnconverged)) {
            summary.cancelled = true;
            return summary;
        }
        storeUnit(summary.analysisFile, loaded, options, u, mm);
        summary.computed.push_back(unit.name());
    }
    if (summary.lassoUnconverged > 0)
        observer.onWarning("Lasso did not converge within max_iter on " +
                           std::to_string(summary.lassoUnconverged) +
                           " prefixes; their last iterates were used");
    return summary;
}

}  // namespace lengen::engine
