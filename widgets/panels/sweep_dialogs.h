#pragma once
// The questions the studio asks about sweeps: which grid to build from the current config and
// how to submit it to Slurm (as the engine's values, the same the CLI's options fill:
// lengen/engine/sweep_run.h), and which position encodings Set up's "Sweep position
// encodings…" queues (a sweep spec with one `pe` axis).

#include <QStringList>

#include <optional>

#include "lengen/engine/sweep_run.h"

class QWidget;

namespace lengen::ui {

/// The grid to build (everything but the base config, which the caller sets): PEs, seeds,
/// tasks, config axes, stages, folder. nullopt when cancelled; Error(Usage) for a config axis
/// that is not KEY=V1,V2.
std::optional<engine::NewSweep> askNewSweep(QWidget* parent, const QString& defaultFolder);

/// How to submit to Slurm: partition, time, CPUs and GPUs per cell, cells at once. nullopt when
/// cancelled.
std::optional<engine::SlurmSweepOptions> askSubmit(QWidget* parent);

/// The position encodings to train the Set up config with (engine names: rope, nope, alibi,
/// …; all checked at first). nullopt when cancelled.
std::optional<QStringList> askPeSweep(QWidget* parent);

}  // namespace lengen::ui
