#pragma once
// Value types that cross from the engine's worker thread to the GUI thread through queued
// signals. Engine structs are registered as metatypes as they are (plain copyable values).

#include <QMetaType>
#include <QString>

#include "lengen/engine/jobs.h"
#include "lengen/engine/observer.h"

namespace lengen::ui {

/// A job of the studio is the engine's job record (lengen/engine/jobs.h): the same type as the
/// jobs other processes run, found on disk. Its kind is one row of engine::jobKindTable().
using JobKind = engine::JobKindId;
using JobState = engine::JobState;

/// An analysis job's progress: stage `stage` (from 0) of `stages`, `done` of `total` units in
/// it; `fraction` is the whole job's (stages weigh the same), `etaSeconds` < 0 while unknown
/// (it counts down while the fraction stands, never up).
struct AnalysisProgress {
    QString stageName;
    QString part;  ///< where in the stage ("instruction position"), "" when it has no parts
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

/// One job of the studio, as every view sees it (the Jobs panel, the Train tab, the Sweeps tab):
/// a value the RunController owns and hands out; ids never repeat within a process. Text
/// fields are UTF-8 std::strings (the engine's); views convert where they show them.
using JobInfo = engine::JobRecord;
/// engine::jobStateName as a QString ("queued", "running", …, "stopped", "failed").
inline QString jobStateText(JobState state)
{
    return QString::fromLatin1(engine::jobStateName(state));
}

/// Registers every type above and the engine's observer structs with Qt's meta-type system
/// (once per process; safe to call again).
void registerRunTypes();

}  // namespace lengen::ui

Q_DECLARE_METATYPE(lengen::ui::RunError)
Q_DECLARE_METATYPE(lengen::engine::JobKindId)
Q_DECLARE_METATYPE(lengen::engine::JobRecord)
Q_DECLARE_METATYPE(lengen::engine::JobResult)
Q_DECLARE_METATYPE(lengen::ui::AnalysisProgress)
Q_DECLARE_METATYPE(lengen::engine::RunStarted)
Q_DECLARE_METATYPE(lengen::engine::StepProgress)
Q_DECLARE_METATYPE(lengen::engine::LogRecord)
