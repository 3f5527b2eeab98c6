#include "analysis_commands.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "command_registry.h"
#include "common_options.h"
#include "early_signals.h"
#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/interventions.h"
#include "lengen/engine/run_file.h"
#include "option_ranges.h"
#include "progress.h"

namespace lengen::cli {

namespace {

std::string list(const std::vector<std::string>& items)
{
    std::string s;
    for (const auto& i : items)
        s += (s.empty() ? "" : ", ") + i;
    return s.empty() ? "none" : s;
}

}  // namespace

namespace {

// Runs an analysis with Ctrl-C wired to its RunControl and a progress line; reports what was
// done. `run` returns the summary; `verb` names the work ("evaluated", "probed").
template <typename Run>
int runAnalysis(const AnalysisArgs& args, const char* verb, const char* skippedNote, Run run)
{
    engine::RunControl control;
    interruptsStop(control, false);
    AnalysisProgress progress(args.quiet);
    const auto started = std::chrono::steady_clock::now();
    const auto summary = run(control, progress);
    progress.finish();
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (summary.cancelled) {
        std::fprintf(stderr, "interrupted; what finished before it is saved: %s\n",
                     list(summary.computed).c_str());
        return engine::exitCodeFor(engine::ErrorKind::Interrupted);
    }
    std::fprintf(stderr, "%s: %s (%s)\n", verb, list(summary.computed).c_str(),
                 formatDuration(secs).c_str());
    if (!summary.skipped.empty())
        std::fprintf(stderr, "%s: %s\n", skippedNote, list(summary.skipped).c_str());
    std::printf("%s\n", summary.analysisFile.c_str());
    return 0;
}

}  // namespace

int runEval(const AnalysisArgs& args, engine::EvalOptions options, const Session& session)
{
    options.common = args.common;
    options.common.switches = session.switches;
    return runAnalysis(args, "evaluated",
                       "already stored for this checkpoint and seed (use --force)",
                       [&](engine::RunControl& c, engine::AnalysisObserver& o) {
                           return engine::evaluateRun(args.run, options, c, o);
                       });
}

int runProbe(const AnalysisArgs& args, engine::ProbeOptions options, const Session& session)
{
    options.common = args.common;
    options.common.switches = session.switches;
    return runAnalysis(args, "probed", "skipped",
                       [&](engine::RunControl& c, engine::AnalysisObserver& o) {
                           return engine::probeRun(args.run, options, c, o);
                       });
}

int printProbes(const std::string& run, const std::string& intervention)
{
    const auto groups = engine::readProbeGroups(run, intervention);
    const auto attention = engine::readAttentionSettings(run, intervention);
    if (groups.empty() && attention.empty()) {
        std::printf("no probe stored (run: lengen probe %s --all)\n", run.c_str());
        return 0;
    }
    for (const auto& s : attention) {
        // Head-averaged attention of the last query on the x tokens of the first and last
        // fifth of the prompt, last layer: where the model looks.
        const auto t = static_cast<size_t>(s.tokens), l = static_cast<size_t>(s.layers - 1);
        double first = 0, last = 0;
        for (size_t h = 0; h < static_cast<size_t>(s.heads); ++h)
            for (size_t k = 0; k < t; k += 2) {
                const double w = s.lastQueryMean[(l * s.heads + h) * t + k] / s.heads;
                if (k < t / 5)
                    first += w;
                else if (k >= t - t / 5)
                    last += w;
            }
        std::printf("attention %-12s %5d tokens, %d layers x %d heads, %d full maps; last layer: "
                    "%.3f of the last query's weight on the first fifth, %.3f on the last\n",
                    s.name.c_str(), s.tokens, s.layers, s.heads, s.mapPrompts, first, last);
    }
    for (const auto& g : groups) {
        std::printf("%s  [%s; %g prompts; %s]\n", g.path.c_str(), g.model.c_str(),
                    g.params.count("prompts") ? g.params.at("prompts") : 0.0,
                    g.classification ? "accuracy" : "squared error");
        for (const auto& c : g.curves) {
            const auto& m = c.stats.mean;
            std::printf(
                "  %-16s %4zu positions, mean %.4f, last %.4f", c.name.c_str(), m.size(),
                [&] {
                    double s = 0;
                    for (double v : m)
                        s += v;
                    return m.empty() ? 0 : s / m.size();
                }(),
                m.empty() ? 0.0 : m.back());
            if (c.values.count("target_mean"))
                std::printf(", target block %.4f [%.4f, %.4f]", c.values.at("target_mean"),
                            c.values.at("target_low"), c.values.at("target_high"));
            std::printf("\n");
        }
    }
    return 0;
}

int runImport(const std::string& json, const std::string& run, const std::string& label)
{
    const auto methods = engine::importMetricsJson(json, run, label);
    std::fprintf(stderr, "imported %zu methods under '%s': %s\n", methods.size(), label.c_str(),
                 list(methods).c_str());
    std::printf("%s\n", engine::analysisFileFor(run).c_str());
    return 0;
}

int printEvaluations(const std::string& run)
{
    const auto results = engine::readEvaluations(run);
    if (results.empty()) {
        std::printf("no evaluation stored (run: lengen eval %s)\n", run.c_str());
        return 0;
    }
    for (const auto& r : results) {
        const std::string title =
            r.intervention.empty() ? r.method : r.method + " + " + r.intervention;
        std::printf("%s  [%s; %d prompts, %d points, train length %d, checkpoint step %lld]\n",
                    title.c_str(), r.source.c_str(), r.prompts, r.nPoints, r.trainPoints,
                    static_cast<long long>(r.checkpointStep));
        if (!r.intervention.empty())
            std::printf("  (%s)\n", r.interventionParams.c_str());
        // Positions: 0, D, 2D, the train length's last point and the prompt's last point.
        std::vector<int> at;
        for (int k : {0, r.dims, 2 * r.dims, r.trainPoints - 1, r.nPoints - 1})
            if (k >= 0 && k < r.nPoints && (at.empty() || k > at.back()))
                at.push_back(k);
        std::printf("  %-34s", "k =");
        for (int k : at)
            std::printf(" %9d", k);
        std::printf("\n");
        for (const auto& c : r.curves) {
            std::printf("  %-34s", c.label.c_str());
            for (int k : at)
                std::printf(" %9.4f", c.stats.mean.at(static_cast<size_t>(k)));
            std::printf("\n");
        }
    }
    return 0;
}

namespace {

// Options every analysis command shares (prompts' seed, bootstrap, memory, device, threads).
void addCommonOptions(CLI::App* cmd, AnalysisArgs& a)
{
    cmd->add_option("--seed", a.common.seed, "Seed of prompts and bootstrap")
        ->capture_default_str()
        ->check(seedRange());
    cmd->add_option("--bootstrap", a.common.bootstrapTrials, "Bootstrap resamples")
        ->capture_default_str()
        ->check(inRange(0, 1e6));
    cmd->add_option("--memory-budget", a.common.memoryBudgetMiB,
                    "MiB the model forward may hold at once (micro-batches and attention "
                    "row blocks are sized to fit; default 2048 on the CPU, half the free "
                    "memory on a GPU, which also caps a larger value)")
        ->check(inRange(16, 1e8, false));
    addDeviceOption(cmd, a.common.device);
    addThreadsOption(cmd, a.common.threads);
    cmd->add_flag("--force", a.common.force, "Recompute results already stored");
    addQuietFlag(cmd, a.quiet);
}

}  // namespace

namespace {

// Interventions are compared with the untouched model on the stored plain evaluation's
// prompts: each of its prompts, seed and OOD factor that the command line does not choose is
// taken from it (choosing --prompts took the default length before, and the plain evaluation
// done again beside the interventions replaced a stored 3x one with 8x).
template <typename Eval>
void pairWithStored(const CLI::App& eval, Eval& e)
{
    if (e.options.interventions.empty())
        return;
    engine::PairedSettings take;
    take.prompts = eval.count("--prompts") == 0;
    take.seed = eval.count("--seed") == 0;
    take.oodFactor = eval.count("--ood-factor") == 0;
    if (!take.prompts && !take.seed && !take.oodFactor)
        return;  // the command line chose them all
    auto o = e.options;
    o.common = e.args.common;
    const auto took = engine::pairWithStoredEvaluation(e.args.run, o, take);
    e.options.prompts = o.prompts;
    e.options.oodFactor = o.oodFactor;
    e.args.common.seed = o.common.seed;
    if (!e.args.quiet && !took.empty())
        std::fprintf(stderr, "paired with the stored plain evaluation: %s\n", took.c_str());
}

// `eval RUN`: the methods, or --show, or --list-interventions.
void addEvalCommand(CLI::App& app, CommandTable& table)
{
    struct Eval {
        AnalysisArgs args;
        engine::EvalOptions options;
        bool show = false, list = false;
    };
    auto e = std::make_shared<Eval>();
    auto* eval = app.add_subcommand(
        "eval", "Error per in-context position of a run's model and its task's baselines, at the "
                "training length and beyond (stored in <run>/analysis.h5)");
    eval->add_option("run", e->args.run, "Run folder or run.h5")->required();
    eval->add_option("--methods", e->options.methods,
                     "standard, ood_length, half_subspace, skewed, scale-x=<s>, scale-y=<s> "
                     "(default: all for the task)")
        ->delimiter(',');
    eval->add_option("--prompts", e->options.prompts, "Prompts per method")
        ->capture_default_str()
        ->check(inRange(1, 1e7));
    eval->add_option("--batch", e->options.batchSize, "Functions drawn per task instance")
        ->capture_default_str()
        ->check(inRange(1, 1e6));
    eval->add_option("--ood-factor", e->options.oodFactor,
                     "Prompt length of the long methods, in training lengths")
        ->capture_default_str()
        ->check(inRange(1, 100));
    eval->add_flag("!--no-baselines", e->options.baselines, "Evaluate the model only");
    std::string names;
    for (const auto& n : engine::interventionNames())
        names += (names.empty() ? "" : ", ") + n;
    eval->add_option("--intervention", e->options.interventions,
                     "Training-free length extension to evaluate besides the plain model "
                     "(docs/interventions.md, lengen list interventions): " +
                         names +
                         ", or all; with parameters as name:key=value,... "
                         "(e.g. yarn,lambda:global=2,local=train); repeatable");
    eval->add_flag("--show", e->show, "Only print the stored results");
    eval->add_flag("--list-interventions", e->list,
                   "Only print the interventions that apply to the run, one per line");
    addCommonOptions(eval, e->args);
    table.add(eval, [e, eval](const Session& session) {
        if (e->list) {
            const auto info = engine::readRunInfo(engine::locateRunFile(e->args.run));
            for (const auto& n : engine::applicableInterventions(
                     engine::storedRunConfig(info.configYaml, info.path)))
                std::printf("%s\n", n.c_str());
            return 0;
        }
        if (e->show)
            return printEvaluations(e->args.run);
        pairWithStored(*eval, *e);
        return runEval(e->args, e->options, session);
    });
}

// `probe RUN`: attention, attacks and serial position, or --show.
void addProbeCommand(CLI::App& app, CommandTable& table)
{
    struct Probe {
        AnalysisArgs args;
        engine::ProbeOptions options;
        bool all = false, show = false;
    };
    auto p = std::make_shared<Probe>();
    p->args.common = p->options.common;  // the probes' defaults (bootstrap: the reference's 100)
    auto* probe = app.add_subcommand(
        "probe", "Attention maps, duplicated-example attacks and serial-position curves of a "
                 "run's model (stored in <run>/analysis.h5)");
    auto& o = p->options;
    probe->add_option("run", p->args.run, "Run folder or run.h5")->required();
    probe->add_flag("--attention", o.attention,
                    "Attention of the last query (train length, "
                    "long, duplicated prompt) and full maps");
    probe->add_flag("--duplicated", o.duplicated, "Duplicated-example attacks");
    probe->add_flag("--serial-position", o.serialPosition,
                    "Answer block at begin / middle / end (lost in the middle)");
    probe->add_flag("--all", p->all, "Every probe");
    probe->add_flag("--show", p->show, "Only print the stored results");
    probe->add_option("--prompts", o.prompts, "Prompts of the attack and serial position tests")
        ->capture_default_str()
        ->check(inRange(1, 1e6));
    probe->add_option("--test-length", o.testLength, "Points of the long layouts")
        ->capture_default_str()
        ->check(inRange(1, 1e5));
    probe->add_option("--noise-counts", o.noiseCounts, "Count sweep (default 5..20)")
        ->delimiter(',')
        ->check(inRange(0, 1e4));
    probe->add_option("--instruction", o.instructionPoints, "Instruction points (default 2D)")
        ->check(inRange(0, 1e4));
    probe->add_option("--answer", o.answerPoints, "Answer points (default D)")
        ->check(inRange(0, 1e4));
    probe->add_option("--target", o.targetPoints, "Target points (default ceil(D/2))")
        ->check(inRange(0, 1e4));
    probe
        ->add_option("--attention-prompts", o.attentionPrompts,
                     "Prompts averaged by the attention probe")
        ->capture_default_str()
        ->check(inRange(1, 1e5));
    probe->add_option("--long-points", o.longPoints, "Points of the long attention test")
        ->capture_default_str()
        ->check(inRange(1, 1e5));
    probe->add_option("--lengths", o.extraLengths, "More attention prompt lengths, in points")
        ->delimiter(',')
        ->check(inRange(1, 1e5));
    probe
        ->add_option("--map-prompts", o.mapPrompts,
                     "Prompts whose full attention maps are "
                     "stored")
        ->capture_default_str()
        ->check(inRange(0, 1e3));
    probe
        ->add_option("--map-max-tokens", o.mapMaxTokens,
                     "Store full maps up to this prompt "
                     "length")
        ->capture_default_str()
        ->check(inRange(0, 2e5));
    probe->add_option("--intervention", o.intervention,
                      "Probe under one training-free length extension (docs/interventions.md), "
                      "e.g. lambda or window:local=train; stored beside the plain results");
    addCommonOptions(probe, p->args);
    table.add(probe, [p](const Session& session) {
        if (p->show)
            return printProbes(p->args.run, p->options.intervention);
        if (p->all)
            p->options.selectAll();
        return runProbe(p->args, p->options, session);
    });
}

// `import METRICS RUN`: the reference's metrics.json into a run's analysis file.
void addImportCommand(CLI::App& app, CommandTable& table)
{
    struct Import {
        std::string json, run, label = "python";
    };
    auto m = std::make_shared<Import>();
    auto* import = app.add_subcommand(
        "import", "Import the reference's metrics.json into a run's analysis file");
    import->add_option("metrics", m->json, "metrics.json written by the Python code")
        ->required()
        ->check(CLI::ExistingFile);
    import->add_option("run", m->run, "Run folder or run.h5")->required();
    import->add_option("--label", m->label, "Name of the imported set")->capture_default_str();
    table.add(import, [m](const Session&) { return runImport(m->json, m->run, m->label); });
}

}  // namespace

void addAnalysisCommands(CLI::App& app, CommandTable& table)
{
    addEvalCommand(app, table);
    addProbeCommand(app, table);
    addImportCommand(app, table);
}

}  // namespace lengen::cli
