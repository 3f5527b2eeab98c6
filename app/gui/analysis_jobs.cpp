#include "analysis_jobs.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QProcess>

#include "lengen/engine/errors.h"
#include "lengen/engine/trainer.h"

namespace lengen::studio {

ui::JobWorker::Job trainJob(engine::RunConfig config, engine::TrainOptions options,
                            const engine::SessionSwitches& switches)
{
    options.switches = switches;
    return [config = std::move(config), options = std::move(options)](engine::RunControl& control,
                                                                      engine::TrainObserver& obs) {
        return engine::train(config, options, control, obs);
    };
}

ui::JobWorker::Job resumeJob(QString runFile, const engine::SessionSwitches& switches)
{
    engine::TrainOptions options;
    options.switches = switches;
    return [runFile, options = std::move(options)](engine::RunControl& control,
                                                   engine::TrainObserver& obs) {
        return engine::resume(runFile.toStdString(), options, control, obs);
    };
}

// An analysis as a worker job: its result counts what it stored, methods or probes by `kind`.
template <typename Analyse>
ui::JobWorker::AnalysisJob analysisJob(QString runFile, engine::JobKindId kind, Analyse analyse)
{
    return [runFile, kind, analyse](engine::RunControl& control, engine::AnalysisObserver& obs) {
        const auto s = analyse(runFile.toStdString(), control, obs);
        for (const auto& skipped : s.skipped)
            obs.onWarning("skipped: " + skipped);
        engine::JobResult result;
        result.done = std::int64_t(s.computed.size());  // methods or probes: the kind's units
        if (s.computed.empty())                         // said, not "0 methods computed"
            result.said =
                s.skipped.empty()
                    ? "nothing to compute"
                    : "nothing computed: " + std::to_string(s.skipped.size()) + " skipped";
        return result;
    };
}

ui::JobWorker::AnalysisJob evalJob(QString runFile, engine::EvalOptions options,
                                   const engine::SessionSwitches& switches)
{
    options.common.switches = switches;
    return analysisJob(
        runFile, engine::JobKindId::Evaluation,
        [options](const std::string& run, engine::RunControl& c, engine::AnalysisObserver& o) {
            return engine::evaluateRun(run, options, c, o);
        });
}

ui::JobWorker::AnalysisJob probeJob(QString runFile, engine::ProbeOptions options,
                                    const engine::SessionSwitches& switches)
{
    options.common.switches = switches;
    return analysisJob(
        runFile, engine::JobKindId::Probe,
        [options](const std::string& run, engine::RunControl& c, engine::AnalysisObserver& o) {
            return engine::probeRun(run, options, c, o);
        });
}

namespace {

// Files written under `dir` since `start` (a re-export overwrites the same names).
int filesSince(const QString& dir, const QDateTime& start)
{
    int n = 0;
    for (QDirIterator it(dir, QDir::Files, QDirIterator::Subdirectories); it.hasNext();)
        if (QFileInfo(it.next()).lastModified() >= start)
            ++n;
    return n;
}

}  // namespace

ui::JobWorker::AnalysisJob exportJob(QString runFile, QString dir, int dpi, QString lengen)
{
    return [=](engine::RunControl& control, engine::AnalysisObserver& obs) {
        if (lengen.isEmpty())
            throw engine::Error(engine::ErrorKind::Io,
                                "the lengen command line was not found beside the studio");
        // How many files to expect: the figures it lists, four formats each.
        QProcess list;
        list.start(lengen, {"export", runFile, "--list"});
        if (!list.waitForFinished(60000) || list.exitStatus() != QProcess::NormalExit ||
            list.exitCode() != 0) {
            const QString err = QString::fromUtf8(list.readAllStandardError()).trimmed();
            throw engine::Error(
                list.exitCode() == 3 ? engine::ErrorKind::RunFile : engine::ErrorKind::Io,
                (err.isEmpty() ? lengen + ": " + list.errorString() : err).toStdString());
        }
        const int figures = int(
            QString::fromUtf8(list.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts).size());
        const std::int64_t total = std::max(1, 4 * figures);
        const QDateTime start = QDateTime::currentDateTime().addSecs(-1);  // mtime granularity
        obs.onStage(0, 1, "figures into " + dir.toStdString());
        QProcess p;
        p.start(lengen, {"export", runFile, "--all", "--format", "png,svg,pdf,csv", "--dpi",
                         QString::number(dpi), "--out", dir, "--quiet"});
        if (!p.waitForStarted(30000))
            throw engine::Error(engine::ErrorKind::Io, "cannot start " + lengen.toStdString());
        engine::JobResult result;
        while (!p.waitForFinished(250)) {
            if (!control.shouldContinue()) {
                p.kill();  // what it wrote so far stays; nothing else depends on it
                p.waitForFinished(10000);
                result.done = filesSince(dir, start);
                return result;
            }
            obs.onProgress("figures", std::min<std::int64_t>(filesSince(dir, start), total), total);
        }
        if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
            const QString err = QString::fromUtf8(p.readAllStandardError()).trimmed();
            throw engine::Error(
                engine::ErrorKind::Io,
                (err.isEmpty() ? lengen + ": " + p.errorString() : err).toStdString());
        }
        result.done = filesSince(dir, start);
        return result;
    };
}

}  // namespace lengen::studio
