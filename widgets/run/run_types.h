#pragma once
// Value types that cross from the engine's worker thread to the GUI thread through queued
// signals. Engine structs are registered as metatypes as they are (plain copyable values).

#include <QMetaType>
#include <QString>

#include "lengen/engine/observer.h"

namespace lengen::ui {

/// What a job does: the views that show training ignore the other jobs (evaluate, probe, export
/// figures, a sweep's creation, local run or Slurm submission), and the other way round.
enum class JobKind { Train, Evaluate, Probe, Export, Sweep };

/// An analysis job's progress: stage `stage` (from 0) of `stages`, `done` of `total` units in
/// it; `fraction` is the whole job's (stages weigh the same), `etaSeconds` < 0 while unknown.
struct AnalysisProgress {
    QString stageName;
    int stage = 0;
    int stages = 1;
    qint64 done = 0;
    qint64 total = 1;
    double fraction = 0;
    double etaSeconds = -1;
};

/// A failed run or analysis: one sentence for the user, technical detail for a details box.
struct RunError {
    QString message;
    QString detail;
    int exitKind = 1;  ///< engine::ErrorKind as int (1 = internal)
};

/// Registers every type above and the engine's observer structs with Qt's meta-type system
/// (once per process; safe to call again).
void registerRunTypes();

}  // namespace lengen::ui

Q_DECLARE_METATYPE(lengen::ui::RunError)
Q_DECLARE_METATYPE(lengen::ui::JobKind)
Q_DECLARE_METATYPE(lengen::ui::AnalysisProgress)
Q_DECLARE_METATYPE(lengen::engine::RunStarted)
Q_DECLARE_METATYPE(lengen::engine::StepProgress)
Q_DECLARE_METATYPE(lengen::engine::LogRecord)
Q_DECLARE_METATYPE(lengen::engine::RunSummary)
