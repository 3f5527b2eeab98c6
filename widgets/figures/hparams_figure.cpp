// The runs table as parallel coordinates, and the provenance of its exports.

#include "hparams_figure.h"

#include <QJsonArray>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "figure_provenance.h"

namespace lengen::figures {

namespace {

// "seed", "training.seed", "data_seed": a column of seeds.
bool isSeedColumn(const std::string& name)
{
    const auto last = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
    return last == "seed" || (last.size() > 5 && last.compare(last.size() - 5, 5, "_seed") == 0);
}

int columnIndex(const engine::RunTable& t, const std::string& name)
{
    for (size_t c = 0; c < t.columns.size(); ++c)
        if (t.columns[c].name == name)
            return int(c);
    return -1;
}

// Whether column `c` is a function of the encoding, task and backbone columns: every run with
// the same values of those has the same value of it (patch.fire.mlp_width, patch.name: they vary
// only because the encoding does, and would crowd out the learning rate).
bool impliedByEncoding(const engine::RunTable& t, size_t c)
{
    std::vector<size_t> by;
    for (size_t k = 0; k < t.columns.size(); ++k)
        if (k != c && (t.columns[k].name == "pe" || t.columns[k].name == "task" ||
                       t.columns[k].name == "backbone"))
            by.push_back(k);
    if (by.empty())
        return false;
    std::map<std::string, std::string> seen;  // the encoding's values -> this column's value
    bool shared = false;  // some encoding has several runs: else every column "follows" from it
    for (const auto& row : t.rows) {
        std::string group;
        for (size_t k : by)
            group += row[k].text + '\x1f';
        const auto [it, added] = seen.emplace(group, row[c].text);
        shared = shared || !added;
        if (!added && it->second != row[c].text)
            return false;
    }
    return shared;
}

// Whether no run has a value in column c: a key every run's encoding ignores (RoPE scaling's
// factor beside NoPE and ALiBi runs) would be an axis of gaps that cuts every line (found
// under Xvfb: it appeared, ticked, after any change in the Axes menu).
bool emptyColumn(const engine::RunTable& t, size_t c)
{
    return std::all_of(t.rows.begin(), t.rows.end(),
                       [c](const auto& row) { return c >= row.size() || row[c].text.empty(); });
}

}  // namespace

std::vector<std::string> axisColumns(const engine::RunTable& table)
{
    std::vector<std::string> out;
    for (size_t k = 0; k < table.columns.size(); ++k)
        if (table.columns[k].kind != engine::RunTableColumn::Label && !emptyColumn(table, k))
            out.push_back(table.columns[k].name);
    return out;
}

HParamsChoice defaultHParamsChoice(const engine::RunTable& table)
{
    HParamsChoice c;
    for (size_t k = 0; k < table.columns.size(); ++k) {
        const auto& col = table.columns[k];
        const bool encoding = col.name == "pe" || col.name == "task" || col.name == "backbone";
        if (col.kind == engine::RunTableColumn::Key && c.axes.size() < 8 &&
            !emptyColumn(table, k) && (encoding || !impliedByEncoding(table, k)))
            c.axes.push_back(col.name);
    }
    c.axes.push_back("final_loss");
    // One stored method at its two lengths: ood_length where the runs have it (the question of
    // length generalization), else the first.
    std::string method;
    for (const auto& col : table.columns)
        if (engine::isMethodColumn(col.name)) {
            const auto name = col.name.substr(0, col.name.rfind('@'));
            if (method.empty() || name == "ood_length")
                method = name;
        }
    if (!method.empty()) {
        c.axes.push_back(method + "@train");
        c.axes.push_back(method + "@longest");
    }
    c.color = c.axes.back();
    return c;
}

plots::ParallelSpec hparamsSpec(const engine::RunTable& table, const HParamsChoice& choice,
                                const std::string& title)
{
    plots::ParallelSpec s;
    s.title = title;
    std::vector<int> cols;
    for (const auto& name : choice.axes)
        if (const int c = columnIndex(table, name); c > 0)
            cols.push_back(c);
    const size_t n = table.rows.size(), k = cols.size();
    s.values.assign(n * k, NAN);
    for (const auto& row : table.rows)
        s.rowNames.push_back(row.empty() ? std::string() : row[0].text);
    for (size_t a = 0; a < k; ++a) {
        const auto& col = table.columns[size_t(cols[a])];
        plots::ParallelAxis axis;
        axis.name = col.name;
        axis.categorical = !col.numeric;
        if (axis.categorical) {
            // Text values sorted, each a place on the axis; an empty cell is no value.
            std::map<std::string, int> place;
            for (const auto& row : table.rows)
                if (!row[size_t(cols[a])].text.empty())
                    place.emplace(row[size_t(cols[a])].text, 0);
            for (auto& [text, i] : place) {
                i = int(axis.categories.size());
                axis.categories.push_back(text);
            }
            for (size_t r = 0; r < n; ++r) {
                const auto& text = table.rows[r][size_t(cols[a])].text;
                if (!text.empty())
                    s.values[r * k + a] = place.at(text);
            }
        } else {
            double lo = INFINITY, hi = -INFINITY;
            for (size_t r = 0; r < n; ++r) {
                const double v = table.rows[r][size_t(cols[a])].value;
                s.values[r * k + a] = v;
                if (std::isfinite(v)) {
                    lo = std::min(lo, v);
                    hi = std::max(hi, v);
                }
            }
            axis.integers = true;
            for (size_t r = 0; r < n; ++r) {
                const double v = s.values[r * k + a];
                axis.integers = axis.integers && (!std::isfinite(v) || v == std::floor(v));
            }
            // Two decades: a learning rate, a loss. A seed is a name, not a magnitude: linear
            // (found in the Xvfb walk: a seed of 1903147566 beside 1..3 made ten cramped
            // 1e+00…1e+09 ticks).
            axis.log = lo > 0 && hi / lo >= 100 && !isSeedColumn(col.name);
        }
        if (col.name == choice.color)  // a category colours by its palette colour
            s.colorAxis = int(a);
        s.axes.push_back(std::move(axis));
    }
    // A colour column no longer drawn: the last numeric axis colours (what Colour by then shows).
    for (size_t a = k; s.colorAxis < 0 && !choice.color.empty() && a-- > 0;)
        if (!s.axes[a].categorical)
            s.colorAxis = int(a);
    s.rowHeader = "run";
    plots::fitAxes(s);
    applyBrushes(s, choice.brushes);
    return s;
}

void applyBrushes(plots::ParallelSpec& spec, const std::vector<HParamsBrush>& brushes)
{
    spec.brushes.clear();
    for (const auto& b : brushes)
        for (size_t a = 0; a < spec.axes.size(); ++a) {
            if (spec.axes[a].name != b.column)
                continue;
            const auto& cats = spec.axes[a].categories;
            if (!spec.axes[a].categorical || b.lowCategory.empty()) {
                spec.brushes.push_back({int(a), b.low, b.high});
                continue;
            }
            // By name: the categories are sorted again with every new run ("alibi" arriving
            // moves "rope" from 1 to 2), so the range runs from the first category at or after
            // the brush's lowest to the last at or before its highest.
            const auto lo = std::lower_bound(cats.begin(), cats.end(), b.lowCategory);
            const auto hi = std::upper_bound(cats.begin(), cats.end(), b.highCategory);
            spec.brushes.push_back(
                {int(a), double(lo - cats.begin()), double(hi - cats.begin()) - 1});
        }
}

std::string hparamsTitle(int runs, int inside, bool brushed)
{
    const std::string all = std::to_string(runs) + (runs == 1 ? " run" : " runs");
    return brushed ? std::to_string(inside) + " of " + all + " inside the brushes" : all;
}

std::string hparamsTitle(const plots::ParallelSpec& spec)
{
    const auto in = plots::rowsInside(spec);
    return hparamsTitle(spec.rows(), int(std::count(in.begin(), in.end(), char(1))),
                        !spec.brushes.empty());
}

plots::ParallelSpec hparamsFromRuns(const std::vector<std::string>& runs,
                                    const HParamsChoice& choice)
{
    // The table's result columns come with every table; the other axes are keys to ask for.
    std::vector<std::string> keys;
    for (const auto& a : choice.axes)
        if (!engine::isResultColumn(a))
            keys.push_back(a);
    std::vector<engine::RunIndexEntry> entries;
    std::vector<std::string> labels;
    for (const auto& run : runs) {
        entries.push_back(engine::readRunEntry(run));
        labels.push_back(entries.back().info.runId);
    }
    auto spec = hparamsSpec(engine::runTable(entries, labels, keys), choice);
    spec.title = hparamsTitle(spec);
    return spec;
}

std::vector<HParamsBrush> namedBrushes(const plots::ParallelSpec& spec)
{
    std::vector<HParamsBrush> out;
    for (const auto& b : spec.brushes) {
        if (b.axis < 0 || b.axis >= int(spec.axes.size()))
            continue;
        const auto& axis = spec.axes[size_t(b.axis)];
        HParamsBrush named{axis.name, b.low, b.high, {}, {}};
        // The categories the range holds, by name (none: a range between two categories).
        const auto first = size_t(std::max(0.0, std::ceil(b.low)));
        const auto last = std::floor(b.high);
        if (axis.categorical && last >= double(first) && first < axis.categories.size()) {
            named.lowCategory = axis.categories[first];
            named.highCategory =
                axis.categories[std::min(size_t(last), axis.categories.size() - 1)];
        }
        out.push_back(std::move(named));
    }
    return out;
}

QJsonObject hparamsProvenance(const std::vector<std::string>& runs, const engine::RunTable& table,
                              const plots::ParallelSpec& spec)
{
    const auto inside = plots::rowsInside(spec);
    QJsonArray records;
    for (size_t r = 0; r < runs.size(); ++r) {
        QJsonObject o;
        o["path"] =
            QString::fromStdString(std::filesystem::absolute(runs[r]).lexically_normal().string());
        o["run_id"] =
            QString::fromStdString(r < table.rows.size() ? table.rows[r][0].text : std::string());
        o["inside_brushes"] = r < inside.size() && inside[r];
        records.append(o);
    }
    QJsonArray axes, brushes;
    for (const auto& a : spec.axes) {
        QJsonObject o;
        o["column"] = QString::fromStdString(a.name);
        o["scale"] = a.categorical ? "categories" : a.log ? "log" : "linear";
        if (!a.categorical) {
            o["min"] = a.min;
            o["max"] = a.max;
        }
        axes.append(o);
    }
    for (const auto& b : namedBrushes(spec)) {
        QJsonObject o;
        o["column"] = QString::fromStdString(b.column);
        o["low"] = b.low;
        o["high"] = b.high;
        if (!b.lowCategory.empty()) {
            o["low_category"] = QString::fromStdString(b.lowCategory);
            o["high_category"] = QString::fromStdString(b.highCategory);
        }
        brushes.append(o);
    }
    QJsonObject view;
    view["figure"] = "hparams";
    view["axes"] = axes;
    view["color"] = spec.colorAxis >= 0
                        ? QString::fromStdString(spec.axes[size_t(spec.colorAxis)].name)
                        : QString();
    view["brushes"] = brushes;
    QJsonObject p;
    stampProvenance(p);
    p["runs"] = records;
    p["view"] = view;
    return p;
}

}  // namespace lengen::figures
