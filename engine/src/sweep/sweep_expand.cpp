// From a sweep spec to its cells: every combination of the axes, each resolved to one
// validated RunConfig before anything runs. A cell is built as the studio's form builds an
// edit: the base config's struct with `task` and `pe` applied (config_edit), written as Draft
// YAML (derived values stay derived: a YaRN factor follows max_length), the key-path axes set
// in that text, and the text loaded by the engine's loader — the one validation there is.

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "config/section_reader.h"
#include "lengen/engine/config_edit.h"
#include "lengen/engine/config_text.h"
#include "lengen/engine/interventions.h"
#include "lengen/engine/run_index.h"
#include "lengen/engine/sweep.h"

namespace fs = std::filesystem;

namespace lengen::engine {

namespace {

constexpr size_t kMaxCells = 10000;

bool isKeyPath(const std::string& key) { return key != "task" && key != "pe" && key != "seed"; }

std::string describe(const std::vector<std::pair<std::string, std::string>>& axes)
{
    std::string out;
    for (const auto& [k, v] : axes)
        out += (out.empty() ? "" : " ") + k + "=" + v;
    return out;
}

// "003-linear_regression-rope-s2": the index keeps them ordered, the values make them readable.
// A config-key axis with one value is an override of every cell: it does not name them.
std::string cellName(int index, size_t count,
                     const std::vector<std::pair<std::string, std::string>>& axes,
                     const std::vector<SweepAxis>& specAxes)
{
    std::string digits = std::to_string(index);
    const size_t width = std::max<size_t>(3, std::to_string(count - 1).size());
    std::string name = std::string(width - std::min(width, digits.size()), '0') + digits;
    for (size_t i = 0; i < axes.size(); ++i) {
        const auto& [k, v] = axes[i];
        if (isKeyPath(k) && i < specAxes.size() && specAxes[i].values.size() == 1)
            continue;
        std::string part = k == "seed"    ? "s" + v
                           : isKeyPath(k) ? k.substr(k.rfind('.') + 1) + "=" + v
                                          : v;
        for (char& ch : part)
            if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_' &&
                ch != '=' && ch != '-')
                ch = '_';
        name += "-" + part;
    }
    return name.size() > 120 ? name.substr(0, 120) : name;
}

// Sets `path` (a.b.c) in a YAML document to `value` (YAML text), creating maps on the way.
std::string setKeyPath(const std::string& text, const std::string& path, const std::string& value)
{
    YAML::Node root = YAML::Load(text);
    size_t start = 0;
    std::vector<std::string> keys;
    while (start <= path.size()) {
        const size_t dot = path.find('.', start);
        keys.push_back(
            path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos)
            break;
        start = dot + 1;
    }
    // yaml-cpp's operator[] on a non-const node creates the key; walk by reassigning handles.
    YAML::Node cur = root;
    for (size_t i = 0; i + 1 < keys.size(); ++i) {
        YAML::Node next = cur[keys[i]];
        if (!next.IsDefined() || next.IsNull() || !next.IsMap())
            cur[keys[i]] = YAML::Node(YAML::NodeType::Map);
        cur.reset(cur[keys[i]]);
    }
    cur[keys.back()] = YAML::Load(value);
    YAML::Emitter out;
    out << root;
    return std::string(out.c_str()) + "\n";
}

struct Source {
    RunConfig config;
    std::vector<ConfigIssue> warnings;
    size_t runs = 1;
};

// Loads each distinct config file once (a pattern names one per task and pe).
class SourceCache {
public:
    const Source& get(const std::string& path)
    {
        auto it = m_cache.find(path);
        if (it != m_cache.end())
            return it->second;
        auto loaded = loadConfigFile(path);
        Source s{loaded.runs.at(0), loaded.warnings, loaded.runs.size()};
        return m_cache.emplace(path, std::move(s)).first->second;
    }

private:
    std::map<std::string, Source> m_cache;
};

std::string substitute(std::string pattern, const std::string& key, const std::string& value)
{
    const std::string token = "{" + key + "}";
    for (size_t at; (at = pattern.find(token)) != std::string::npos;)
        pattern.replace(at, token.size(), value);
    return pattern;
}

const SweepAxis* axisNamed(const SweepSpec& spec, const std::string& key)
{
    for (const auto& a : spec.axes)
        if (a.key == key)
            return &a;
    return nullptr;
}

// Where a cell's issue points: the axis that wrote its key, else the sweep's first axis.
SourceLocation issueLocation(const SweepSpec& spec, const std::string& keyPath)
{
    for (const auto& a : spec.axes)
        if (isKeyPath(a.key) && keyPath.rfind(a.key, 0) == 0)
            return a.where;
    return spec.axes.empty() ? SourceLocation{spec.file} : spec.axes.front().where;
}

SweepCell finishCell(const SweepSpec& spec, const fs::path& dir, RunConfig c,
                     const std::string& source,
                     std::vector<std::pair<std::string, std::string>> axes);

const std::string* axisValue(const std::vector<std::pair<std::string, std::string>>& axes,
                             const std::string& key)
{
    for (const auto& [k, v] : axes)
        if (k == key)
            return &v;
    return nullptr;
}

[[noreturn]] void failCell(const std::string& label, const SourceLocation& where,
                           const std::string& key, const std::string& message)
{
    throw ConfigError({{where, key, label + ": " + message}});
}

// The config loader refused a cell's combination (what skip_refused leaves out); everything
// else that goes wrong in a cell is the sweep's own error.
struct RefusedCell : ConfigError {
    RefusedCell(std::vector<ConfigIssue> issues, std::string first)
        : ConfigError(std::move(issues)), why(std::move(first))
    {}
    std::string why;
};

// Whether a refusal at config key `keyPath` is about axis `axis`'s own value: a key-path axis's
// key (or below it), the task's keys for `task`, the encoding's (patch.*, and model.family for a
// backbone) for `pe`, the seed for `seed`.
bool refusesAxisKey(const std::string& axis, const std::string& keyPath)
{
    const auto under = [&](const std::string& prefix) {
        return keyPath == prefix || keyPath.rfind(prefix + ".", 0) == 0;
    };
    if (axis == "task")
        return under("task");
    if (axis == "pe")
        return under("patch") || keyPath == "model.family";
    if (axis == "seed")
        return under("seed");
    return under(axis);
}

SweepCell buildCell(const SweepSpec& spec, const fs::path& dir, SourceCache& cache,
                    std::vector<std::pair<std::string, std::string>> axes)
{
    const std::string label = "cell " + describe(axes);
    const auto value = [&](const std::string& key) { return axisValue(axes, key); };
    const auto fail = [&](const SourceLocation& where, const std::string& key,
                          const std::string& msg) { failCell(label, where, key, msg); };
    // 1. The source config: one in memory, the base, or the pattern's file for this task and pe.
    if (spec.baseConfig)
        return finishCell(spec, dir, *spec.baseConfig, spec.baseConfig->sourceFile,
                          std::move(axes));
    std::string file = spec.pattern.empty() ? spec.base : spec.pattern;
    for (const char* key : {"task", "pe"})
        if (spec.pattern.find(std::string("{") + key + "}") != std::string::npos) {
            const std::string* v = value(key);
            if (!v)
                fail({spec.file}, "pattern",
                     std::string("the pattern uses {") + key + "} but there is no `" + key +
                         "` axis");
            file = substitute(file, key, *v);
        }
    const fs::path path = fs::path(file).is_absolute() ? fs::path(file) : dir / file;
    if (!fs::is_regular_file(path))
        fail(axes.empty() ? SourceLocation{spec.file} : axisNamed(spec, axes.front().first)->where,
             spec.pattern.empty() ? "base" : "pattern", "no config file " + path.string());
    Source src;
    try {
        src = cache.get(path.lexically_normal().string());
    } catch (const ConfigError& e) {
        std::vector<ConfigIssue> issues = e.issues();
        for (auto& i : issues)
            i.message = label + ": " + i.message;
        throw ConfigError(std::move(issues));
    }
    return finishCell(spec, dir, src.config, path.string(), std::move(axes));
}

// Steps 2-4 of a cell from its source config (`source`: the file messages and the run name).
SweepCell finishCell(const SweepSpec& spec, const fs::path& dir, RunConfig c,
                     const std::string& source,
                     std::vector<std::pair<std::string, std::string>> axes)
{
    const std::string label = "cell " + describe(axes);
    const auto value = [&](const std::string& key) { return axisValue(axes, key); };
    const auto fail = [&](const SourceLocation& where, const std::string& key,
                          const std::string& msg) { failCell(label, where, key, msg); };
    // 2. task and pe as struct edits (unless the pattern already chose the file by them).
    if (const auto* t = value("task"); t && spec.pattern.find("{task}") == std::string::npos)
        setTask(c, *t);
    if (const auto* pe = value("pe"); pe && spec.pattern.find("{pe}") == std::string::npos)
        if (!applyPeName(c, *pe))
            fail(axisNamed(spec, "pe")->where, "axes.pe",
                 "unknown position encoding '" + *pe + "'");
    // 3. key-path axes in the Draft text; 4. one load validates it all.
    std::string text = toYaml(c, YamlStyle::Draft);
    for (const auto& [k, v] : axes)
        if (isKeyPath(k)) {
            try {
                text = setKeyPath(text, k, v);
            } catch (const YAML::Exception& e) {
                fail(axisNamed(spec, k)->where, "axes." + k,
                     "value '" + v + "' is not YAML: " + e.what());
            }
        }
    LoadedConfig loaded;
    try {
        loaded = loadConfigTextAt(text, label, dir.string());
    } catch (const ConfigError& e) {
        std::vector<ConfigIssue> issues;
        for (const auto& i : e.issues())
            issues.push_back({issueLocation(spec, i.keyPath), i.keyPath, label + ": " + i.message});
        const auto* first = e.issues().empty() ? nullptr : &e.issues().front();
        const std::string why = !first                   ? std::string(e.what())
                                : first->keyPath.empty() ? first->message
                                                         : first->keyPath + ": " + first->message;
        throw RefusedCell(std::move(issues), why);
    }
    for (const auto& w : loaded.warnings)  // a key-path axis the loader does not know
        for (const auto& [k, v] : axes)
            if (isKeyPath(k) && w.keyPath.rfind(k, 0) == 0) {
                // One thing said: the sweep is refused (the loader's "ignored" is for a run's
                // own config), with the nearest key the config has (issue 70, defect 13).
                std::vector<std::string> known;
                if (!loaded.runs.empty())
                    for (const auto& entry : flattenedConfig(loaded.runs.front()))
                        known.push_back(entry.first);
                const auto near = closestName(k, known);
                fail(axisNamed(spec, k)->where, "axes." + k,
                     "the config has no key " + k +
                         (near.empty() ? std::string() : "; did you mean " + near + "?"));
            }
    if (loaded.runs.size() != 1)
        fail(spec.axes.front().where, "model.max_length",
             "model.max_length lists " + std::to_string(loaded.runs.size()) +
                 " values; a cell is one run: make it an axis (model.max_length: [[402], [2048]])");
    SweepCell cell;
    cell.config = loaded.runs.front();
    std::int64_t seed = 0;
    if (const auto* s = value("seed")) {
        if (!config::parseInteger(*s, seed) || seed < 0)
            fail(axisNamed(spec, "seed")->where, "axes.seed",
                 "seed '" + *s + "' is not a non-negative integer");
        cell.config.seed = std::uint64_t(seed);
    } else if (!cell.config.seed) {
        cell.config.seed = 1;  // a cell must be reproducible: never a random seed
    }
    cell.axes = std::move(axes);
    cell.config.sourceFile = source;
    cell.configYaml = toYaml(cell.config);
    return cell;
}

// Every intervention the eval stage asks of this cell, resolved against its config as the
// evaluation will (issue 45: `yarn:factor=-1` was accepted, trained, then refused): the ones that
// do not apply to the cell are skipped there, as when it runs.
void checkInterventions(const SweepSpec& spec, const SweepCell& cell)
{
    const auto& o = spec.stages.evalOptions;
    if (!spec.stages.eval || o.interventions.empty())
        return;
    const SourceLocation where =
        spec.stages.interventionsAt.line ? spec.stages.interventionsAt : SourceLocation{spec.file};
    try {
        for (const auto& s : expandInterventions(o.interventions, cell.config))
            if (interventionRefusal(s, cell.config).empty())
                describeIntervention(s, cell.config, int(cell.config.trainPoints() * o.oodFactor));
    } catch (const Error& e) {
        failCell("cell " + describe(cell.axes), where, "stages.eval.interventions", e.what());
    }
}

// How many cells the grid of the axes has; ConfigError for an empty axis or a grid over
// kMaxCells.
size_t sweepGridSize(const SweepSpec& spec)
{
    size_t count = 1;
    for (const auto& a : spec.axes) {
        if (a.values.empty())
            throw ConfigError(
                {{a.where, "axes." + a.key, "the axis is empty: give at least one value"}});
        count *= a.values.size();
        if (count > kMaxCells)
            throw ConfigError({{a.where, "axes." + a.key,
                                "the grid has more than " + std::to_string(kMaxCells) + " cells"}});
    }
    return count;
}

// The combination the odometer `at` (a value index per axis) stands at, as (key, value) pairs.
std::vector<std::pair<std::string, std::string>> axisValuesAt(const SweepSpec& spec,
                                                              const std::vector<size_t>& at)
{
    std::vector<std::pair<std::string, std::string>> axes;
    for (size_t i = 0; i < spec.axes.size(); ++i)
        axes.emplace_back(spec.axes[i].key, spec.axes[i].values[at[i]]);
    return axes;
}

// Moves the odometer on by one combination: the last axis varies fastest.
void advanceAxisOdometer(const SweepSpec& spec, std::vector<size_t>& at)
{
    for (size_t i = spec.axes.size(); i-- > 0;) {
        if (++at[i] < spec.axes[i].values.size())
            break;
        at[i] = 0;
    }
}

// ConfigError for an axis value that no cell kept and that was refused at its axis's own key.
// A value refused in every combination for what it is (a misspelt task, "64x": the loader
// refuses the axis's own key) is the sweep's own mistake, not a combination to leave out.
// Refused at another key (NoPE: training.random_positions.max_position), it is the
// combination with another axis's or the base config's value: those are left out.
// `leftKeys`: per left-out combination, the keys refused.
void refuseValuesRefusedEverywhere(const SweepSpec& spec, const std::vector<SweepCell>& cells,
                                   const std::vector<SkippedCell>& left,
                                   const std::vector<std::vector<std::string>>& leftKeys)
{
    for (const auto& a : spec.axes)
        for (const auto& v : a.values) {
            const bool kept = std::any_of(cells.begin(), cells.end(), [&](const SweepCell& c) {
                const auto* x = axisValue(c.axes, a.key);
                return x && *x == v;
            });
            if (kept)
                continue;
            const auto has = [&](const SkippedCell& s) {
                return (" " + s.axes + " ").find(" " + a.key + "=" + v + " ") != std::string::npos;
            };
            const auto first = std::find_if(left.begin(), left.end(), has);
            bool ownKey = false;  // refused at the axis's own key somewhere
            for (size_t i = 0; i < left.size(); ++i)
                if (has(left[i]))
                    for (const auto& k : leftKeys[i])
                        ownKey = ownKey || refusesAxisKey(a.key, k);
            if (!ownKey)
                continue;
            throw ConfigError(
                {{a.where, "axes." + a.key,
                  a.key + "=" + v + " is refused in every combination (" +
                      (first != left.end() ? first->why : std::string("?")) +
                      "): skip_refused leaves out combinations, not values; correct it or "
                      "take it out of the axis"}});
        }
}

}  // namespace

std::vector<SweepCell> expandSweep(const SweepSpec& spec, std::vector<SkippedCell>* skipped)
{
    const size_t count = sweepGridSize(spec);
    const fs::path dir =
        spec.file.empty() ? fs::current_path() : fs::absolute(spec.file).parent_path();
    SourceCache cache;
    std::vector<SweepCell> cells;
    std::vector<size_t> at(spec.axes.size(), 0);  // odometer: the last axis varies fastest
    std::vector<SkippedCell> left;
    std::vector<std::vector<std::string>> leftKeys;  // per left-out combination: the keys refused
    for (size_t n = 0; n < count; ++n) {
        auto axes = axisValuesAt(spec, at);
        advanceAxisOdometer(spec, at);  // for the next combination
        SweepCell cell;
        try {
            cell = buildCell(spec, dir, cache, axes);
        } catch (const RefusedCell& e) {
            if (!spec.skipRefused)
                throw;
            left.push_back({describe(axes), e.why});
            leftKeys.emplace_back();
            for (const auto& i : e.issues())
                leftKeys.back().push_back(i.keyPath);
            continue;
        }
        // The index runs on without gaps (what `run-cell` and Slurm's array take); the name keeps
        // the grid position, so it does not change when another combination is refused.
        cell.index = int(cells.size());
        cell.name = cellName(int(n), count, cell.axes, spec.axes);
        checkInterventions(spec, cell);
        cells.push_back(std::move(cell));
    }
    if (cells.empty() && !left.empty())
        throw ConfigError({{SourceLocation{spec.file}, "skip_refused",
                            "the config refuses every combination of the axes (the first, " +
                                left.front().axes + ": " + left.front().why + ")"}});
    refuseValuesRefusedEverywhere(spec, cells, left, leftKeys);
    if (skipped)
        *skipped = std::move(left);
    return cells;
}

}  // namespace lengen::engine
