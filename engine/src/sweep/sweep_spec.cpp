// sweep.yaml in and out (docs/sweep-format.md). Read through the config loader's located tree,
// so a problem names file:line:col and key like a run config's. Unlike a run config, an
// unknown key is an error here: a misspelt stage option would otherwise be silently skipped.

#include <sstream>
#include <string>

#include "config/section_reader.h"
#include "config/yaml_tree.h"
#include "lengen/engine/interventions.h"
#include "lengen/engine/sweep.h"

namespace lengen::engine {

namespace {

using config::IssueSink;
using config::MapEntry;
using config::Node;
using config::SectionReader;

// A node as the YAML text a config would hold: scalars as written, sequences in flow style.
std::string nodeText(const Node& n)
{
    if (n.kind == Node::Kind::Scalar)
        return n.quoted ? "\"" + n.scalar + "\"" : n.scalar;
    if (n.kind == Node::Kind::Sequence) {
        std::string out = "[";
        for (size_t i = 0; i < n.items.size(); ++i)
            out += (i ? ", " : "") + nodeText(*n.items[i]);
        return out + "]";
    }
    return "";
}

void readAxes(const MapEntry* axes, SweepSpec& spec, IssueSink& sink)
{
    if (!axes || !axes->value || axes->value->kind != Node::Kind::Map) {
        sink.error(axes ? axes->keyLocation : SourceLocation{spec.file}, "axes",
                   "a mapping of axes is required (task, pe, seed or a config key path)");
        return;
    }
    for (const auto& e : axes->value->entries) {
        SweepAxis axis{e.key, {}, e.keyLocation};
        const std::string path = "axes." + e.key;
        const Node& v = *e.value;
        if (e.key == "seed" && v.kind == Node::Kind::Scalar) {  // a count: seeds 1..n
            std::int64_t n = 0;
            if (!config::parseInteger(v.scalar, n) || n < 1 || n > 10000) {
                sink.error(v.location, path,
                           "a seed count must be an integer from 1 to 10000, "
                           "or a list of seeds");
                continue;
            }
            for (std::int64_t s = 1; s <= n; ++s)
                axis.values.push_back(std::to_string(s));
        } else if (v.kind == Node::Kind::Sequence) {
            for (const auto& item : v.items) {
                if (item->kind == Node::Kind::Map || item->kind == Node::Kind::Null)
                    sink.error(item->location, path, "each value must be a scalar or a list");
                else
                    axis.values.push_back(nodeText(*item));
            }
            if (v.items.empty())
                sink.error(v.location, path, "the axis is empty: give at least one value");
        } else if (v.kind == Node::Kind::Scalar) {
            axis.values.push_back(nodeText(v));  // one value: an override, not a grid axis
        } else {
            sink.error(v.location.line ? v.location : e.keyLocation, path,
                       "expected a list of values" +
                           std::string(e.key == "seed" ? " or a count" : ""));
            continue;
        }
        for (const auto& other : spec.axes)
            if (other.key == axis.key)
                sink.error(e.keyLocation, path, "this axis is given twice");
        spec.axes.push_back(std::move(axis));
    }
    if (spec.axes.empty() && axes->value->entries.empty())
        sink.error(axes->keyLocation, "axes", "no axis given");
}

void readEval(SectionReader s, SweepStages& st)
{
    if (!s.present())
        return;
    st.eval = true;
    auto& o = st.evalOptions;
    // A scalar or a list of scalars; anything else (a mapping, a nested list) is refused with its
    // place, never dropped (issue 45: `interventions: {yarn: 2}` ran no intervention).
    const auto scalars = [&s](const char* key, const MapEntry* e, std::vector<std::string>& out) {
        out.clear();
        if (e->value->kind == Node::Kind::Scalar) {
            out.push_back(e->value->scalar);
            return;
        }
        if (e->value->kind == Node::Kind::Sequence) {
            for (const auto& m : e->value->items) {
                if (m->kind != Node::Kind::Scalar) {
                    s.error(key, "each entry must be a name as text (e.g. yarn:factor=8), not a " +
                                     std::string(m->kind == Node::Kind::Map ? "mapping" : "list"));
                    return;
                }
                out.push_back(m->scalar);
            }
            return;
        }
        s.error(key, "expected a name or a list of names, not a " +
                         std::string(e->value->kind == Node::Kind::Map ? "mapping" : "null"));
    };
    if (const auto* e = s.entry("methods")) {
        scalars("methods", e, o.methods);
        if (o.methods.size() == 1 && o.methods.front() == "all")
            o.methods.clear();
    }
    if (const auto* e = s.entry("interventions")) {
        // A list as `lengen eval --intervention` takes them; `all` adds every one that applies
        // to each cell's run. Checked by name here, and each value against each cell's config
        // when the sweep is expanded (expandSweep), before anything runs.
        scalars("interventions", e, o.interventions);
        st.interventionsAt = e->value->location;
        for (const auto& text : o.interventions) {
            try {
                // Names and keys here; `all` is a piece of its own (interventions.h).
                std::string rest;
                for (const auto& piece : splitInterventionList(text))
                    if (piece != "all")
                        rest += (rest.empty() ? "" : ",") + piece;
                parseInterventions(rest);
            } catch (const Error& err) {
                s.error("interventions", err.what());
            }
        }
    }
    if (auto v = s.integer("prompts"); v && *v >= 1 && *v <= 10000000)
        o.prompts = int(*v);
    else if (v)
        s.error("prompts", "must be from 1 to 10,000,000");
    if (auto v = s.integer("batch"); v && *v >= 1 && *v <= 1000000)
        o.batchSize = int(*v);
    else if (v)
        s.error("batch", "must be from 1 to 1,000,000");
    if (auto v = s.integer("ood_factor"); v && *v >= 1 && *v <= 100)
        o.oodFactor = int(*v);
    else if (v)
        s.error("ood_factor", "must be from 1 to 100");
    if (auto v = s.boolean("baselines"))
        o.baselines = *v;
    if (auto v = s.integer("seed"); v && *v >= 0)
        o.common.seed = std::uint64_t(*v);
    if (auto v = s.integer("bootstrap"); v && *v >= 0 && *v <= 1000000)
        o.common.bootstrapTrials = int(*v);
    else if (v)
        s.error("bootstrap", "must be from 0 to 1,000,000");
    s.warnUnknown();
}

void readProbe(SectionReader s, SweepStages& st)
{
    if (!s.present())
        return;
    st.probe = true;
    auto& o = st.probeOptions;
    o.attention = s.boolean("attention").value_or(false);
    o.duplicated = s.boolean("duplicated").value_or(false);
    o.serialPosition = s.boolean("serial_position").value_or(false);
    if (!o.attention && !o.duplicated && !o.serialPosition)
        s.error("", "choose at least one of attention, duplicated, serial_position (true)");
    if (auto v = s.integer("prompts"); v && *v >= 1 && *v <= 1000000)
        o.prompts = int(*v);
    else if (v)
        s.error("prompts", "must be from 1 to 1,000,000");
    if (auto v = s.integer("map_prompts"); v && *v >= 0 && *v <= 1000)
        o.mapPrompts = int(*v);
    else if (v)
        s.error("map_prompts", "must be from 0 to 1,000");
    if (auto v = s.integer("seed"); v && *v >= 0)
        o.common.seed = std::uint64_t(*v);
    s.warnUnknown();
}

SweepSpec readSpec(const config::NodePtr& root, const std::string& file)
{
    IssueSink sink;
    SweepSpec spec;
    spec.file = file;
    SectionReader top(root.get(), "", sink, SourceLocation{file});
    if (!top.present())
        throw ConfigError(
            {{SourceLocation{file}, "", "a sweep file must be a mapping (docs/sweep-format.md)"}});
    spec.name = top.text("name").value_or("");
    spec.base = top.text("base").value_or("");
    spec.pattern = top.text("pattern").value_or("");
    spec.skipRefused = top.boolean("skip_refused").value_or(false);
    if (spec.base.empty() == spec.pattern.empty())
        sink.error(top.location(), spec.base.empty() ? "base" : "pattern",
                   "give exactly one of `base: CONFIG` and `pattern: …/{task}/{pe}.yaml`");
    readAxes(top.entry("axes"), spec, sink);
    auto stages = top.child("stages");
    if (stages.present()) {
        stages.ignore({"train"});  // training always runs; the key may say so
        readEval(stages.child("eval"), spec.stages);
        readProbe(stages.child("probe"), spec.stages);
        stages.warnUnknown();
    }
    top.warnUnknown();
    auto issues = sink.allErrors();
    for (auto& w : sink.allWarnings())  // a typo in a sweep is never harmless
        issues.push_back(std::move(w));
    if (!issues.empty())
        throw ConfigError(std::move(issues));
    return spec;
}

}  // namespace

SweepSpec loadSweepFile(const std::string& path)
{
    return readSpec(config::loadYamlFile(path), path);
}

SweepSpec loadSweepText(const std::string& yaml, const std::string& name)
{
    return readSpec(config::loadYamlText(yaml, name), name);
}

std::string sweepYaml(const SweepSpec& spec)
{
    std::ostringstream out;
    out << "# LenGen sweep: one run per combination of the axes (docs/sweep-format.md).\n";
    if (!spec.name.empty())
        out << "name: " << spec.name << "\n";
    if (!spec.base.empty())
        out << "base: " << spec.base << "\n";
    if (!spec.pattern.empty())
        out << "pattern: " << spec.pattern << "\n";
    if (spec.skipRefused)
        out << "skip_refused: true            # combinations the config refuses are left out\n";
    out << "axes:\n";
    for (const auto& a : spec.axes) {
        out << "  " << a.key << ": [";
        for (size_t i = 0; i < a.values.size(); ++i)
            out << (i ? ", " : "") << a.values[i];
        out << "]\n";
    }
    const auto& st = spec.stages;
    out << "stages:\n  train: {}\n";
    if (st.eval) {
        const auto& o = st.evalOptions;
        out << "  eval:\n    methods: ";
        if (o.methods.empty()) {
            out << "all\n";
        } else {
            out << "[";
            for (size_t i = 0; i < o.methods.size(); ++i)
                out << (i ? ", " : "") << o.methods[i];
            out << "]\n";
        }
        if (!o.interventions.empty()) {
            out << "    interventions: [";
            for (size_t i = 0; i < o.interventions.size(); ++i)
                out << (i ? ", " : "") << "\"" << o.interventions[i] << "\"";
            out << "]\n";
        }
        out << "    prompts: " << o.prompts << "\n    batch: " << o.batchSize
            << "\n    ood_factor: " << o.oodFactor
            << "\n    baselines: " << (o.baselines ? "true" : "false")
            << "\n    seed: " << o.common.seed << "\n    bootstrap: " << o.common.bootstrapTrials
            << "\n";
    }
    if (st.probe) {
        const auto& o = st.probeOptions;
        out << "  probe:\n    attention: " << (o.attention ? "true" : "false")
            << "\n    duplicated: " << (o.duplicated ? "true" : "false")
            << "\n    serial_position: " << (o.serialPosition ? "true" : "false")
            << "\n    prompts: " << o.prompts << "\n    map_prompts: " << o.mapPrompts
            << "\n    seed: " << o.common.seed << "\n";
    }
    return out.str();
}

}  // namespace lengen::engine
