#pragma once
// Pieces of the YAML writer shared by the resolved-config emitter and the writer of the
// reference's config.yaml (interop/reference_config).

#include "lengen/engine/config.h"

namespace YAML {
class Emitter;
}

namespace lengen::engine::config {

/// The model's size and backbone keys, as each backbone's Hugging Face config names them
/// (GPT-2: n_embd, n_layer, n_head, dropouts; Llama: hidden_size, layers, heads, hidden_act,
/// rope_theta, rms_norm_eps; Mamba: hidden_size, layers, state_size).
void emitModelShape(YAML::Emitter& out, const ModelConfig& m);

/// The `training` section (key and mapping), every value as written in the config.
/// `referenceExtras` adds the keys the reference's training_args.yaml carries but ignores
/// (evaluation_strategy, save_total_limit, ...), so that its train.py reads the same file.
void emitTraining(YAML::Emitter& out, const TrainingConfig& t, bool referenceExtras = false);

}  // namespace lengen::engine::config
