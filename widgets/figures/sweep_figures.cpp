#include "sweep_figures.h"
#include "category_colors.h"
#include "lengen/engine/seed_stats.h"

#include <algorithm>
#include <map>
#include <set>

#include "figures_internal.h"
#include "lengen/engine/errors.h"
#include "run_figures.h"

namespace lengen::figures {

namespace {

std::string axisValue(const engine::AggregateSet& s, const std::string& key)
{
    for (const auto& [k, v] : s.groupAxes)
        if (k == key)
            return v;
    return {};
}

// The set's task: its `task` axis, else the sweep's one task.
std::string taskOf(const engine::AggregateSet& s)
{
    std::string task = axisValue(s, "task");
    return task.empty() ? s.task : task;
}

// "RoPE" or "RoPE num_hidden_layers=6": the model's label and the axes that are neither the
// panel's (task) nor already in the label (pe), nor `fixed` (one value in every set: the
// sweep's `--set training.max_steps=8000` tells the curves nothing apart).
std::string curveName(const engine::AggregateSet& s, const std::set<std::string>& fixed)
{
    std::string name = s.curves.front().label;
    for (const auto& [k, v] : s.groupAxes)
        if (k != "task" && k != "pe" && k != "intervention" &&
            !fixed.count(k))  // the label names these
            name += " " + k.substr(k.rfind('.') + 1) + "=" + v;
    return name;
}

// A curve in a panel of one PE: the intervention ("untouched" without one) and the config axes
// that vary ("untouched max_position=144").
std::string settingName(const engine::AggregateSet& s, const std::set<std::string>& fixed)
{
    std::string name;
    for (const auto& [k, v] : s.groupAxes)
        if (k == "intervention")
            name = v;
    if (name.empty())
        name = "untouched";
    bool configAxis = false;
    for (const auto& [k, v] : s.groupAxes)
        if (k != "task" && k != "pe" && k != "intervention" && !fixed.count(k)) {
            name += " " + k.substr(k.rfind('.') + 1) + "=" + v;
            configAxis = true;
        }
    // Without interventions the word says nothing: "max_position=144".
    const std::string untouched = "untouched ";
    if (configAxis && name.compare(0, untouched.size(), untouched) == 0 &&
        axisValue(s, "intervention").empty())
        name = name.substr(untouched.size());
    return name;
}

// The group axes that take one value over the method's sets.
std::set<std::string> fixedAxes(const engine::SweepAggregate& aggregate, const std::string& method)
{
    std::map<std::string, std::set<std::string>> values;
    for (const auto& s : aggregate.sets)
        if (s.kind == "eval" && s.name == method)
            for (const auto& [k, v] : s.groupAxes)
                values[k].insert(v);
    std::set<std::string> fixed;
    for (const auto& [k, v] : values)
        if (v.size() == 1)
            fixed.insert(k);
    return fixed;
}

// With one task, a panel per PE reads better when something besides the PE varies: with
// interventions (docs/interventions.md) its curves are the untouched model and each
// intervention on it; with a config axis (`--set training.random_positions.max_position=0,144`)
// each value of that setting on the encoding.
bool sweepPanelsByPe(const engine::SweepAggregate& aggregate, const std::string& method,
                     const std::set<std::string>& fixed)
{
    bool oneTask = true, varies = false;
    std::string firstTask;
    for (const auto& s : aggregate.sets)
        if (s.kind == "eval" && s.name == method) {
            const std::string t = taskOf(s);
            if (firstTask.empty())
                firstTask = t;
            oneTask = oneTask && t == firstTask;
            for (const auto& [k, v] : s.groupAxes)
                varies =
                    varies || k == "intervention" || (k != "task" && k != "pe" && !fixed.count(k));
        }
    return oneTask && varies;
}

// The grid's panels in order of first appearance, and what its title says of their curves.
struct SweepPanels {
    std::vector<std::string> order;
    std::map<std::string, plots::FigureSpec> panels;
    std::map<std::string, int> longest;
    std::string bands;
    std::int64_t fewest = -1, most = 0;
};

// A fresh panel's title, axes and training-length marker, from its first set.
void startSweepPanel(plots::FigureSpec& f, const engine::AggregateSet& s, const std::string& key,
                     const std::string& task, const std::string& method, bool byPe)
{
    f.title = byPe ? key + " - " + task + " (D = " + std::to_string(s.dims) + ")"
                   : (task.empty() ? method : task) + " (D = " + std::to_string(s.dims) + ")";
    errorAxes(f, s.classification, s.zeroEstimator, s.nPoints - 1);
    const int trained = s.trainedPoints > 0 ? s.trainedPoints : s.trainPoints;
    if (s.nPoints - 1 > trainLengthK(trained))
        f.vlines.push_back({trainLengthK(trained), "train length"});
}

// A set's curve: its mean over seeds with the band; in a panel per PE, an intervention's curve
// dashed in the intervention's colour.
plots::Series sweepSeries(const engine::AggregateSet& s, bool byPe,
                          const std::set<std::string>& fixed)
{
    const auto& c = s.curves.front();
    plots::Series series;
    const std::string intervention = axisValue(s, "intervention");
    series.name = byPe ? settingName(s, fixed) : curveName(s, fixed);
    if (byPe && !intervention.empty()) {
        series.color = interventionColor(intervention);
        series.dashed = true;
    }
    for (size_t i = 0; i < c.mean.size(); ++i)
        series.x.push_back(double(i));
    series.y = c.mean;
    series.bandLow = c.low;
    series.bandHigh = c.high;
    return series;
}

// One set's curve into its panel (made on the panel's first set); its band and seeds noted.
void addSweepCurve(SweepPanels& p, const engine::AggregateSet& s, const std::string& method,
                   bool byPe, const std::set<std::string>& fixed)
{
    const std::string task = taskOf(s);
    // The panel's key: the task, or (byPe) the model's own label without the intervention.
    const std::string label = s.curves.front().label;
    const std::string key = byPe ? label.substr(0, label.find(" + ")) : task;
    auto [it, fresh] = p.panels.try_emplace(key);
    auto& f = it->second;
    if (fresh) {
        p.order.push_back(key);
        startSweepPanel(f, s, key, task, method, byPe);
    }
    const auto& c = s.curves.front();
    f.series.push_back(sweepSeries(s, byPe, fixed));
    p.longest[key] = std::max(p.longest[key], s.nPoints - 1);
    const auto band = engine::bandDescription(c.band);  // "mean ± SE", "no band", …
    if (p.bands.find(band) == std::string::npos)
        p.bands += (p.bands.empty() ? "" : " / ") + band;
    const auto [lo, hi] = std::minmax_element(c.seeds.begin(), c.seeds.end());
    if (lo != c.seeds.end()) {
        p.fewest = p.fewest < 0 ? *lo : std::min(p.fewest, *lo);
        p.most = std::max(p.most, *hi);
    }
}

// Curves named by their encoding ("rope", "nope") take its colour everywhere (Compare's groups,
// the Hyperparameters lines: figures::categoryColor); only when every curve is one, so that no
// other curve takes an encoding's colour by the grid's palette.
void colourEncodings(plots::GridSpec& grid)
{
    for (const auto& f : grid.panels)
        for (const auto& s : f.series)
            if (s.color.empty() && encodingColor(s.name).empty())
                return;
    for (auto& f : grid.panels)
        for (auto& s : f.series)
            if (s.color.empty())
                s.color = encodingColor(s.name);
}

// The grid of the panels: its title (the seeds and the band), the panels' x ranges, its size.
plots::GridSpec sweepGridOf(const engine::SweepAggregate& aggregate, const std::string& method,
                            SweepPanels& p)
{
    plots::GridSpec grid;
    const std::int64_t fewest = p.fewest, most = p.most;
    const std::string seeds =
        fewest == most ? std::to_string(most) : std::to_string(fewest) + "-" + std::to_string(most);
    grid.title = aggregate.sweep + " - " + method + "\nmean over " + seeds + " seed" +
                 (most == 1 ? "" : "s") + ", band: " +
                 (p.bands == "bootstrap 5-95 %" ? "bootstrap 5-95 % of the mean" : p.bands);
    for (const auto& key : p.order) {
        auto f = p.panels[key];
        f.x.max = p.longest[key] + 0.1;
        grid.panels.push_back(std::move(f));
    }
    colourEncodings(grid);
    grid.columns = grid.panels.size() <= 4   ? int(grid.panels.size())
                   : grid.panels.size() <= 9 ? 3
                                             : 4;
    const int rows = (int(grid.panels.size()) + grid.columns - 1) / grid.columns;
    grid.widthInches = std::max(7.5, 1.5 + 4.0 * grid.columns);  // room for the title and legend
    grid.heightInches = 1.0 + 3.4 * rows;
    return grid;
}

}  // namespace

plots::GridSpec sweepGridFigure(const engine::SweepAggregate& aggregate, const std::string& method)
{
    const auto fixed = fixedAxes(aggregate, method);
    const bool byPe = sweepPanelsByPe(aggregate, method, fixed);
    SweepPanels panels;
    for (const auto& s : aggregate.sets)
        if (s.kind == "eval" && s.name == method && !s.curves.empty())
            addSweepCurve(panels, s, method, byPe, fixed);
    if (panels.order.empty())
        throw engine::Error(engine::ErrorKind::Usage,
                            "the sweep " + aggregate.sweep + " has no aggregated '" + method +
                                "' evaluation (run `lengen sweep aggregate` after the "
                                "cells' evaluation)");
    return sweepGridOf(aggregate, method, panels);
}

std::string aggregateBand(const engine::SweepAggregate& aggregate, const std::string& method)
{
    std::string band;
    for (const auto& set : aggregate.sets)
        if (set.kind == "eval" && set.name == method)
            for (const auto& c : set.curves) {
                if (c.band == "none")
                    continue;
                if (band.empty())
                    band = c.band;
                else if (band != c.band)
                    return "auto";
            }
    return band.empty() ? "auto" : band;
}

}  // namespace lengen::figures
