#pragma once
// Pieces of the YAML writer shared by the resolved-config emitter and the writer of the
// reference's config.yaml (interop/reference_config).

#include "lengen/engine/config.h"

namespace YAML {
class Emitter;
}

namespace lengen::engine::config {

/// The `training` section (key and mapping), every value as written in the config.
/// `referenceExtras` adds the keys the reference's training_args.yaml carries but ignores
/// (evaluation_strategy, save_total_limit, ...), so that its train.py reads the same file.
void emitTraining(YAML::Emitter& out, const TrainingConfig& t, bool referenceExtras = false);

}  // namespace lengen::engine::config
