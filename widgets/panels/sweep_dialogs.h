#pragma once
// The two questions the Sweeps tab asks: which grid to build from the current config, and how
// to submit it to Slurm. Each returns the `lengen sweep …` arguments it stands for, so that the
// studio starts exactly what a user would type (docs/cli.md).

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

}  // namespace lengen::ui
