#pragma once
// The run configuration: the reference's YAML layout (model / patch / task / training / wandb),
// read with `!include` resolution, validated in full, and resolved to one RunConfig per
// model.max_length value. Plain values only: no YAML or Torch types cross this header.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lengen/engine/errors.h"

namespace lengen::engine {

bool isBooleanTaskName(const std::string& name);         ///< inputs in {-1, +1}^D
bool isClassificationTaskName(const std::string& name);  ///< accuracy metric, BCE loss

/// One curriculum axis. value(step) = min(start + increment * floor(step / interval), end).
struct CurriculumAxis {
    int start = 1;
    int end = 1;
    int increment = 0;
    int interval = 1;  ///< steps between increments, >= 1
    int valueAt(std::int64_t step) const;
};

struct CurriculumConfig {
    CurriculumAxis dims;    ///< truncated input dimension d_t (Gaussian tasks only)
    CurriculumAxis points;  ///< in-context points N per prompt
};

/// The curriculum's values at one step: what a prompt of that step holds.
struct CurriculumState {
    int dims = 0;
    int points = 0;
    bool operator==(const CurriculumState& o) const { return dims == o.dims && points == o.points; }
};

enum class Backbone { Llama, Mamba, Gpt2 };

/// Model section after resolution (reference §3, §5.3–5.4). Fields that a backbone does not use
/// keep their defaults.
struct ModelConfig {
    Backbone backbone = Backbone::Llama;
    std::string type = "decoder";    ///< "decoder" or "ssm" (informational)
    std::string family = "Llama2";   ///< as written: Llama2 | Mamba | GPT2
    std::vector<double> maxLengths;  ///< as written (a list = one run per value; inf allowed)
    double maxLength = 0;            ///< this run's value (inf for Mamba)
    int hiddenSize = 256;            ///< H (GPT-2: n_embd)
    int numLayers = 2;
    int numHeads = 4;
    int intermediateSize = 0;            ///< derived: 4 * H
    bool intermediateSizeGiven = false;  ///< intermediate_size was written (not derived)
    int nInDims = 0;                     ///< derived: curriculum.dims.end
    int maxPositionEmbeddings = 0;       ///< derived: max_length (L_orig for YaRN/NTK)
    std::string hiddenAct = "silu";
    double ropeTheta = 10000.0;
    double rmsNormEps = 1e-6;
    int stateSize = 16;         ///< Mamba only
    double residDropout = 0.1;  ///< GPT-2 only: resid_pdrop
    double embdDropout = 0.1;   ///< GPT-2 only: embd_pdrop
    double attnDropout = 0.1;   ///< GPT-2 only: attn_pdrop
};

/// Position encoding of a Llama backbone (reference §4). "rope" when no rope_scaling is given.
struct PositionConfig {
    std::string patchName;         ///< patch.name as written ("" when no patch)
    std::string type = "rope";     ///< a Llama row's type of encodingTable() (encodings.h)
    std::optional<double> factor;  ///< rope_scaling.factor (given or derived)
    bool factorGiven = false;      ///< rope_scaling.factor was written (not derived)
    bool explicitScaling = false;  ///< rope_scaling present in the config
    int fireMlpWidth = 32;         ///< `fire.mlp_width` (the FIRE paper's 32)
    int t5Buckets = 32;            ///< `t5.num_buckets` (T5's 32)
    int t5MaxDistance = 128;       ///< `t5.max_distance` (T5's 128)
    int sandwichDim = 128;         ///< `sandwich.dim`: d' of Sandwich's sinusoids
    double xposScaleBase = 512;    ///< `xpos.scale_base`: xPos's gamma (torchscale's 512)
    int copeMaxPositions = 64;     ///< `cope.npos_max`: CoPE's positions 0..npos_max-1
    /// `cope.divide_position_logits`: the position bias divided by sqrt(head_dim) as the
    /// content logits are (the authors' repository's default); false: added to the scaled
    /// logits as the paper's listing does (that repository's --cope-nodiv).
    bool copeDividePositionLogits = false;
};

struct TaskConfig {
    std::string data = "gaussian";  ///< gaussian | boolean
    std::string name = "linear_regression";
    CurriculumConfig curriculum;
};

/// Training section. Every key is applied as written (unlike the reference, §9.14–15).
struct TrainingConfig {
    double learningRate = 3e-4;
    double weightDecay = 0.0;
    double adamBeta1 = 0.9;
    double adamBeta2 = 0.999;
    double adamEpsilon = 1e-8;
    double maxGradNorm = 1.0;  ///< <= 0 disables clipping
    double warmupRatio = 0.03;
    std::int64_t maxSteps = 50000;
    std::int64_t loggingSteps = 10;
    std::int64_t saveSteps = 500;
    int batchSize = 64;  ///< per_device_train_batch_size
    /// `random_positions.max_position` M (Ruoss et al. 2023): each training forward reads its
    /// T token positions as a sorted random subset of 0..M-1; 0 = off (positions 0..T-1).
    std::int64_t randomPositions = 0;
};

/// `compat: reference` reproduces the reference's effective behaviour (docs/reference-compat.md).
enum class CompatMode { Intended, Reference };

struct RunConfig {
    ModelConfig model;
    PositionConfig position;
    TaskConfig task;
    TrainingConfig training;
    CompatMode compat = CompatMode::Intended;
    std::optional<std::uint64_t> seed;  ///< top-level `seed:`; the CLI's --seed overrides it
    std::string sourceFile;             ///< the file this was loaded from ("" for text)
    std::string wandbYaml;              ///< the wandb section, kept verbatim (ignored)

    int inputDims() const { return task.curriculum.dims.end; }
    /// The curriculum's end (points.end): the prompt length evaluations take as their base.
    /// What a run actually trained on can be less (max_steps before the curriculum's end):
    /// that is curriculumAfter(steps), the training length its figures mark (issue 52).
    int trainPoints() const { return task.curriculum.points.end; }
    /// The curriculum at 0-based step `step` (reference §5.5).
    CurriculumState curriculumAt(std::int64_t step) const;
    /// What the weights after `stepsDone` steps last trained on: the curriculum at step
    /// stepsDone - 1 (its start when nothing was trained).
    CurriculumState curriculumAfter(std::int64_t stepsDone) const;
    /// The training length of weights after `stepsDone` steps, as results store and figures
    /// mark it: curriculumAfter(stepsDone).points, or points.end for 0 steps (weights that
    /// trained nothing, or imported without a step count, have no shorter length to mark).
    int trainedPoints(std::int64_t stepsDone) const
    {
        return stepsDone > 0 ? curriculumAfter(stepsDone).points : trainPoints();
    }
    bool isBooleanTask() const { return task.data == "boolean"; }
    bool isClassification() const { return isClassificationTaskName(task.name); }
    /// Display name of the PE/backbone as the reference's legends use it ("RoPE", "ALiBi", ...).
    std::string peDisplayName() const;
    /// Optimiser values actually applied (differs from `training` under compat: reference).
    double effectiveWeightDecay() const;
    double effectiveAdamEpsilon() const;
    double effectiveMaxGradNorm() const;
    std::int64_t warmupSteps() const;  ///< ceil(warmup_ratio * max_steps)
};

/// A run whose max_steps ends before its curriculum does trains on shorter prompts than
/// points.end: "the curriculum reaches 9 points at step 1600; with 1500 steps training ends at
/// 7 points" (and the dims likewise), or "" when training reaches the curriculum's end. Every
/// front end shows it where a config is validated, trained or made a sweep (issue 52).
std::string curriculumShortfall(const RunConfig& config);

/// Result of loading a config file: one RunConfig per model.max_length value, plus warnings
/// (unknown keys, honoured misspellings) that did not stop the load.
struct LoadedConfig {
    std::vector<RunConfig> runs;
    std::vector<ConfigIssue> warnings;
};

/// Load and validate a YAML run config, resolving `!include` relative to each including file.
/// Throws ConfigError listing every problem (file, line, column, key path).
LoadedConfig loadConfigFile(const std::string& path);

/// Same, from YAML text (used for configs stored inside run files). `name` labels messages.
LoadedConfig loadConfigText(const std::string& yaml, const std::string& name);

/// The config stored in a run file (`/config`), which must describe exactly one run.
/// Error(RunFile) naming `<runFile>:/config` and the problem when it does not load: in a run
/// file a bad config means a damaged or foreign file, not a user's typo.
RunConfig storedRunConfig(const std::string& yaml, const std::string& runFile);

/// How toYaml writes derived values.
enum class YamlStyle {
    Resolved,  ///< every value, derived ones included (what runs store and `validate` prints)
    Draft,     ///< derived values only where they were written, so that an edit re-derives
               ///< them (the studio's editor): the max_length list, no n_in_dims,
               ///< max_position_embeddings, intermediate_size or rope factor unless given
};

/// The config as YAML. Re-loading Resolved text with loadConfigText gives a RunConfig with the
/// same values; re-loading Draft text gives the same config as the text it came from.
std::string toYaml(const RunConfig& config, YamlStyle style = YamlStyle::Resolved);

/// One key of the resolved config whose value differs between runs; values[i] is run i's
/// ("" where the run has no such key).
struct ConfigDifference {
    std::string key;  ///< dotted path, e.g. "model.num_hidden_layers"
    std::vector<std::string> values;
    /// Per run: why the key does not apply to it ("NoPE does not read it": a key of another
    /// encoding, per the encoding table's keys), or "" where it does. A key that applies to no
    /// run differs in nothing that matters and is left out.
    std::vector<std::string> notApplied;
};
/// The keys of flattened configs whose values are not all the same (a key a config lacks reads
/// ""), sorted: the runs table's columns (run_table.h) and, less the keys no run reads,
/// Compare's config table.
std::vector<std::string>
variedKeys(const std::vector<const std::map<std::string, std::string>*>& configs);
/// The keys whose values are not all the same, sorted by key (Compare's config table).
std::vector<ConfigDifference> configDifferences(const std::vector<RunConfig>& runs);
/// Every scalar of the resolved config under its dotted key ("model.num_hidden_layers" -> "4";
/// a list as "[22, 44]"): what Compare groups runs by.
std::map<std::string, std::string> flattenedConfig(const RunConfig& run);

/// Known names, for help texts and the GUI.
std::vector<std::string> knownTaskNames();
std::vector<std::string> knownPositionTypes();

}  // namespace lengen::engine
