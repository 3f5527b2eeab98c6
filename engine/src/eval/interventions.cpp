// Intervention specs: the one syntax (`name[:key=value,...]`), which backbones and PEs accept
// each, and resolution of every default against a run and an evaluation length
// (docs/interventions.md is the user's side of this file).

#include "eval/interventions.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"

namespace lengen::engine {

namespace {

using Kind = model::Intervention::Kind;

// Parameter names each intervention accepts.
const std::map<std::string, std::set<std::string>>& knownParams()
{
    static const std::map<std::string, std::set<std::string>> params = {
        {"none", {}},
        {"truncate", {"points"}},
        {"segments", {"points", "weight"}},
        {"pi", {"factor"}},
        {"ntk", {"factor"}},
        {"dynamic_ntk", {"alpha"}},
        {"yarn", {"factor", "beta_fast", "beta_slow", "mscale"}},
        {"lambda", {"global", "local", "cap"}},
        {"window", {"local"}},
        {"logit_scale", {"length"}},
        {"mamba_dt", {"factor"}},
        {"longheads", {"chunk", "budget"}},
    };
    return params;
}

std::string trim(std::string s)
{
    const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

Error bad(const std::string& what) { return Error(ErrorKind::Config, "intervention " + what); }

bool rotaryPe(const std::string& type)
{
    return type == "rope" || type == "linear" || type == "yarn" || type == "dynamic" ||
           type == "dynamic-yarn";
}

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
        std::string piece = trim(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        start = comma == std::string::npos ? list.size() + 1 : comma + 1;
        if (!piece.empty())
            out.push_back(std::move(piece));
    }
    return out;
}

const std::vector<std::string>& interventionNames()
{
    static const std::vector<std::string> names = {
        "none", "truncate", "segments", "pi",     "ntk",         "dynamic_ntk",
        "yarn", "lambda",   "window",   "logit_scale", "mamba_dt", "longheads"};
    return names;
}

std::vector<InterventionSpec> expandInterventions(const std::vector<std::string>& texts, const RunConfig& config)
{
    std::vector<InterventionSpec> out;
    auto add = [&](const InterventionSpec& spec) {
        if (std::none_of(out.begin(), out.end(), [&](const auto& s) { return s.text() == spec.text(); }))
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
                throw bad("'" + piece + "': a parameter needs a name before it (e.g. yarn:factor=8)");
            params = piece;  // continues the previous spec
        } else {
            InterventionSpec spec;
            spec.name = trim(piece.substr(0, colon));
            std::replace(spec.name.begin(), spec.name.end(), '-', '_');
            if (!knownParams().count(spec.name)) {
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
            throw bad("'" + out.back().name + "': parameter '" + params + "' needs a value (key=value)");
        const std::string key = trim(params.substr(0, eq)), value = trim(params.substr(eq + 1));
        auto& spec = out.back();
        if (!knownParams().at(spec.name).count(key)) {
            std::string keys;
            for (const auto& k : knownParams().at(spec.name))
                keys += (keys.empty() ? "" : ", ") + k;
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
        if (std::none_of(unique.begin(), unique.end(), [&](const auto& u) { return u.text() == s.text(); }))
            unique.push_back(s);
    return unique;
}

std::string interventionRefusal(const InterventionSpec& spec, const RunConfig& c)
{
    const std::string& n = spec.name;
    const std::string run = runName(c);
    if (n == "none" || n == "truncate" || n == "segments")
        return {};
    if (n == "mamba_dt")
        return c.model.backbone == Backbone::Mamba
                   ? std::string()
                   : "mamba_dt scales Mamba's discretisation step; " + run + " has none";
    if (c.model.backbone == Backbone::Mamba)
        return n + " changes attention; Mamba has none (mamba_dt, truncate and segments apply)";
    if (c.model.backbone == Backbone::Gpt2)
        return n + " cannot extend GPT-2: its learned positions end at " +
               std::to_string(c.model.maxPositionEmbeddings) +
               " tokens (truncate and segments keep every forward within them)";
    if (n == "pi" || n == "ntk" || n == "dynamic_ntk" || n == "yarn") {
        const auto& t = c.position.type;
        if (!rotaryPe(t))
            return n + " rescales a rotary table; " + run + " has no rotation";
        if (t == "dynamic" || t == "dynamic-yarn")
            return n + " would rescale " + run + " twice: it already rescales its rotary table "
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

std::string describeIntervention(const InterventionSpec& spec, const RunConfig& config,
                                 int evalPoints)
{
    return eval::resolveIntervention(spec, config, evalPoints).description;
}

namespace eval {

namespace {

// Reads the parameters of one spec against run-derived defaults.
class Params {
public:
    Params(const InterventionSpec& spec, std::int64_t trainTokens)
        : m_spec(spec), m_train(trainTokens)
    {
    }
    std::string raw(const std::string& key) const
    {
        for (const auto& [k, v] : m_spec.params)
            if (k == key)
                return v;
        return {};
    }
    // A count of tokens: an integer >= least, or `train` (the training length in tokens).
    std::int64_t tokens(const std::string& key, std::int64_t fallback, std::int64_t least) const
    {
        const auto v = raw(key);
        if (v.empty())
            return fallback;
        if (v == "train")
            return m_train;
        const auto n = number(key, v);
        if (n != std::floor(n) || n < double(least) || n > 1e9)
            throw fail(key, v, "an integer >= " + std::to_string(least) + " or 'train'");
        return static_cast<std::int64_t>(n);
    }
    double positive(const std::string& key, double fallback) const
    {
        const auto v = raw(key);
        if (v.empty() || v == "auto")
            return fallback;
        const auto n = number(key, v);
        if (!(n > 0) || n > 1e9)
            throw fail(key, v, "a number > 0");
        return n;
    }
    Error fail(const std::string& key, const std::string& v, const std::string& want) const
    {
        return bad("'" + m_spec.text() + "': " + key + "=" + v + " is not " + want);
    }

private:
    double number(const std::string& key, const std::string& v) const
    {
        char* end = nullptr;
        const double n = std::strtod(v.c_str(), &end);
        if (end == v.c_str() || *end != '\0' || !std::isfinite(n))
            throw fail(key, v, "a number");
        return n;
    }
    const InterventionSpec& m_spec;
    std::int64_t m_train;
};

std::string fmt(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

}  // namespace

std::int64_t ResolvedIntervention::forwardTokens(std::int64_t promptPoints) const
{
    if (level == Level::Truncate || level == Level::Segments)
        return 2 * std::min(points, promptPoints);
    return 2 * promptPoints;
}

ResolvedIntervention resolveIntervention(const InterventionSpec& spec, const RunConfig& c,
                                         std::int64_t evalPoints)
{
    if (const auto why = interventionRefusal(spec, c); !why.empty())
        throw Error(ErrorKind::Config, "intervention '" + spec.text() + "' refused: " + why);
    const std::int64_t trainPoints = c.trainPoints();
    const std::int64_t train = 2 * trainPoints;  // L_train in tokens
    const double ratio = double(evalPoints) / double(std::max<std::int64_t>(trainPoints, 1));
    Params p(spec, train);
    ResolvedIntervention r;
    auto& m = r.model;
    m.trainTokens = train;
    const std::string& n = spec.name;
    if (n == "none") {
        r.description = "the model as trained";
        return r;
    }
    if (n == "truncate" || n == "segments") {
        r.level = n == "truncate" ? ResolvedIntervention::Level::Truncate
                                  : ResolvedIntervention::Level::Segments;
        // Points (query included), not tokens: `train` is the training prompt's points here.
        const auto pv = p.raw("points");
        r.points = pv.empty() || pv == "train" ? trainPoints : p.tokens("points", 0, 2);
        const auto w = p.raw("weight");
        if (!w.empty() && w != "mean" && w != "size")
            throw p.fail("weight", w, "mean or size");
        r.weightBySize = w == "size";
        r.description = "points=" + std::to_string(r.points) +
                        (r.level == ResolvedIntervention::Level::Segments
                             ? std::string(", weight=") + (r.weightBySize ? "size" : "mean")
                             : std::string());
        return r;
    }
    r.level = ResolvedIntervention::Level::Model;
    if (n == "pi" || n == "ntk") {
        m.kind = n == "pi" ? Kind::Pi : Kind::Ntk;
        m.factor = p.positive("factor", std::max(1.0, ratio));
        r.description = "factor=" + fmt(m.factor);
    } else if (n == "dynamic_ntk") {
        m.kind = Kind::DynamicNtk;
        m.alpha = p.positive("alpha", 1.0);
        r.description = "alpha=" + fmt(m.alpha) + ", length=" + std::to_string(train);
    } else if (n == "yarn") {
        m.kind = Kind::Yarn;
        m.factor = p.positive("factor", std::max(1.0, ratio));
        m.betaFast = p.positive("beta_fast", 32);
        m.betaSlow = p.positive("beta_slow", 1);
        if (m.betaSlow >= m.betaFast)
            throw p.fail("beta_slow", p.raw("beta_slow"), "below beta_fast");
        m.yarnMscale = p.positive("mscale", m.factor > 1 ? 0.1 * std::log(m.factor) + 1 : 1.0);
        r.description = "factor=" + fmt(m.factor) + ", beta_fast=" + fmt(m.betaFast) +
                        ", beta_slow=" + fmt(m.betaSlow) + ", mscale=" + fmt(m.yarnMscale);
    } else if (n == "lambda") {
        m.kind = Kind::Lambda;
        m.global = p.tokens("global", 2, 0);
        m.local = p.tokens("local", train, 1);
        m.cap = p.tokens("cap", train, 0);
        r.description = "global=" + std::to_string(m.global) + ", local=" + std::to_string(m.local) +
                        ", cap=" + std::to_string(m.cap);
    } else if (n == "window") {
        m.kind = Kind::Window;
        m.local = p.tokens("local", train, 1);
        r.description = "local=" + std::to_string(m.local);
    } else if (n == "logit_scale") {
        m.kind = Kind::LogitScale;
        m.trainTokens = p.tokens("length", train, 2);
        r.description = "length=" + std::to_string(m.trainTokens);
    } else if (n == "mamba_dt") {
        m.kind = Kind::MambaDt;
        m.factor = p.positive("factor", std::min(1.0, 1.0 / ratio));
        r.description = "factor=" + fmt(m.factor);
    } else if (n == "longheads") {
        m.kind = Kind::LongHeads;
        m.chunk = p.tokens("chunk", 2, 1);
        m.budget = p.tokens("budget", train, 1);
        if (m.budget < 2 * m.chunk)
            throw p.fail("budget", p.raw("budget"), "at least two chunks");
        r.description = "chunk=" + std::to_string(m.chunk) + ", budget=" + std::to_string(m.budget);
    }
    return r;
}

}  // namespace eval

}  // namespace lengen::engine
