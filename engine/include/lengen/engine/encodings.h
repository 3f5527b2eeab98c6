#pragma once
// The position encodings and backbones a run can name: one row each. The config reader, the
// sweep axis (`--pe`), display names in legends and tables, the studio's form and its derived
// values line, and the intervention refusals all read this table (docs/architecture.md).
//
// Adding an encoding: one row in src/config/encodings.cpp, its module in
// model/position_encoding.cpp (makePositionEncoding), its keys in docs/config.md.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lengen/engine/config.h"

namespace lengen::engine {

/// How positions reach the model. Interventions that rescale a rotary table need Rotary;
/// those that change attention need an attention backbone (Rotary, Bias, None).
enum class PositionKind {
    None,       ///< NoPE: the causal mask alone orders tokens
    Rotary,     ///< q and k turned by position (RoPE and its scalings, xPos)
    Bias,       ///< an additive bias on the attention logits (ALiBi, FIRE, T5, KERPLE,
                ///< Sandwich; CoPE's depends on the content)
    Learned,    ///< a learned table of absolute positions (GPT-2), ends at n_positions
    Recurrent,  ///< no attention: order comes from a recurrence (Mamba)
};

struct EncodingInfo {
    std::string name;  ///< the sweep and --pe name: rope, pi, dynamic_ntk, mamba, gpt2
    Backbone backbone = Backbone::Llama;
    std::string type;     ///< position.type of a Llama run ("" for the other backbones)
    std::string display;  ///< as papers and legends name it: RoPE, PI, Dynamic NTK
    PositionKind kind = PositionKind::None;
    bool lengthDependent = false;   ///< rescales its own table with each forward's length
    bool usesFactor = false;        ///< reads rope_scaling.factor
    std::vector<std::string> keys;  ///< config keys it reads besides the model's shape
    /// The reference's patch.name for it ("" where stock transformers Llama runs it: rope,
    /// linear, dynamic; the backbones).
    std::string referencePatch;
    bool inReference = true;  ///< the reference's code has it (export-run can write the run)
    /// One of the paper's four case studies (RoPE, NoPE, ALiBi, FIRE): what a new sweep
    /// crosses unless told otherwise (the studio's New sweep dialog).
    bool paperCase = false;
    /// It reads token positions (randomized positions apply); false for NoPE, CoPE (it counts
    /// positions from the content) and Mamba.
    bool readsPositions = true;
    /// Interventions that would apply by its kind but do not here, with why (CoPE has no
    /// distances for lambda's cap; xPos's decay is lost to LongHeads' rotary re-positioning).
    std::vector<std::pair<std::string, std::string>> refusedInterventions;
    bool fusedCpu = true;  ///< CPU training as fused layers (kernel_policy.h)
    bool device = true;    ///< GPU with LibTorch's fused attention (SDPA, bias as a mask)
    std::string summary;   ///< one line: what it does, and its paper
    /// Its own weights in one layer (FIRE's MLP, T5's table, KERPLE's kernels), from the config
    /// alone, for the memory estimate before anything is allocated; null: none.
    std::function<double(const RunConfig&)> layerParameters;
    /// Floats per (head, query, key) pair its bias keeps for the backward besides the scores
    /// and probabilities (CoPE: logits, gates, counts, weights, two gathered rows), for the
    /// memory estimate.
    double pairActivations = 0;
    /// Its own values in the derived-values line ("FIRE MLP width 32"); null: none.
    std::function<std::vector<std::string>(const RunConfig&)> derived;
};

/// Every row, Llama encodings first (the sweep's order), then the other backbones.
const std::vector<EncodingInfo>& encodingTable();

/// The row named `name` (sweep name: `pi`, `dynamic_yarn`, `mamba`; `gpt` for gpt2) or whose
/// position.type is `name` (`linear`, `dynamic-yarn`); null when none.
const EncodingInfo* findEncoding(const std::string& name);

/// The row of a resolved run config: its backbone's row, or its Llama encoding's.
const EncodingInfo& encodingOf(const RunConfig& config);

/// Why a run of encoding `e` ignores config key `key` ("NoPE does not read it": a `patch.`
/// key or the rotary base that another encoding's row lists and `e`'s does not), or "" where
/// it reads it, or the key is no encoding's own. Compare's differing keys and the runs table
/// leave such a value out.
std::string encodingIgnores(const EncodingInfo& e, const std::string& key);

/// The values the engine derives from a config, one phrase each ("yarn factor 8",
/// "FIRE MLP width 32", "max_position_embeddings 102"): what the studio's Set up form shows
/// under the YAML and `lengen validate` could show beside it.
std::vector<std::string> derivedSettings(const RunConfig& config);

}  // namespace lengen::engine
