#include "reference_import.h"

#include <QDir>
#include <QFileInfo>

#include "lengen/engine/errors.h"
#include "lengen/engine/reference_runs.h"

namespace lengen::ui {

namespace {

// What one import produced.
struct Outcome {
    QString runFile;
    QString message;
    bool ok = false;
};

Outcome importOne(const QString& dir, const QString& outDir)
{
    Outcome o;
    try {
        engine::ReferenceImportOptions options;
        options.outDir = outDir.toStdString();
        const auto r = engine::importReferenceRun(dir.toStdString(), options);
        o.ok = true;
        o.runFile = QString::fromStdString(r.runFile);
        o.message = QObject::tr("%1: imported (%2 steps)").arg(dir).arg(r.stepsDone);
        for (const auto& n : r.notes)
            o.message += QStringLiteral("\n    ") + QString::fromStdString(n);
    } catch (const std::exception& e) {
        o.message = QObject::tr("%1: not imported — %2").arg(dir, QString::fromUtf8(e.what()));
    }
    return o;
}

}  // namespace

QStringList pendingReferenceRuns(const QString& folder, const QString& outDir)
{
    QStringList out;
    try {
        // A run whose config.yaml is unreadable is offered too: its import says what is wrong.
        for (const auto& dir : engine::findReferenceRuns(folder.toStdString()))
            if (!engine::isReferenceRunImported(dir, outDir.toStdString()))
                out << QString::fromStdString(dir);
    } catch (const std::exception&) {
    }
    return out;
}

JobWorker::AnalysisJob referenceImportJob(QStringList refDirs, QString outDir,
                                          std::shared_ptr<ReferenceImportSummary> summary)
{
    return [refDirs = std::move(refDirs), outDir = std::move(outDir), summary = std::move(summary)](
               engine::RunControl& control, engine::AnalysisObserver& obs) {
        engine::JobResult result;
        const auto n = std::int64_t(refDirs.size());
        obs.onStage(0, 1, "import");
        for (std::int64_t i = 0; i < n; ++i) {
            if (!control.shouldContinue()) {
                summary->cancelled = true;
                break;
            }
            obs.onProgress("import " + QDir(refDirs[int(i)]).dirName().toStdString(), i, n);
            const Outcome o = importOne(refDirs[int(i)], outDir);
            summary->messages << o.message;
            if (o.ok) {
                summary->runFiles << o.runFile;
            } else {
                ++summary->failed;
            }
            obs.onProgress("import", i + 1, n);
        }
        result.done = std::int64_t(summary->runFiles.size());
        return result;
    };
}

}  // namespace lengen::ui
