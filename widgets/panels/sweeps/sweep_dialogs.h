#pragma once
// The questions the studio asks about sweeps: which grid to build from the current config and
// how to submit it to Slurm (as the engine's values, the same the CLI's options fill:
// lengen/engine/sweep_run.h).

#include <QStringList>

#include <functional>

#include "lengen/engine/sweep_run.h"

class QDialog;
class QWidget;

namespace lengen::ui {

/// How a dialog hears whether what it asked for worked: "" closes it, a problem is shown in it
/// beside the field it names (the dialog stays open with every choice, OK enabled again).
/// Safe to call after the dialog was closed (nothing happens).
using DialogReply = std::function<void(const QString& problem)>;

/// The grid to build on `base` (one run: the Set up tab's draft with its Steps): PEs, seeds,
/// tasks, config axes, stages, folder, and the steps every cell trains (`base`'s max_steps
/// shown, changeable; the request's base carries the answer). Opens window-modal (open(), no nested
/// event loop) and calls `then` once accepted, with the reply to give when the sweep is created or
/// refused (the dialog waits for it: issue 52); a config axis that is not KEY=V1,V2 is refused in
/// the dialog. Returns the dialog (it deletes itself when closed).
QDialog* askNewSweep(QWidget* parent, const QString& defaultFolder, const engine::RunConfig& base,
                     std::function<void(engine::NewSweep, DialogReply)> then);

/// `base` if it does not exist or is an empty folder, else base-2, base-3, …: the New sweep
/// dialog's proposal (an existing sweep folder was proposed, then refused).
QString freeFolder(const QString& base);

/// Where New sweep proposes to write: `sweeps/sweep` under the first Runs list folder that
/// exists (so its runs appear in Runs, Compare and Hyperparameters), else under `current`;
/// made free by freeFolder.
QString defaultSweepFolder(const QStringList& runsFolders, const QString& current);
/// Whether `dir` lies in one of `folders` (or is one): the Runs list sees its runs.
bool folderUnder(const QString& dir, const QStringList& folders);

/// How to submit to Slurm: partition, time, CPUs and GPUs per cell, cells at once; as
/// askNewSweep.
QDialog* askSubmit(QWidget* parent, std::function<void(engine::SlurmSweepOptions)> then);

}  // namespace lengen::ui
