#include "compare_figure.h"
#include "category_colors.h"
#include "parallel_coords.h"

#include "compare_logged.h"

#include <QDateTime>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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
bool encodingKey(const std::string& key)
{
    return key.rfind("patch.", 0) == 0 || key == "model.rope_theta";
}

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

// The group label: the PE's name alone, or "num_hidden_layers=4" (the key's last part; with
// its parent where that says nothing alone: "points.interval=800", not "interval=800").
std::string labelOf(const RunFacts& r, const std::vector<std::string>& keys)
{
    std::string out;
    for (const auto& k : keys) {
        const auto v = valueOf(r, k);
        const auto shortKey = plots::shortKeyName(k);  // "points.end", not "end"
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
        std::string out;                   // "pe=rope seed=2" without the seed
        for (const auto& part :
             QString::fromStdString(info.sweepAxes).split(' ', Qt::SkipEmptyParts))
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

// What differs between the evaluations a group averages: "prompts 128/1280", "eval seeds 1/2",
// "lengths 72/144 points" (the OOD factor), joined by "; "; "" when they were made alike.
std::string mixedEvaluations(const std::vector<engine::EvalResult>& results,
                             const std::vector<size_t>& idx)
{
    std::string out;
    const auto add = [&](const char* what, auto get, const char* unit) {
        std::set<std::uint64_t> values;
        for (size_t i : idx)
            values.insert(std::uint64_t(get(results[i])));
        if (values.size() < 2)
            return;
        std::string list;
        for (const auto v : values)
            list += (list.empty() ? "" : "/") + std::to_string(v);
        out += (out.empty() ? "" : "; ") + std::string(what) + " " + list + unit;
    };
    add(
        "prompts", [](const engine::EvalResult& r) { return r.prompts; }, "");
    add(
        "eval seeds", [](const engine::EvalResult& r) { return r.seed; }, "");
    add(
        "lengths", [](const engine::EvalResult& r) { return r.nPoints; }, " points");
    return out;
}

}  // namespace

namespace {
const std::pair<CompareGroup, const char*> kGroupNames[] = {
    {CompareGroup::EachRun, "each-run"},    {CompareGroup::Settings, "settings"},
    {CompareGroup::Keys, "keys"},           {CompareGroup::PositionEncoding, "pe"},
    {CompareGroup::Task, "task"},           {CompareGroup::Backbone, "backbone"},
    {CompareGroup::SweepAxes, "sweep-axes"}};
}  // namespace

const char* compareGroupName(CompareGroup group)
{
    for (const auto& [g, name] : kGroupNames)
        if (g == group)
            return name;
    return "each-run";
}

std::optional<CompareGroup> compareGroupFromName(const std::string& name)
{
    for (const auto& [g, n] : kGroupNames)
        if (name == n)
            return g;
    return std::nullopt;
}

std::vector<std::string> parseGroupKeys(const QString& text)
{
    std::vector<std::string> keys;
    for (const auto& k : text.split(QRegularExpression("[,\\s]+"), Qt::SkipEmptyParts))
        keys.push_back(k.toStdString());
    return keys;
}

namespace {

// Every selected run read once; those with the method keep their evaluation.
struct Compared {
    std::vector<RunFacts> everyRun, facts;  // facts: the runs with the method, as `results`
    std::vector<engine::EvalResult> results;
    std::vector<std::vector<std::int64_t>> steps;  // a logged column's rows, per result
    std::vector<std::vector<double>> seconds;      // and their training clock
    std::vector<std::int64_t> loggedSteps;         // the steps any run logged (alignLogged)
};

Compared readCompared(const QStringList& runFiles, const std::string& method, QStringList& missing)
{
    Compared c;
    for (const auto& run : runFiles) {
        const auto info = engine::readRunInfo(engine::locateRunFile(run.toStdString()));
        const auto config = engine::storedRunConfig(info.configYaml, info.path);
        c.everyRun.push_back({info, config, engine::flattenedConfig(config)});
        if (isLoggedMethod(method)) {  // a column of its training log, by step
            if (auto logged = readLoggedRun(run.toStdString(), method)) {
                c.facts.push_back(c.everyRun.back());
                c.results.push_back(std::move(logged->result));
                c.steps.push_back(std::move(logged->steps));
                c.seconds.push_back(std::move(logged->seconds));
            } else {
                missing << run;
            }
            continue;
        }
        bool found = false;
        for (auto& r : engine::readEvaluations(run.toStdString())) {
            if (r.method != method || r.source != "lengen" || !r.intervention.empty() ||
                r.curves.empty())
                continue;
            found = true;
            c.facts.push_back(c.everyRun.back());
            c.results.push_back(std::move(r));
            break;
        }
        if (!found)
            missing << run;
    }
    return c;
}

// Named, not hidden: the runs of one group that differ in more than the grouping keys.
void noteExtraKeys(CompareResult& out, const std::string& group,
                   const std::vector<const RunFacts*>& runs, bool byKeys,
                   const CompareOptions& options)
{
    if (runs.size() < 2)
        return;
    auto extra = differingKeys(runs);
    extra.erase(std::remove_if(extra.begin(), extra.end(),
                               [&](const std::string& k) {
                                   return std::find(out.keys.begin(), out.keys.end(), k) !=
                                              out.keys.end() ||
                                          (!byKeys && k == "pe" &&
                                           options.group == CompareGroup::PositionEncoding);
                               }),
                extra.end());
    if (extra.empty())
        return;
    QStringList names;
    for (const auto& k : extra)
        names << QString::fromStdString(k);
    out.notes << QStringLiteral("%1: its %2 runs also differ in %3")
                     .arg(QString::fromStdString(group))
                     .arg(runs.size())
                     .arg(names.join(", "));
}

// One group's curve: its runs combined over seeds. A group of one selected run keeps that run's
// colour (the same curve as ungrouped); a group of several takes its own, which its members'
// swatches in the Runs list show, decided by the selection (`selectedIds`), not by who has
// this method. Curves averaged over evaluations made differently are flagged, not mixed
// silently.
plots::Series groupSeries(const std::string& group, const std::vector<size_t>& idx,
                          const Compared& c, const std::vector<std::string>& selectedIds,
                          const CompareOptions& options, CompareResult& out)
{
    std::vector<std::vector<double>> perRun;
    for (size_t i : idx)
        perRun.push_back(c.results[i].curves.front().stats.mean);
    const auto combined = engine::combineOverSeeds(perRun, options.band, options.bootstrapTrials);
    engine::CurveStats stats;
    stats.mean = combined.mean;
    stats.bootstrapLow = combined.low;
    stats.bootstrapHigh = combined.high;
    // A logged column's group whose runs end at different steps: its mean goes on over the
    // runs still logging, and says where N drops (issue 80, defect 3).
    if (idx.size() > 1 && !c.loggedSteps.empty())
        for (size_t p = 0; p + 1 < combined.seeds.size() && p + 1 < c.loggedSteps.size(); ++p)
            if (combined.seeds[p] == std::int64_t(idx.size()) &&
                combined.seeds[p + 1] < combined.seeds[p]) {
                out.notes << QStringLiteral("%1: the mean of its %2 runs to step %3, of fewer "
                                            "after (they end or log elsewhere)")
                                 .arg(QString::fromStdString(group))
                                 .arg(idx.size())
                                 .arg(c.loggedSteps[p]);
                break;
            }
    const bool single = selectedIds.size() == 1;
    const std::string colour =
        single ? plots::runColor(selectedIds.front()) : figures::categoryColor(group);
    for (size_t i : idx)
        plots::showRunColorAs(c.facts[i].info.runId, single ? std::string() : "group:" + group);
    const auto mixed = mixedEvaluations(c.results, idx);
    if (!mixed.empty())
        out.notes << QStringLiteral("%1 averages evaluations of different %2")
                         .arg(QString::fromStdString(group), QString::fromStdString(mixed));
    return figures::curveSeries(group + " (" + engine::seedLegend(combined) + ")" +
                                    (mixed.empty() ? std::string() : " ⚠ mixed " + mixed),
                                stats, colour, combined.band != "none");
}

// The keys groups are formed by: the user's (Keys), else those the selected runs differ in.
std::vector<std::string> compareGroupingKeys(const Compared& c, const CompareOptions& options)
{
    if (options.group == CompareGroup::Keys)
        return options.keys;
    std::vector<const RunFacts*> all;
    for (const auto& r : c.everyRun)
        all.push_back(&r);
    return differingKeys(all);
}

// The runs' groups: each group's selected runs, and the runs with the method by group.
struct CompareGroups {
    std::map<std::string, std::vector<std::string>> selected;  // group -> every selected run's id
    std::vector<std::string> order;                            // in order of first appearance
    std::map<std::string, std::vector<size_t>> members;        // group -> indices into facts
};

// Every run's group under the options (by keys: `keys`, the runs' values of them).
CompareGroups groupCompared(const Compared& c, const std::vector<std::string>& keys, bool byKeys,
                            const CompareOptions& options)
{
    const auto groupOf = [&](const RunFacts& r) {
        if (byKeys)
            return keys.empty() ? r.info.positionEncoding : labelOf(r, keys);
        return options.group == CompareGroup::EachRun ? r.info.runId
                                                      : shortcutKey(r.info, options.group);
    };
    CompareGroups g;
    for (const auto& r : c.everyRun)
        g.selected[groupOf(r)].push_back(r.info.runId);
    // Groups in order of first appearance: key -> runs (indices into facts).
    for (size_t i = 0; i < c.facts.size(); ++i) {
        const std::string key = groupOf(c.facts[i]);
        if (!g.members.count(key))
            g.order.push_back(key);
        g.members[key].push_back(i);
    }
    return g;
}

// What the axes take from the evaluations drawn.
struct ComparedAxes {
    bool classification = false;
    double zero = 0;
    std::set<int> trained;  // the runs' training lengths in points
    std::string task;
};

// The first run's baselines, dashed and thinner than the model curves.
void addCompareBaselines(plots::FigureSpec& f, const engine::EvalResult& r)
{
    for (size_t b = 1; b < r.curves.size(); ++b) {
        auto base = figures::curveSeries(r.curves[b].label, r.curves[b].stats,
                                         plots::baselineColor(int(b) - 1), false);
        base.dashed = true;
        base.width = 1.5;
        f.series.push_back(base);
    }
}

// Each run's own curve (each run its group), the baselines, and what the axes take from them.
ComparedAxes addCompareRunCurves(plots::FigureSpec& f, const Compared& c, bool baselines,
                                 const CompareOptions& options)
{
    ComparedAxes axes;
    for (size_t i = 0; i < c.facts.size(); ++i) {
        const auto& r = c.results[i];
        if (options.group == CompareGroup::EachRun) {
            plots::showRunColorAs(c.facts[i].info.runId, {});
            // The run's own colour: the same in the training overlay and the run table.
            f.series.push_back(figures::curveSeries(figures::runLegend(c.facts[i].info),
                                                    r.curves.front().stats,
                                                    plots::runColor(c.facts[i].info.runId)));
        }
        if (baselines && i == 0)
            addCompareBaselines(f, r);
        axes.classification = r.classification;
        axes.zero = std::max(axes.zero, r.zeroEstimator);
        axes.trained.insert(r.trainedPoints);  // readEvaluations fills it for older results
        axes.task = c.facts[i].info.task;
    }
    return axes;
}

// One curve per group, before the baselines, and a note on each group whose runs differ in
// more than its keys.
void addCompareGroupCurves(CompareResult& out, const Compared& c, CompareGroups& groups,
                           bool byKeys, const CompareOptions& options)
{
    auto& f = out.figure;
    for (size_t g = 0; g < groups.order.size(); ++g) {
        const auto& key = groups.order[g];
        const auto& idx = groups.members[key];
        f.series.insert(f.series.begin() + std::ptrdiff_t(g),
                        groupSeries(key, idx, c, groups.selected[key], options, out));
        std::vector<const RunFacts*> runs;
        for (size_t i : idx)
            runs.push_back(&c.facts[i]);
        noteExtraKeys(out, key, runs, byKeys, options);
    }
}

// The error axes over the longest curve, and what each run last trained on (issue 52): one
// marker, or one per length where runs differ.
void compareErrorAxes(plots::FigureSpec& f, const ComparedAxes& axes)
{
    double xMax = 0;
    for (const auto& s : f.series)
        xMax = std::max(xMax, double(s.x.size()) - 1);
    figures::errorAxes(f, axes.classification, axes.zero, xMax);
    const auto& trained = axes.trained;
    for (const int t : trained)
        if (t > 0 && xMax > figures::trainLengthK(t))  // only where the prompts go beyond it
            f.vlines.push_back(
                {figures::trainLengthK(t), trained.size() == 1
                                               ? std::string("train length")
                                               : "train length " + std::to_string(t) + " points"});
}

// A logged column's runs at the steps any of them logged, their clocks too, each run smoothed
// as chosen; those steps.
std::vector<std::int64_t> alignLogged(Compared& c, const CompareOptions& options)
{
    const auto common = alignLoggedRuns(c.results, c.steps);
    c.loggedSteps = common;
    for (size_t i = 0; i < c.results.size(); ++i) {
        c.seconds[i] = valuesAtSteps(c.seconds[i], c.steps[i], common);
        if (options.smoothing > 0 && isSmoothable(c.results[i].method)) {
            auto& values = c.results[i].curves.front().stats.mean;
            values = emaOf(values, options.smoothing);
        }
    }
    return common;
}

// Seconds from the epoch of a run's creation (ISO 8601, UTC); NaN when unreadable.
double createdSeconds(const engine::RunFileInfo& info)
{
    const auto t = QDateTime::fromString(QString::fromStdString(info.createdAt), Qt::ISODate);
    return t.isValid() ? double(t.toSecsSinceEpoch()) : std::nan("");
}

// Each run's place in time at the common steps: its training clock, plus (wall time) its
// creation counted from the earliest compared run's.
std::vector<std::vector<double>> runTimes(const Compared& c, LoggedX x, std::string& origin)
{
    std::vector<std::vector<double>> t = c.seconds;
    if (x != LoggedX::Wall)
        return t;
    std::vector<double> created;  // each run's creation, parsed once (not once per logged row)
    double first = std::numeric_limits<double>::infinity();
    for (const auto& f : c.facts) {
        created.push_back(createdSeconds(f.info));
        if (std::isfinite(created.back()) && created.back() < first) {
            first = created.back();
            origin = f.info.createdAt;
        }
    }
    for (size_t i = 0; i < t.size(); ++i)
        for (double& v : t[i])
            v += created[i] - first;
    return t;
}

// The x of every series of a logged figure, in the series' order: the steps; or each run's time
// (a run's curve) or the mean of its runs' times (a group's curve), in s, min or h.
LoggedXAxis loggedXAxis(const Compared& c, const CompareGroups& groups,
                        const CompareOptions& options, const std::vector<std::int64_t>& common,
                        CompareResult& out)
{
    LoggedXAxis axis;
    if (options.x == LoggedX::Step) {
        axis.label = "step";
        axis.perSeries.assign(std::max(c.facts.size(), groups.order.size()),
                              std::vector<double>(common.begin(), common.end()));
        return axis;
    }
    std::string origin;
    const auto times = runTimes(c, options.x, origin);
    for (size_t i = 0; i < times.size(); ++i)
        if (std::none_of(times[i].begin(), times[i].end(),
                         [](double v) { return std::isfinite(v); }))
            out.notes << QStringLiteral("%1 logged no wall clock: not on a time axis")
                             .arg(QString::fromStdString(figures::runLegend(c.facts[i].info)));
    if (options.group == CompareGroup::EachRun) {
        axis.perSeries = times;
    } else {
        for (const auto& key : groups.order) {  // the group's curves come first, in this order
            std::vector<std::vector<double>> members;
            for (const size_t i : groups.members.at(key))
                members.push_back(times[i]);
            axis.perSeries.push_back(
                engine::combineOverSeeds(members, engine::BandKind::MinMax, 0).mean);
        }
    }
    const std::string unit = scaleSeconds(axis.perSeries);
    axis.label = options.x == LoggedX::Relative ? "relative time (" + unit + ")"
                                                : "wall time (" + unit + " since " + origin + ")";
    return axis;
}

}  // namespace

CompareResult compareRuns(const QStringList& runFiles, const std::string& method, bool baselines,
                          const CompareOptions& options)
{
    CompareResult out;
    auto& f = out.figure;
    // The groups (their keys, names and colours) come from every selected run, so that a group
    // is the same group, in the same colour, in every method's figure, whichever of its runs
    // lack one (issue 52: the RoPE group was pink in one method and vermilion in the others).
    Compared c = readCompared(runFiles, method, out.missing);
    const bool logged = isLoggedMethod(method);
    const auto steps = logged ? alignLogged(c, options) : std::vector<std::int64_t>{};
    for (size_t i = 0; i < c.facts.size(); ++i)  // a log is no stored evaluation: the run alone
        out.sources.push_back(
            {c.facts[i].info, logged ? std::vector<figures::DrawnEvaluation>{}
                                     : std::vector{figures::drawnEvaluation(c.results[i])}});
    const bool byKeys =
        options.group == CompareGroup::Settings || options.group == CompareGroup::Keys;
    if (byKeys)
        out.keys = compareGroupingKeys(c, options);
    CompareGroups groups = groupCompared(c, out.keys, byKeys, options);
    const ComparedAxes axes = addCompareRunCurves(f, c, baselines, options);
    if (options.group != CompareGroup::EachRun)
        addCompareGroupCurves(out, c, groups, byKeys, options);
    // The runs Compare shows now (in some method): their swatches in the Runs list; the runs it
    // dropped lose theirs.
    std::vector<std::string> drawn;
    for (const auto& facts : c.everyRun)
        drawn.push_back(facts.info.runId);
    plots::setRunsDrawn("compare", drawn);
    f.title = axes.task + " - " + method;  // no count of curves: an export leaves hidden ones out
    if (logged) {  // by step or time, and no training-length marker: there are no prompts
        loggedAxes(f, method, loggedXAxis(c, groups, options, steps, out), options.smoothing);
        return out;
    }
    compareErrorAxes(f, axes);
    return out;
}

plots::FigureSpec compareFigure(const QStringList& runFiles, const std::string& method,
                                bool baselines, QStringList* missing, CompareGroup group)
{
    CompareOptions options;
    options.group = group;
    auto r = compareRuns(runFiles, method, baselines, options);
    if (missing)
        *missing << r.missing;
    return std::move(r.figure);
}

}  // namespace lengen::ui
