// aggregateSweep: groups a sweep's cells by their axes except `seed`, reads each cell's stored
// evaluation and probe curves (the per-position mean over prompts), and combines them across
// seeds. Plain C++: a sweep has a few seeds per group, so the bootstrap is small.

#include "lengen/engine/sweep_aggregate.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <tuple>

#include "lengen/engine/analysis.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/probes.h"
#include "lengen/engine/seed_stats.h"
#include "lengen/engine/sweep.h"

namespace fs = std::filesystem;

namespace lengen::engine {

namespace {

// One curve of every seed of a group, in cell order; curves may differ in length.
struct SeedCurves {
    std::string label;
    bool transformer = false;
    std::vector<std::vector<double>> perSeed;
};

std::string groupName(const std::vector<std::pair<std::string, std::string>>& axes)
{
    std::string out;
    for (const auto& [k, v] : axes) {
        std::string part = k + "=" + v;
        std::replace(part.begin(), part.end(), '/', '_');  // an HDF5 name holds no '/'
        out += (out.empty() ? "" : ",") + part;
    }
    return out.empty() ? "all" : out;
}

// Sets being filled: (kind, name, group) -> the set and its per-curve seed values.
struct Pending {
    AggregateSet set;
    std::vector<std::string> order;
    std::map<std::string, SeedCurves> curves;
};

void addCurve(Pending& p, const std::string& key, const std::string& label, bool transformer,
              const std::vector<double>& mean)
{
    auto [it, fresh] = p.curves.try_emplace(key);
    if (fresh) {
        p.order.push_back(key);
        it->second.label = label;
        it->second.transformer = transformer;
    }
    it->second.perSeed.push_back(mean);
}

}  // namespace

std::string aggregateFileFor(const std::string& sweepDir)
{
    return locateSweep(sweepDir) + "/aggregate.h5";
}

namespace {

using Axes = std::vector<std::pair<std::string, std::string>>;

// A group's training length: the least its cells trained on (they differ only when a config
// axis changes max_steps or the curriculum, which is then a grouping axis of its own).
void keepLeastTrained(AggregateSet& set, int trained)
{
    set.trainedPoints = set.trainedPoints > 0 ? std::min(set.trainedPoints, trained) : trained;
}

// The axes sets are grouped by: every axis but the seed, or those asked (each must be one).
std::vector<std::string> groupKeys(const SweepIndex& index, const AggregateOptions& options)
{
    std::vector<std::string> keys;
    if (options.groupBy.empty()) {
        for (const auto& k : index.axisKeys)
            if (k != "seed")
                keys.push_back(k);
        return keys;
    }
    for (const auto& k : options.groupBy) {
        if (std::find(index.axisKeys.begin(), index.axisKeys.end(), k) == index.axisKeys.end()) {
            std::string axes;
            for (const auto& a : index.axisKeys)
                axes += (axes.empty() ? "" : ", ") + a;
            throw Error(ErrorKind::Usage, "--by " + k + ": not an axis of the sweep " + index.name +
                                              " (its axes: " + axes + ")");
        }
        keys.push_back(k);
    }
    return keys;
}

// The cells' stored curves gathered into sets, with the grid's order of methods and groups.
struct Gathered {
    std::map<std::tuple<int, std::string, std::string>, Pending>
        pending;                                         // (kind order, name, group)
    std::map<std::string, int> methodOrder, groupOrder;  // first appearance: grid order

    // The set of `kind` (0 eval, 1 probe) and `name` for this cell's group. An intervention is
    // one more grouping key after the axes: its sets sit beside the plain ones
    // ("pe=rope,intervention=yarn"), one table row and grid curve each.
    Pending& setFor(const SweepCell& cell, const Axes& groupAxes, int kind, const std::string& name,
                    const std::string& intervention = "")
    {
        auto axes = groupAxes;
        if (!intervention.empty())
            axes.emplace_back("intervention", intervention);
        const std::string g = groupName(axes);
        groupOrder.try_emplace(g, int(groupOrder.size()));
        auto& p = pending[{kind, name, g}];
        if (p.set.name.empty()) {
            p.set.kind = kind == 0 ? "eval" : "probe";
            p.set.name = name;
            p.set.group = g;
            p.set.groupAxes = axes;
            p.set.task = cell.config.task.name;
        }
        p.set.cells.push_back(cell.name);
        return p;
    }

    void addEvaluations(const SweepCell& cell, const Axes& groupAxes,
                        const std::vector<EvalResult>& evals)
    {
        for (const auto& e : evals) {
            if (!e.source.empty() && e.source != "lengen")
                continue;  // imported Python metrics are not this sweep's cells
            methodOrder.try_emplace(e.method, int(methodOrder.size()));
            auto& p = setFor(cell, groupAxes, 0, e.method, e.intervention);
            p.set.trainPoints = e.trainPoints;
            keepLeastTrained(p.set, e.trainedPoints);
            p.set.nPoints = std::max(p.set.nPoints, e.nPoints);
            p.set.dims = e.dims;
            p.set.zeroEstimator = e.zeroEstimator;
            p.set.classification = e.classification;
            for (size_t i = 0; i < e.curves.size(); ++i) {
                // The transformer's key is its PE label, which differs between groups.
                const std::string key = i == 0 ? "model" : e.curves[i].model;
                addCurve(p, key, e.curves[i].label, i == 0, e.curves[i].stats.mean);
            }
        }
    }

    void addProbes(const SweepCell& cell, const Axes& groupAxes,
                   const std::vector<ProbeGroup>& probes)
    {
        for (const auto& g : probes) {
            auto& p = setFor(cell, groupAxes, 1, g.path);
            const auto param = [&](const char* k) {
                const auto it = g.params.find(k);
                return it == g.params.end() ? 0 : int(it->second);
            };
            p.set.trainPoints = param("train_points");
            keepLeastTrained(p.set, param("trained_points"));
            p.set.dims = param("dims");
            // A probe records the error of predicting 0 beside its dims (probe_common.cpp),
            // as an evaluation does; older probes without it read as dims.
            const auto zero = g.params.find("zero_estimator");
            p.set.zeroEstimator = zero == g.params.end() ? p.set.dims : zero->second;
            p.set.classification = g.classification;
            for (const auto& c : g.curves) {
                p.set.nPoints = std::max(p.set.nPoints, int(c.stats.mean.size()));
                addCurve(p, c.name, c.name, true, c.stats.mean);
            }
        }
    }

    // Each set's curves combined over seeds: evaluations before probes, methods and groups in
    // grid order.
    std::vector<AggregateSet> combine(const AggregateOptions& options)
    {
        std::mt19937_64 rng(options.seed);
        std::vector<std::pair<std::tuple<int, int, std::string, int>, AggregateSet>> sets;
        for (auto& [key, p] : pending) {
            for (const auto& k : p.order) {
                const auto& in = p.curves[k];
                auto curve =
                    combineOverSeeds(in.perSeed, options.band, options.bootstrapTrials, rng);
                curve.key = k;
                curve.label = in.label;
                curve.transformer = in.transformer;
                p.set.curves.push_back(std::move(curve));
            }
            const int order = std::get<0>(key) == 0 ? methodOrder[std::get<1>(key)] : 0;
            sets.push_back(
                {{std::get<0>(key), order, std::get<1>(key), groupOrder[std::get<2>(key)]},
                 std::move(p.set)});
        }
        std::stable_sort(sets.begin(), sets.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        std::vector<AggregateSet> out;
        for (auto& [k, set] : sets)
            out.push_back(std::move(set));
        return out;
    }
};

}  // namespace

SweepAggregate aggregateSweep(const std::string& sweepDir, const AggregateOptions& options)
{
    const SweepPaths paths{locateSweep(sweepDir)};
    const auto index = readSweepIndex(paths.root);
    SweepAggregate out;
    out.sweep = index.name;
    out.bootstrapTrials = options.bootstrapTrials;
    out.groupBy = groupKeys(index, options);
    Gathered gathered;
    for (const auto& cell : index.cells) {
        Axes groupAxes;
        for (const auto& k : out.groupBy)
            for (const auto& [ak, av] : cell.axes)
                if (ak == k)
                    groupAxes.emplace_back(ak, av);
        gathered.groupOrder.try_emplace(groupName(groupAxes), int(gathered.groupOrder.size()));
        const std::string run = paths.runFile(cell.name);
        const bool hasAnalysis = fs::exists(run) && fs::exists(analysisFileFor(run));
        const auto evals = hasAnalysis ? readEvaluations(run) : std::vector<EvalResult>{};
        const auto probes = hasAnalysis ? readProbeGroups(run) : std::vector<ProbeGroup>{};
        if (evals.empty() && probes.empty()) {
            out.missing.push_back(cell.name);
            continue;
        }
        gathered.addEvaluations(cell, groupAxes, evals);
        gathered.addProbes(cell, groupAxes, probes);
    }
    out.sets = gathered.combine(options);
    return out;
}

std::vector<std::string> aggregateMethods(const SweepAggregate& aggregate)
{
    std::vector<std::string> out;
    for (const auto& s : aggregate.sets)
        if (s.kind == "eval" && std::find(out.begin(), out.end(), s.name) == out.end())
            out.push_back(s.name);
    return out;
}

std::vector<AggregateRow> aggregateTable(const SweepAggregate& aggregate, const std::string& method)
{
    std::vector<AggregateRow> rows;
    for (const auto& set : aggregate.sets) {
        if (set.kind != "eval" || set.name != method || set.curves.empty() ||
            set.curves[0].mean.empty())
            continue;
        const auto& c = set.curves[0];  // the trained model
        AggregateRow r;
        r.set = &set;
        r.lastPosition = int(c.mean.size()) - 1;
        r.trainPosition = trainingPosition(set.trainedPoints, set.trainPoints, r.lastPosition);
        r.trainMean = c.mean[size_t(r.trainPosition)];
        r.trainLow = c.low[size_t(r.trainPosition)];
        r.trainHigh = c.high[size_t(r.trainPosition)];
        r.lastMean = c.mean.back();
        r.lastLow = c.low.back();
        r.lastHigh = c.high.back();
        r.seeds = c.seeds.back();
        r.band = c.band;
        rows.push_back(r);
    }
    return rows;
}

}  // namespace lengen::engine
