#pragma once
// Training-free length extension at evaluation (docs/interventions.md): named changes to a
// trained run's forward pass (or to the prompts it sees) that never touch its weights. One
// syntax for the CLI, sweeps and the studio: `name[:key=value,...]`, e.g. `yarn:factor=8` or
// `lambda:global=2,local=train`; `train` stands for the training length in tokens, and a
// factor left out defaults to evaluation length / training length.

#include <string>
#include <utility>
#include <vector>

namespace lengen::engine {

struct RunConfig;

/// Where an intervention acts, which decides the runs it applies to.
enum class InterventionScope {
    Every,      ///< none, and those that build other prompts (truncate, segments): every run
    Rotary,     ///< rescales a rotary table: Llama with a rotary PE that does not rescale itself
    Attention,  ///< changes attention weights: Llama with any PE
    Recurrent,  ///< changes Mamba's recurrence
    /// draws test positions as randomized training did: runs trained with
    /// training.random_positions
    RandomPositions,
};

struct InterventionParam {
    std::string key;          ///< as written in a spec: factor, local, original
    std::string defaultText;  ///< what it is when left out: "train", "32", "eval / original length"
    std::string accepts;      ///< the values it takes, as the refusal says them
};

/// One row of the table of interventions (src/eval/intervention_table.cpp): everything but
/// its forward code. Parsing, refusals, the CLI's help and lists, the studio's dialog and the
/// figure colours derive from these rows.
struct InterventionInfo {
    std::string name;
    InterventionScope scope = InterventionScope::Every;
    std::vector<InterventionParam> params;
    std::string summary;  ///< one line, what it does
    std::string color;    ///< its colour in every figure (#rrggbb)
    std::string example;  ///< a spec with parameters, for hints ("yarn:factor=4")
    /// It runs many shorter prompts in place of the one asked (truncate, segments): there is
    /// no single attention map to probe or show under it.
    bool manyPrompts = false;
};

/// Every intervention, in the documentation's order (none first).
const std::vector<InterventionInfo>& interventionTable();

/// The row of `name` (as written in a spec, `-` read as `_`); null when none.
const InterventionInfo* findIntervention(const std::string& name);

/// One intervention as written (validated by name and parameter names, not yet resolved).
struct InterventionSpec {
    std::string name;                                         ///< none, truncate, yarn, ...
    std::vector<std::pair<std::string, std::string>> params;  ///< as written, in order
    /// Canonical text, `name` or `name:k=v,k=v` in the order written: the storage key.
    std::string text() const;
    bool isNone() const { return name == "none"; }
};

/// The comma-separated pieces of a list, trimmed, empty ones left out: a name (`yarn`,
/// `all`), a spec with parameters (`yarn:factor=8`) or a parameter continuing one (`local=6`).
std::vector<std::string> splitInterventionList(const std::string& list);

/// Parses one spec or a comma-separated list. A piece holding `=` but no `:` continues the
/// previous spec's parameters: `lambda:global=2,local=train,yarn` is lambda (two parameters)
/// and yarn. Error(Config) naming the piece for an unknown name, parameter or value.
std::vector<InterventionSpec> parseInterventions(const std::string& list);

/// The specs a list of texts asks of a run with this config: each text parsed (one spec or a
/// comma-separated list), and `all` — alone or among names, in any text — adds every
/// intervention that applies to the run (a union, the same rule for the CLI, sweeps and the
/// studio). Duplicates once, in the order first given. Error(Config) as parseInterventions.
std::vector<InterventionSpec> expandInterventions(const std::vector<std::string>& texts,
                                                  const RunConfig& config);

/// Every intervention's name, in the table's order (none first).
const std::vector<std::string>& interventionNames();

/// Why `spec` cannot apply to a run with this config, naming both ("" when it can).
std::string interventionRefusal(const InterventionSpec& spec, const RunConfig& config);

/// The interventions (default parameters) that apply to a run with this config, none first.
std::vector<std::string> applicableInterventions(const RunConfig& config);

/// The parameters `spec` resolves to for this run at an evaluation of `evalPoints` points,
/// every default filled in ("factor=8, beta_fast=32, beta_slow=1, mscale=1.208"). Error(Config)
/// for a value out of range.
std::string describeIntervention(const InterventionSpec& spec, const RunConfig& config,
                                 int evalPoints);

}  // namespace lengen::engine
