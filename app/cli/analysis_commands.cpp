#include "analysis_commands.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>

#include "lengen/engine/errors.h"
#include "progress.h"

namespace lengen::cli {

namespace {

engine::RunControl* g_control = nullptr;

void onInterrupt(int)
{
    if (g_control)
        g_control->requestCancelFromSignal();
}

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
    g_control = &control;
    std::signal(SIGINT, onInterrupt);
    std::signal(SIGTERM, onInterrupt);
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

int runEval(const AnalysisArgs& args, engine::EvalOptions options)
{
    options.common = args.common;
    return runAnalysis(args, "evaluated", "already stored for this checkpoint and seed (use --force)",
                       [&](engine::RunControl& c, engine::AnalysisObserver& o) {
                           return engine::evaluateRun(args.run, options, c, o);
                       });
}

int runProbe(const AnalysisArgs& args, engine::ProbeOptions options)
{
    options.common = args.common;
    return runAnalysis(args, "probed", "skipped", [&](engine::RunControl& c, engine::AnalysisObserver& o) {
        return engine::probeRun(args.run, options, c, o);
    });
}

int printProbes(const std::string& run)
{
    const auto groups = engine::readProbeGroups(run);
    const auto attention = engine::readAttentionSettings(run);
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
            std::printf("  %-16s %4zu positions, mean %.4f, last %.4f", c.name.c_str(), m.size(),
                        [&] { double s = 0; for (double v : m) s += v; return m.empty() ? 0 : s / m.size(); }(),
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
        std::printf("%s  [%s; %d prompts, %d points, train length %d, checkpoint step %lld]\n",
                    r.method.c_str(), r.source.c_str(), r.prompts, r.nPoints, r.trainPoints,
                    static_cast<long long>(r.checkpointStep));
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

}  // namespace lengen::cli
