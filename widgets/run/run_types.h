#pragma once
// Value types that cross from the engine's worker thread to the GUI thread through queued
// signals. Engine structs are registered as metatypes as they are (plain copyable values).

#include <QMetaType>
#include <QString>

#include "lengen/engine/observer.h"

namespace lengen::ui {

/// What a job does: the views that show training ignore the other jobs (evaluate, probe, export
/// figures, a sweep's creation, local run or Slurm submission, an import of the Python code's
/// runs), and the other way round.
enum class JobKind { Train, Evaluate, Probe, Export, Sweep, Import };

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

/// One job of the studio, as every view sees it (the Jobs panel, the Train tab, the Sweeps tab):
/// a value the RunController owns and hands out; ids never repeat within a process.
struct JobInfo {
    enum class State { Queued, Running, Paused, Stopping, Finished, Cancelled, Failed };
    quint64 id = 0;
    JobKind kind = JobKind::Train;
    QString label;
    QString subject;        ///< the run file or sweep folder it touches ("" = unknown: runs alone)
    State state = State::Queued;
    QString waitingFor;     ///< queued: why it has not started ("the training of X", "a free core")
    double fraction = -1;   ///< 0..1; < 0 while unknown
    QString progress;       ///< "1,200/15,000 steps", "stage 2 of 3: …", "3/8 cells"
    double etaSeconds = -1;
    qint64 queuedAtMs = 0, startedAtMs = 0, endedAtMs = 0;  ///< epoch ms; 0 = not yet
    QString message;        ///< how it ended, in its own units ("3 methods computed"), or why it failed
    bool active() const { return state == State::Running || state == State::Paused || state == State::Stopping; }
    bool ended() const { return state == State::Finished || state == State::Cancelled || state == State::Failed; }
};
/// "queued", "running", "paused", "stopping", "finished", "stopped", "failed" (as the Runs list
/// and the header say them).
QString jobStateName(JobInfo::State state);

/// Registers every type above and the engine's observer structs with Qt's meta-type system
/// (once per process; safe to call again).
void registerRunTypes();

}  // namespace lengen::ui

Q_DECLARE_METATYPE(lengen::ui::RunError)
Q_DECLARE_METATYPE(lengen::ui::JobKind)
Q_DECLARE_METATYPE(lengen::ui::JobInfo)
Q_DECLARE_METATYPE(lengen::ui::AnalysisProgress)
Q_DECLARE_METATYPE(lengen::engine::RunStarted)
Q_DECLARE_METATYPE(lengen::engine::StepProgress)
Q_DECLARE_METATYPE(lengen::engine::LogRecord)
Q_DECLARE_METATYPE(lengen::engine::RunSummary)
