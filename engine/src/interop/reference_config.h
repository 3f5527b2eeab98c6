#pragma once
// The reference's flattened run config (config.yaml, spec §5.3/§5.7) in both directions, and
// the state-dict keys that exist only on the Python side (unused embedding tables, derived
// frequency buffers).

#include <cstdint>
#include <string>
#include <vector>

#include "lengen/engine/config.h"

namespace lengen::engine::interop {

struct ReferenceConfig {
    RunConfig config;   ///< the run config.yaml describes, compat: reference
    std::string runId;  ///< wandb_id, or "" when absent
    std::vector<std::string> notes;
};

/// Reads a reference config.yaml. Throws ConfigError (file:line:key) when it is invalid.
ReferenceConfig loadReferenceConfig(const std::string& path);

/// config.yaml for the reference (model dict as its build_model leaves it, patch, task,
/// training, wandb, max_length, wandb_id). `notes` gets the adaptations made.
std::string referenceConfigYaml(const RunConfig& config, const std::string& runId,
                                std::vector<std::string>& notes);

/// Keys the reference's model has but LenGen's does not, by design: the unused token/position
/// embedding tables, derived rotary buffers, GPT-2's causal-mask buffers.
bool isPythonOnlyKey(const std::string& key);
/// Of those, the ones that are buffers rather than parameters (no optimizer state).
bool isBufferKey(const std::string& key);

/// The unused embedding table of the reference's backbone: key and shape.
struct PythonOnlyTensor {
    std::string key;
    std::vector<std::int64_t> shape;
};
PythonOnlyTensor embeddingTable(const RunConfig& config);

}  // namespace lengen::engine::interop
