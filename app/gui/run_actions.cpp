// What the Runs list's menu asks of the window (issue 72): one queued job per selected run,
// named after the run, on the controller every view follows.

#include <QDir>
#include <QFileInfo>
#include <QStatusBar>

#include "analysis_jobs.h"
#include "ask.h"
#include "export_dialog.h"
#include "main_window.h"

namespace lengen::studio {

void MainWindow::evaluateRuns(const QStringList& runFiles)
{
    for (const auto& run : runFiles)
        m_controller.enqueue(ui::JobKind::Evaluation,
                             tr("evaluate %1").arg(QFileInfo(run).dir().dirName()),
                             evalJob(run, engine::EvalOptions{}, m_switches), ui::runSubject(run));
    statusBar()->showMessage(
        runFiles.size() == 1
            ? tr("1 evaluation queued: the Jobs panel shows it")
            : tr("%1 evaluations queued: the Jobs panel shows them").arg(runFiles.size()));
}

void MainWindow::probeRuns(const QStringList& runFiles)
{
    for (const auto& run : runFiles)
        m_controller.enqueue(ui::JobKind::Probe, tr("probe %1").arg(QFileInfo(run).dir().dirName()),
                             probeJob(run, engine::ProbeOptions::all(), m_switches),
                             ui::runSubject(run));
    statusBar()->showMessage(
        runFiles.size() == 1
            ? tr("1 probe run queued: the Jobs panel shows it")
            : tr("%1 probe runs queued: the Jobs panel shows them").arg(runFiles.size()));
}

void MainWindow::exportRuns(const QStringList& runFiles)
{
    if (runFiles.isEmpty())
        return;
    // A folder that exists (issue 80, defect 7: "figures" inside the run's folder was offered,
    // which did not exist, so Choose was greyed out): where the last export went, else the
    // runs folder. The folder chosen is remembered for the next export.
    const QString start = ui::exportFolder();
    ui::ask::folder(this, tr("Export the figures of %n run(s) into", nullptr, int(runFiles.size())),
                    start, [this, runFiles](const QString& dir) {
                        ui::rememberExportFolder(dir);
                        ui::ask::integer(
                            this, tr("PNG resolution"),
                            tr("Every figure is written as PNG, SVG, PDF and CSV.\nPNG resolution, "
                               "dots per inch:"),
                            150, 30, 1200, 10, [this, runFiles, dir](int dpi) {
                                for (const auto& run : runFiles)
                                    exportAllFigures(
                                        run,
                                        runFiles.size() == 1
                                            ? dir
                                            : QDir(dir).filePath(QFileInfo(run).dir().dirName()),
                                        dpi);
                            });
                    });
}

}  // namespace lengen::studio
