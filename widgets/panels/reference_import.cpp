#include "reference_import.h"

#include <QDir>
#include <QEventLoop>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QProgressDialog>
#include <QtConcurrent/QtConcurrentRun>

#include "lengen/engine/errors.h"
#include "lengen/engine/reference_runs.h"

namespace lengen::ui {

namespace {

// What one import produced; a value, so it crosses from the pool thread to the GUI thread.
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

ReferenceImportSummary importReferenceRuns(QWidget* parent, const QStringList& refDirs,
                                           const QString& outDir)
{
    ReferenceImportSummary summary;
    QProgressDialog progress(QObject::tr("Importing runs of the Python code…"),
                             QObject::tr("Stop"), 0, int(refDirs.size()), parent);
    progress.setWindowTitle(QObject::tr("Import reference runs"));
    progress.setWindowModality(Qt::WindowModal);
    progress.setMinimumDuration(300);
    for (int i = 0; i < refDirs.size(); ++i) {
        if (progress.wasCanceled()) {
            summary.cancelled = true;
            break;
        }
        progress.setLabelText(QObject::tr("Importing %1 (%2 of %3)…")
                                  .arg(QDir(refDirs[i]).dirName()).arg(i + 1).arg(refDirs.size()));
        QFutureWatcher<Outcome> watcher;
        QEventLoop wait;
        QObject::connect(&watcher, &QFutureWatcher<Outcome>::finished, &wait, &QEventLoop::quit);
        watcher.setFuture(QtConcurrent::run(importOne, refDirs[i], outDir));
        if (!watcher.isFinished())
            wait.exec();
        const Outcome o = watcher.result();
        summary.messages << o.message;
        if (o.ok)
            summary.runFiles << o.runFile;
        else
            ++summary.failed;
        progress.setValue(i + 1);
    }
    return summary;
}

}  // namespace lengen::ui
