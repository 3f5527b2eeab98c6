#pragma once
// Bringing runs of the reference's Python code into the studio: find the run folders
// (config.yaml + state.pt) under a folder the user adds or drops, and import them into a runs
// folder as a job of the RunController (JobKind::Import: its progress in the Jobs panel, Stop
// between runs; engine: reference_runs.h).

#include <QString>
#include <QStringList>

#include <memory>

#include "job_worker.h"

namespace lengen::ui {

/// Reference run folders at or below `folder` that are not yet imported into `outDir`.
QStringList pendingReferenceRuns(const QString& folder, const QString& outDir);

struct ReferenceImportSummary {
    QStringList runFiles;  ///< imported runs, in order
    QStringList messages;  ///< one line per run: what happened, with notes and errors
    int failed = 0;
    bool cancelled = false;
};

/// The job that imports `refDirs` into `outDir`, one after another on the job's thread ("run k
/// of n"), stopping between runs when cancelled; a run that fails is a line of `summary` and
/// the others go on. `summary` is filled by the job; read it after its terminal signal.
JobWorker::AnalysisJob referenceImportJob(QStringList refDirs, QString outDir,
                                          std::shared_ptr<ReferenceImportSummary> summary);

}  // namespace lengen::ui
