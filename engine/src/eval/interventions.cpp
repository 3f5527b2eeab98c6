// Intervention specs: the one syntax (`name[:key=value,...]`), lists and `all`, and which runs
// each applies to (its row's scope against the run's encoding). The rows themselves, and how
// each resolves, are in intervention_table.cpp; docs/interventions.md is the user's side.

#include "lengen/engine/interventions.h"

#include <algorithm>

#include "lengen/engine/config.h"
#include "lengen/engine/encodings.h"
#include "lengen/engine/errors.h"

namespace lengen::engine {

namespace {

std::string trim(std::string s)
{
    const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

Error bad(const std::string& what) { return Error(ErrorKind::Config, "intervention " + what); }

std::string runName(const RunConfig& c)
{
    if (c.model.backbone == Backbone::Llama)
        return "Llama with " + c.peDisplayName();
    return c.peDisplayName();
}

}  // namespace

std::string InterventionSpec::text() const
{
    std::string s = name;
    for (size_t i = 0; i < params.size(); ++i)
        s += (i == 0 ? ":" : ",") + params[i].first + "=" + params[i].second;
    return s;
}

std::vector<std::string> splitInterventionList(const std::string& list)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= list.size()) {
        const auto comma = list.find(',', start);
        std::string piece = trim(
            list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        start = comma == std::string::npos ? list.size() + 1 : comma + 1;
        if (!piece.empty())
            out.push_back(std::move(piece));
    }
    return out;
}

const std::vector<std::string>& interventionNames()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto& row : interventionTable())
            out.push_back(row.name);
        return out;
    }();
    return names;
}

std::vector<InterventionSpec> expandInterventions(const std::vector<std::string>& texts,
                                                  const RunConfig& config)
{
    std::vector<InterventionSpec> out;
    auto add = [&](const InterventionSpec& spec) {
        if (std::none_of(out.begin(), out.end(),
                         [&](const auto& s) { return s.text() == spec.text(); }))
            out.push_back(spec);
    };
    for (const auto& text : texts) {
        // `all` is a piece of its own (no ':' or '='): taken out before the rest is parsed.
        std::string rest;
        bool all = false;
        for (const auto& piece : splitInterventionList(text)) {
            if (piece == "all")
                all = true;
            else
                rest += (rest.empty() ? "" : ",") + piece;
        }
        if (all)
            for (const auto& name : applicableInterventions(config))
                add(InterventionSpec{name, {}});
        for (const auto& spec : parseInterventions(rest))
            add(spec);
    }
    return out;
}

std::vector<InterventionSpec> parseInterventions(const std::string& list)
{
    std::vector<InterventionSpec> out;
    for (const auto& piece : splitInterventionList(list)) {
        const auto colon = piece.find(':');
        std::string params;
        if (colon == std::string::npos && piece.find('=') != std::string::npos) {
            if (out.empty())
                throw bad("'" + piece +
                          "': a parameter needs a name before it (e.g. yarn:factor=8)");
            params = piece;  // continues the previous spec
        } else {
            InterventionSpec spec;
            spec.name = trim(piece.substr(0, colon));
            std::replace(spec.name.begin(), spec.name.end(), '-', '_');
            if (!findIntervention(spec.name)) {
                std::string names;
                for (const auto& n : interventionNames())
                    names += (names.empty() ? "" : ", ") + n;
                throw bad("'" + spec.name + "' is unknown (known: " + names +
                          "; all: every one that applies)");
            }
            out.push_back(spec);
            if (colon != std::string::npos)
                params = piece.substr(colon + 1);
        }
        if (params.empty())
            continue;
        const auto eq = params.find('=');
        if (eq == std::string::npos)
            throw bad("'" + out.back().name + "': parameter '" + params +
                      "' needs a value (key=value)");
        const std::string key = trim(params.substr(0, eq)), value = trim(params.substr(eq + 1));
        auto& spec = out.back();
        const auto& accepted = findIntervention(spec.name)->params;
        if (std::none_of(accepted.begin(), accepted.end(),
                         [&](const auto& a) { return a.key == key; })) {
            std::string keys;
            for (const auto& a : accepted)
                keys += (keys.empty() ? "" : ", ") + a.key;
            throw bad("'" + spec.name + "' has no parameter '" + key + "' (" +
                      (keys.empty() ? std::string("it takes none") : "it takes " + keys) + ")");
        }
        if (value.empty())
            throw bad("'" + spec.name + "': parameter '" + key + "' is empty");
        for (const auto& [k, v] : spec.params)
            if (k == key)
                throw bad("'" + spec.name + "': parameter '" + key + "' is given twice");
        spec.params.emplace_back(key, value);
    }
    // One entry per canonical text.
    std::vector<InterventionSpec> unique;
    for (const auto& s : out)
        if (std::none_of(unique.begin(), unique.end(),
                         [&](const auto& u) { return u.text() == s.text(); }))
            unique.push_back(s);
    return unique;
}

std::string interventionRefusal(const InterventionSpec& spec, const RunConfig& c)
{
    const std::string& n = spec.name;
    const InterventionInfo* info = findIntervention(n);
    if (!info)
        return "'" + n + "' is not an intervention";
    const EncodingInfo& pe = encodingOf(c);
    const std::string run = runName(c);
    for (const auto& [name, why] : pe.refusedInterventions)
        if (name == n)
            return why;
    switch (info->scope) {
    case InterventionScope::Every: return {};
    case InterventionScope::RandomPositions:
        return c.training.randomPositions > 0
                   ? std::string()
                   : n + " draws test positions as randomized training does; " + run +
                         " was trained on positions 0..T-1";
    case InterventionScope::Recurrent:
        return pe.kind == PositionKind::Recurrent
                   ? std::string()
                   : n + " scales Mamba's discretisation step; " + run + " has none";
    case InterventionScope::Rotary:
    case InterventionScope::Attention: break;
    }
    if (pe.kind == PositionKind::Recurrent)
        return n + " changes attention; Mamba has none (mamba_dt, truncate and segments apply)";
    if (pe.kind == PositionKind::Learned)
        return n + " cannot extend " + pe.display + ": its learned positions end at " +
               std::to_string(c.model.maxPositionEmbeddings) +
               " tokens (truncate and segments keep every forward within them)";
    if (info->scope == InterventionScope::Rotary) {
        if (pe.kind != PositionKind::Rotary)
            return n + " rescales a rotary table; " + run + " has no rotation";
        if (pe.lengthDependent)
            return n + " would rescale " + run +
                   " twice: it already rescales its rotary table "
                   "with the length";
    }
    return {};
}

std::vector<std::string> applicableInterventions(const RunConfig& config)
{
    std::vector<std::string> out;
    for (const auto& n : interventionNames()) {
        InterventionSpec s;
        s.name = n;
        if (interventionRefusal(s, config).empty())
            out.push_back(n);
    }
    return out;
}

}  // namespace lengen::engine
