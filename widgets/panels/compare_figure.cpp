#include "compare_figure.h"

#include <QRegularExpression>

#include <algorithm>
#include <map>
#include <set>

#include "figure_builder.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/encodings.h"
#include "lengen/engine/run_file.h"
#include "run_figures.h"

namespace lengen::ui {

namespace {

// A key that belongs to the position encoding: grouped as one "pe" (RoPE, not "patch.name=…,
// patch.rope_scaling.type=…").
bool encodingKey(const std::string& key) { return key.rfind("patch.", 0) == 0 || key == "model.rope_theta"; }

// What Compare knows of one run: its header, its resolved config and that config flattened.
struct RunFacts {
    engine::RunFileInfo info;
    engine::RunConfig config;
    std::map<std::string, std::string> flat;
};

// A run's value of a grouping key: an alias (pe, task, backbone, seed) or a resolved key.
std::string valueOf(const RunFacts& r, const std::string& key)
{
    if (key == "pe")
        return engine::encodingOf(r.config).display;
    if (key == "task")
        return r.info.task;
    if (key == "backbone")
        return r.info.backbone;
    if (key == "seed")
        return std::to_string(r.info.seed);
    const auto it = r.flat.find(key);
    return it == r.flat.end() ? "—" : it->second;
}

// The group label: the PE's name alone, or "num_hidden_layers=4" (the key's last part).
std::string labelOf(const RunFacts& r, const std::vector<std::string>& keys)
{
    std::string out;
    for (const auto& k : keys) {
        const auto v = valueOf(r, k);
        const auto shortKey = k.substr(k.rfind('.') == std::string::npos ? 0 : k.rfind('.') + 1);
        const bool bare = k == "pe" || k == "task" || k == "backbone";
        out += (out.empty() ? "" : ", ") + (bare ? v : shortKey + "=" + v);
    }
    return out;
}

// The group a run belongs to under the older shortcuts.
std::string shortcutKey(const engine::RunFileInfo& info, CompareGroup group)
{
    switch (group) {
    case CompareGroup::PositionEncoding: return info.positionEncoding;
    case CompareGroup::Task: return info.task;
    case CompareGroup::Backbone: return info.backbone;
    case CompareGroup::SweepAxes: {
        if (info.sweepAxes.empty())
            return info.positionEncoding;  // not a sweep cell: its PE
        std::string out;  // "pe=rope seed=2" without the seed
        for (const auto& part : QString::fromStdString(info.sweepAxes).split(' ', Qt::SkipEmptyParts))
            if (!part.startsWith("seed="))
                out += (out.empty() ? "" : " ") + part.toStdString();
        return out.empty() ? info.sweepName : out;
    }
    default: break;
    }
    return info.runId;
}

// The keys a set of runs differs in, the seed aside and the encoding's keys as one "pe".
std::vector<std::string> differingKeys(const std::vector<const RunFacts*>& runs)
{
    std::vector<engine::RunConfig> configs;
    for (const auto* r : runs)
        configs.push_back(r->config);
    std::vector<std::string> keys;
    bool pe = false;
    for (const auto& d : engine::configDifferences(configs)) {
        if (d.key == "seed")
            continue;
        if (encodingKey(d.key)) {
            pe = true;
            continue;
        }
        keys.push_back(d.key);
    }
    std::set<std::string> displays;
    for (const auto* r : runs)
        displays.insert(valueOf(*r, "pe"));
    if (pe || displays.size() > 1)
        keys.insert(keys.begin(), "pe");
    return keys;
}

}  // namespace

std::vector<std::string> parseGroupKeys(const QString& text)
{
    std::vector<std::string> keys;
    for (const auto& k : text.split(QRegularExpression("[,\\s]+"), Qt::SkipEmptyParts))
        keys.push_back(k.toStdString());
    return keys;
}

CompareResult compareRuns(const QStringList& runFiles, const std::string& method, bool baselines,
                          const CompareOptions& options)
{
    CompareResult out;
    auto& f = out.figure;
    // Every run with the method, read once.
    std::vector<RunFacts> facts;
    std::vector<engine::EvalResult> results;
    for (const auto& run : runFiles) {
        const auto info = engine::readRunInfo(engine::locateRunFile(run.toStdString()));
        bool found = false;
        for (auto& r : engine::readEvaluations(run.toStdString())) {
            if (r.method != method || r.source != "lengen" || !r.intervention.empty() || r.curves.empty())
                continue;
            found = true;
            const auto config = engine::storedRunConfig(info.configYaml, info.path);
            facts.push_back({info, config, engine::flattenedConfig(config)});
            results.push_back(std::move(r));
            break;
        }
        if (!found)
            out.missing << run;
    }
    const bool byKeys = options.group == CompareGroup::Settings || options.group == CompareGroup::Keys;
    if (byKeys) {
        std::vector<const RunFacts*> all;
        for (const auto& r : facts)
            all.push_back(&r);
        out.keys = options.group == CompareGroup::Keys ? options.keys : differingKeys(all);
    }
    // Groups in order of first appearance: key -> runs (indices into facts).
    std::vector<std::string> order;
    std::map<std::string, std::vector<size_t>> members;
    for (size_t i = 0; i < facts.size(); ++i) {
        std::string key;
        if (byKeys)
            key = out.keys.empty() ? facts[i].info.positionEncoding : labelOf(facts[i], out.keys);
        else
            key = options.group == CompareGroup::EachRun ? facts[i].info.runId : shortcutKey(facts[i].info, options.group);
        if (!members.count(key))
            order.push_back(key);
        members[key].push_back(i);
    }
    bool classification = false;
    double zero = 0, train = 0;
    std::string task;
    for (size_t i = 0; i < facts.size(); ++i) {
        const auto& r = results[i];
        if (options.group == CompareGroup::EachRun) {
            plots::showRunColorAs(facts[i].info.runId, {});
            // The run's own colour: the same in the training overlay and the run table.
            f.series.push_back(figures::curveSeries(figures::runLegend(facts[i].info), r.curves.front().stats,
                                                    plots::runColor(facts[i].info.runId)));
        }
        if (baselines && i == 0)
            for (size_t b = 1; b < r.curves.size(); ++b) {
                auto base = figures::curveSeries(r.curves[b].label, r.curves[b].stats, {}, false);
                base.dashed = true;
                base.width = 1.5;
                f.series.push_back(base);
            }
        classification = r.classification;
        zero = std::max(zero, r.zeroEstimator);
        train = r.trainPoints;
        task = facts[i].info.task;
    }
    if (options.group != CompareGroup::EachRun)
        for (size_t g = 0; g < order.size(); ++g) {  // one curve per group, before the baselines
            const auto& idx = members[order[g]];
            std::vector<std::vector<double>> perRun;
            std::vector<const RunFacts*> runs;
            for (size_t i : idx) {
                perRun.push_back(results[i].curves.front().stats.mean);
                runs.push_back(&facts[i]);
            }
            const auto c = engine::combineOverSeeds(perRun, options.band, options.bootstrapTrials);
            engine::CurveStats stats;
            stats.mean = c.mean;
            stats.bootstrapLow = c.low;
            stats.bootstrapHigh = c.high;
            // A group of one run keeps that run's colour (the same curve as ungrouped); a group
            // of several takes its own, which its members' swatches in the Runs list show.
            const std::string colour = idx.size() == 1 ? plots::runColor(facts[idx[0]].info.runId)
                                                       : plots::runColor("group:" + order[g]);
            for (size_t i : idx)
                plots::showRunColorAs(facts[i].info.runId, idx.size() == 1 ? std::string() : "group:" + order[g]);
            auto series = figures::curveSeries(order[g] + " (" + engine::seedLegend(c) + ")", stats, colour,
                                               c.band != "none");
            f.series.insert(f.series.begin() + std::ptrdiff_t(g), series);
            // Named, not hidden: runs of one group that differ in more than the grouping keys.
            if (idx.size() > 1) {
                auto extra = differingKeys(runs);
                extra.erase(std::remove_if(extra.begin(), extra.end(),
                                           [&](const std::string& k) {
                                               return std::find(out.keys.begin(), out.keys.end(), k) != out.keys.end() ||
                                                      (!byKeys && k == "pe" && options.group == CompareGroup::PositionEncoding);
                                           }),
                            extra.end());
                if (!extra.empty()) {
                    QStringList names;
                    for (const auto& k : extra)
                        names << QString::fromStdString(k);
                    out.notes << QStringLiteral("%1: its %2 runs also differ in %3")
                                     .arg(QString::fromStdString(order[g]))
                                     .arg(idx.size())
                                     .arg(names.join(", "));
                }
            }
        }
    f.title = task + " - " + method;  // no count of curves: an export leaves hidden ones out
    double xMax = 0;
    for (const auto& s : f.series)
        xMax = std::max(xMax, double(s.x.size()) - 1);
    figures::errorAxes(f, classification, zero, xMax);
    if (train > 0 && xMax > figures::trainLengthK(int(train)))  // only where the prompts go beyond it
        f.vlines.push_back({figures::trainLengthK(int(train)), "train length"});
    return out;
}

plots::FigureSpec compareFigure(const QStringList& runFiles, const std::string& method, bool baselines,
                                QStringList* missing, CompareGroup group)
{
    CompareOptions options;
    options.group = group;
    auto r = compareRuns(runFiles, method, baselines, options);
    if (missing)
        *missing << r.missing;
    return std::move(r.figure);
}

}  // namespace lengen::ui
