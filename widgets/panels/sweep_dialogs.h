#pragma once
// The questions the studio asks about sweeps: which grid to build from the current config, how
// to submit it to Slurm (each returns the `lengen sweep …` arguments it stands for, so that the
// studio starts exactly what a user would type, docs/cli.md), and which position encodings Set
// up's "Sweep position encodings…" queues (a sweep spec with one `pe` axis).

#include <QStringList>

#include <optional>

class QWidget;

namespace lengen::ui {

/// Arguments after `lengen sweep new BASE`: --pe, --seeds, --task, --set, --no-eval, --probe,
/// --out. nullopt when cancelled.
std::optional<QStringList> askNewSweep(QWidget* parent, const QString& defaultFolder);

/// Arguments after `lengen sweep submit DIR`: --partition, --time, --gpus-per-job,
/// --cpus-per-job, --max-parallel. nullopt when cancelled.
std::optional<QStringList> askSubmit(QWidget* parent);

/// The position encodings to train the Set up config with (engine names: rope, nope, alibi,
/// …; all checked at first). nullopt when cancelled.
std::optional<QStringList> askPeSweep(QWidget* parent);

}  // namespace lengen::ui
