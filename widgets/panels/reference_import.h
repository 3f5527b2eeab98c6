#pragma once
// Bringing runs of the reference's Python code into the studio: find the run folders
// (config.yaml + state.pt) under a folder the user adds or drops, and import them into a runs
// folder in a background thread behind a progress dialog (engine: reference_runs.h).

#include <QString>
#include <QStringList>

class QWidget;

namespace lengen::ui {

/// Reference run folders at or below `folder` that are not yet imported into `outDir`.
QStringList pendingReferenceRuns(const QString& folder, const QString& outDir);

struct ReferenceImportSummary {
    QStringList runFiles;   ///< imported runs, in order
    QStringList messages;   ///< one line per run: what happened, with notes and errors
    int failed = 0;
    bool cancelled = false;
};

/// Imports `refDirs` into `outDir`, one after another off the GUI thread, with a modal
/// progress dialog on `parent` that can cancel between runs. Never throws.
ReferenceImportSummary importReferenceRuns(QWidget* parent, const QStringList& refDirs,
                                           const QString& outDir);

}  // namespace lengen::ui
