// The table of interventions: one row each, with its parameters (defaults and accepted values),
// where it applies, how its spec resolves against a run and an evaluation length, a one-line
// summary and its figure colour. Parsing, refusals, `--list-interventions`, the CLI help, the
// studio's dialog and the figure colours all read it (docs/interventions.md is the user's side).
//
// Adding an intervention: one row in makeRows() below plus its forward code (a
// model::Intervention::Kind applied in model/, or a prompt-level level in intervention_runner).

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "eval/intervention_resolve.h"
#include "lengen/engine/config.h"
#include "lengen/engine/encodings.h"
#include "lengen/engine/errors.h"

namespace lengen::engine {

namespace eval {

namespace {

using Kind = model::Intervention::Kind;
using Level = ResolvedIntervention::Level;

// A spec's parameters read against the run: every default filled in, every value checked.
class Params {
public:
    Params(const InterventionSpec& spec, const RunConfig& config, std::int64_t evalPoints)
        : spec(spec), config(config), trainPoints(config.trainPoints()), train(2 * trainPoints),
          evalTokens(2 * evalPoints)
    {}
    std::string raw(const std::string& key) const
    {
        for (const auto& [k, v] : spec.params)
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
            return train;
        const auto n = number(key, v);
        if (n != std::floor(n) || n < double(least) || n > 1e9)
            throw fail(key, v, "an integer >= " + std::to_string(least) + " or 'train'");
        return static_cast<std::int64_t>(n);
    }
    // The original length L of a length-based method, in tokens: `train` (default),
    // `config` (model.max_position_embeddings, the reference's YaRN) or an integer >= 2.
    std::int64_t original() const
    {
        if (raw("original") == "config") {
            if (config.model.maxPositionEmbeddings < 2)
                throw fail("original", "config", "usable: the run has no max_position_embeddings");
            return config.model.maxPositionEmbeddings;
        }
        return tokens("original", train, 2);
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
    // The default factor of a length-based method: evaluation tokens over L, at least 1.
    double factor(std::int64_t original) const
    {
        return positive("factor", std::max(1.0, double(evalTokens) /
                                                    double(std::max<std::int64_t>(original, 1))));
    }
    Error fail(const std::string& key, const std::string& v, const std::string& want) const
    {
        return Error(ErrorKind::Config,
                     "intervention '" + spec.text() + "': " + key + "=" + v + " is not " + want);
    }

    const InterventionSpec& spec;
    const RunConfig& config;
    const std::int64_t trainPoints, train, evalTokens;

    double number(const std::string& key, const std::string& v) const
    {
        char* end = nullptr;
        const double n = std::strtod(v.c_str(), &end);
        if (end == v.c_str() || *end != '\0' || !std::isfinite(n))
            throw fail(key, v, "a number");
        return n;
    }
};

std::string fmt(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string tokensText(std::int64_t n) { return std::to_string(n); }

using Resolve = void (*)(const Params& p, ResolvedIntervention& r);

struct Row {
    InterventionInfo info;
    Resolve resolve;
};

// Truncate and segments: points (query included), not tokens; `train` is the training
// prompt's points here.
void resolvePrompt(const Params& p, ResolvedIntervention& r)
{
    const auto pv = p.raw("points");
    r.points = pv.empty() || pv == "train" ? p.trainPoints : p.tokens("points", 0, 2);
    r.description = "points=" + std::to_string(r.points);
    if (r.level != Level::Segments)
        return;
    const auto w = p.raw("weight");
    if (!w.empty() && w != "mean" && w != "size")
        throw p.fail("weight", w, "mean or size");
    r.weightBySize = w == "size";
    r.description += std::string(", weight=") + (r.weightBySize ? "size" : "mean");
}

// PI and NTK: a factor over the original length L (default: eval tokens / L).
template <Kind K>
void resolveScaledRotary(const Params& p, ResolvedIntervention& r)
{
    r.model.kind = K;
    r.model.trainTokens = p.original();
    r.model.factor = p.factor(r.model.trainTokens);
    r.description =
        "factor=" + fmt(r.model.factor) + ", original=" + tokensText(r.model.trainTokens);
}

const std::vector<Row>& rows()
{
    using S = InterventionScope;
    const InterventionParam original{
        "original", "train",
        "tokens: an integer >= 2, 'train' or 'config' (max_position_embeddings)"};
    const InterventionParam factor{"factor", "eval / original length", "a number > 0, or 'auto'"};
    static const std::vector<Row> table = {
        {{"none", S::Every, {}, "the model as trained", "#444444", "none"},
         [](const Params&, ResolvedIntervention& r) { r.description = "the model as trained"; }},
        {{"truncate",
          S::Every,
          {{"points", "train", "points: an integer >= 2 or 'train'"}},
          "only the most recent examples that fit the training length",
          "#111111",
          "truncate:points=train",
          true},
         [](const Params& p, ResolvedIntervention& r) {
             r.level = Level::Truncate;
             resolvePrompt(p, r);
         }},
        {{"segments",
          S::Every,
          {{"points", "train", "points: an integer >= 2 or 'train'"},
           {"weight", "mean", "mean or size"}},
          "average of the predictions after each chunk of examples",
          "#7f7f7f",
          "segments:weight=size",
          true},
         [](const Params& p, ResolvedIntervention& r) {
             r.level = Level::Segments;
             resolvePrompt(p, r);
         }},
        {{"pi",
          S::Rotary,
          {factor, original},
          "position interpolation: positions / factor",
          "#e377c2",
          "pi:factor=4"},
         resolveScaledRotary<Kind::Pi>},
        {{"ntk",
          S::Rotary,
          {factor, original},
          "NTK-aware base scaling",
          "#8c564b",
          "ntk:factor=4"},
         resolveScaledRotary<Kind::Ntk>},
        {{"dynamic_ntk",
          S::Rotary,
          {{"alpha", "1", "a number > 0"}, original},
          "NTK scaling recomputed from the prompt's length",
          "#bcbd22",
          "dynamic_ntk:alpha=2"},
         [](const Params& p, ResolvedIntervention& r) {
             r.model.kind = Kind::DynamicNtk;
             r.model.alpha = p.positive("alpha", 1.0);
             r.model.trainTokens = p.original();
             r.description =
                 "alpha=" + fmt(r.model.alpha) + ", original=" + tokensText(r.model.trainTokens);
         }},
        {{"yarn",
          S::Rotary,
          {factor,
           {"beta_fast", "32", "a number > 0"},
           {"beta_slow", "1", "a number > 0, below beta_fast"},
           {"mscale", "0.1 ln factor + 1", "a number > 0"},
           original},
          "YaRN: frequency ramp and attention temperature",
          "#9467bd",
          "yarn:factor=4"},
         [](const Params& p, ResolvedIntervention& r) {
             auto& m = r.model;
             m.kind = Kind::Yarn;
             m.trainTokens = p.original();
             m.factor = p.factor(m.trainTokens);
             m.betaFast = p.positive("beta_fast", 32);
             m.betaSlow = p.positive("beta_slow", 1);
             if (m.betaSlow >= m.betaFast)
                 throw p.fail("beta_slow", p.raw("beta_slow"), "below beta_fast");
             m.yarnMscale = p.positive("mscale", m.factor > 1 ? 0.1 * std::log(m.factor) + 1 : 1.0);
             r.description = "factor=" + fmt(m.factor) + ", beta_fast=" + fmt(m.betaFast) +
                             ", beta_slow=" + fmt(m.betaSlow) + ", mscale=" + fmt(m.yarnMscale) +
                             ", original=" + tokensText(m.trainTokens);
         }},
        {{"lambda",
          S::Attention,
          {{"global", "2", "tokens: an integer >= 0 or 'train'"},
           {"local", "train", "tokens: an integer >= 1 or 'train'"},
           {"cap", "train", "tokens: an integer >= 0 or 'train'"}},
          "LM-Infinite Λ-mask: the first tokens and a recent window",
          "#d62728",
          "lambda:global=4,local=train"},
         [](const Params& p, ResolvedIntervention& r) {
             auto& m = r.model;
             m.kind = Kind::Lambda;
             m.global = p.tokens("global", 2, 0);
             m.local = p.tokens("local", p.train, 1);
             m.cap = p.tokens("cap", p.train, 0);
             r.description = "global=" + tokensText(m.global) + ", local=" + tokensText(m.local) +
                             ", cap=" + tokensText(m.cap);
         }},
        {{"window",
          S::Attention,
          {{"local", "train", "tokens: an integer >= 1 or 'train'"}},
          "sliding window of the training length",
          "#17becf",
          "window:local=train"},
         [](const Params& p, ResolvedIntervention& r) {
             r.model.kind = Kind::Window;
             r.model.local = p.tokens("local", p.train, 1);
             r.description = "local=" + tokensText(r.model.local);
         }},
        {{"logit_scale",
          S::Attention,
          {{"length", "train", "tokens: an integer >= 2 or 'train'"}},
          "logits × log n / log L beyond the training length",
          "#ff7f0e",
          "logit_scale:length=train"},
         [](const Params& p, ResolvedIntervention& r) {
             r.model.kind = Kind::LogitScale;
             r.model.trainTokens = p.tokens("length", p.train, 2);
             r.description = "length=" + tokensText(r.model.trainTokens);
         }},
        {{"mamba_dt",
          S::Recurrent,
          {{"factor", "train / eval length", "a number > 0, or 'auto'"}},
          "Mamba's step Δ × train / eval length",
          "#2ca02c",
          "mamba_dt:factor=0.5"},
         [](const Params& p, ResolvedIntervention& r) {
             r.model.kind = Kind::MambaDt;
             r.model.factor =
                 p.positive("factor", std::min(1.0, double(p.train) / double(p.evalTokens)));
             r.description = "factor=" + fmt(r.model.factor);
         }},
        {{"random_positions",
          S::RandomPositions,
          {{"range", "the run's max_position", "tokens: an integer >= the prompt's tokens"},
           {"seed", "0", "an integer >= 0"}},
          "test positions drawn as in randomized training (Ruoss et al.)",
          "#8a6d3b",
          "random_positions:seed=1"},
         [](const Params& p, ResolvedIntervention& r) {
             r.level = Level::Positions;
             r.range = p.raw("range").empty() ? p.config.training.randomPositions
                                              : p.tokens("range", 0, 1);
             if (r.range < p.evalTokens)
                 throw p.fail("range", std::to_string(r.range),
                              "at least the prompt's " + std::to_string(p.evalTokens) + " tokens");
             const auto s = p.raw("seed");
             const double v = s.empty() ? 0.0 : p.number("seed", s);
             if (v < 0 || v != std::floor(v) || v > 9e15)
                 throw p.fail("seed", s, "an integer >= 0");
             r.seed = static_cast<std::uint64_t>(v);
             r.description =
                 "range=" + std::to_string(r.range) + ", seed=" + std::to_string(r.seed);
         }},
        {{"longheads",
          S::Attention,
          {{"chunk", "2", "tokens: an integer >= 1 or 'train'"},
           {"budget", "train", "tokens: at least two chunks"}},
          "per head: the first, own and best-matching chunks",
          "#1f3b73",
          "longheads:chunk=2"},
         [](const Params& p, ResolvedIntervention& r) {
             auto& m = r.model;
             m.kind = Kind::LongHeads;
             m.chunk = p.tokens("chunk", 2, 1);
             m.budget = p.tokens("budget", p.train, 1);
             if (m.budget < 2 * m.chunk)
                 throw p.fail("budget", p.raw("budget"), "at least two chunks");
             r.description = "chunk=" + tokensText(m.chunk) + ", budget=" + tokensText(m.budget);
         }},
    };
    return table;
}

const Row* findRow(const std::string& name)
{
    for (const auto& row : rows())
        if (row.info.name == name)
            return &row;
    return nullptr;
}

}  // namespace

std::int64_t ResolvedIntervention::forwardTokens(std::int64_t promptPoints) const
{
    if (level == Level::Truncate || level == Level::Segments)
        return 2 * std::min(points, promptPoints);
    if (level == Level::Positions)  // positions up to range - 1
        return std::max(range, 2 * promptPoints);
    return 2 * promptPoints;
}

ResolvedIntervention resolveIntervention(const InterventionSpec& spec, const RunConfig& c,
                                         std::int64_t evalPoints)
{
    if (const auto why = interventionRefusal(spec, c); !why.empty())
        throw Error(ErrorKind::Config, "intervention '" + spec.text() + "' refused: " + why);
    const Row* row = findRow(spec.name);
    if (!row)
        throw Error(ErrorKind::Config, "intervention '" + spec.name + "' is unknown");
    const Params p(spec, c, evalPoints);
    ResolvedIntervention r;
    r.model.trainTokens = p.train;
    if (row->info.scope != InterventionScope::Every &&
        row->info.scope != InterventionScope::RandomPositions)
        r.level = Level::Model;
    row->resolve(p, r);
    return r;
}

}  // namespace eval

std::string describeIntervention(const InterventionSpec& spec, const RunConfig& config,
                                 int evalPoints)
{
    return eval::resolveIntervention(spec, config, evalPoints).description;
}

const std::vector<InterventionInfo>& interventionTable()
{
    static const std::vector<InterventionInfo> infos = [] {
        std::vector<InterventionInfo> out;
        for (const auto& row : eval::rows())
            out.push_back(row.info);
        return out;
    }();
    return infos;
}

const InterventionInfo* findIntervention(const std::string& name)
{
    for (const auto& info : interventionTable())
        if (info.name == name)
            return &info;
    return nullptr;
}

}  // namespace lengen::engine
