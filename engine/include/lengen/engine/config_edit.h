#pragma once
// Edits of a RunConfig that change more than one field, shared by the studio's form and the
// sweeps' axes: one place knows what a backbone, position encoding or task implies. Callers
// re-load the result (toYaml(…, YamlStyle::Draft) then loadConfigText) so that derived values
// and validation come from the loader.

#include <string>

#include "lengen/engine/config.h"

namespace lengen::engine {

/// Sets the position encoding the way the reference's configs name one: "rope" has no patch,
/// the others a patch named after them with `rope_scaling: {type: …}`. A factor written for
/// another encoding is dropped (the loader derives the new one's).
void setPositionEncoding(RunConfig& config, const std::string& type);
/// Switches the backbone with what it implies: family and type names, Mamba's unbounded
/// max_length, a finite one (2 × points, the reference's 8× factor) when leaving Mamba.
void setBackbone(RunConfig& config, Backbone backbone);
/// A position encoding as researchers write it, with the config's name where it differs:
/// "RoPE", "PI (linear)", "Dynamic NTK (dynamic)".
std::string peLabel(const std::string& type);
/// Sets the task and its data (boolean tasks read ±1 inputs).
void setTask(RunConfig& config, const std::string& name);

/// Names a sweep's `pe` axis takes, as researchers write them: rope, nope, alibi, fire, yarn,
/// dynamic_yarn, pi, dynamic_ntk (Llama position encodings), mamba, gpt2 (other backbones).
/// The config's own type names (linear, dynamic, dynamic-yarn) are accepted too.
std::vector<std::string> sweepPeNames();
/// Applies such a name: backbone, then position encoding. False for an unknown name.
bool applyPeName(RunConfig& config, const std::string& pe);

}  // namespace lengen::engine
