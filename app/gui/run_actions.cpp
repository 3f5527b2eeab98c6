// What the Runs list and its menu ask of the window (issue 72): one queued job per selected
// run, named after the run, on the controller every view follows; which runs this studio's
// jobs hold (the menu names them), and what the list tells the status bar.

#include <QDir>
#include <QFileInfo>
#include <QStatusBar>

#include "analysis_jobs.h"
#include "ask.h"
#include "export_dialog.h"
#include "main_window.h"
#include "run_browser.h"
#include "run_controller.h"

namespace lengen::studio {

// What the Runs list and its run menu ask of the window.
void MainWindow::wireRunsList()
{
    connect(m_browser, &ui::RunBrowser::openRequested, this, &MainWindow::openRun);
    // The run menu names this studio's own jobs as such (issue 80 §1, defect 6).
    m_browser->setBusyHere([this](const QString& runFile) -> QString {
        const std::string subject = ui::runSubject(runFile).toStdString();
        for (const auto& j : m_controller.jobs()) {
            if (j.ended() || j.subject != subject)
                continue;
            switch (j.kind) {
            case engine::JobKindId::Training: return tr("training");
            case engine::JobKindId::Evaluation: return tr("evaluating");
            case engine::JobKindId::Probe: return tr("probing");
            case engine::JobKindId::Export: return tr("exporting figures of");
            default: return tr("using");
            }
        }
        return {};
    });
    connect(m_browser, &ui::RunBrowser::statusMessage, this,
            [this](const QString& m) { statusBar()->showMessage(m, 8000); });
    connect(m_browser, &ui::RunBrowser::compareRequested, this, &MainWindow::compareRuns);
    connect(m_browser, &ui::RunBrowser::evaluateRequested, this, &MainWindow::evaluateRuns);
    connect(m_browser, &ui::RunBrowser::probeRequested, this, &MainWindow::probeRuns);
    connect(m_browser, &ui::RunBrowser::exportFiguresRequested, this, &MainWindow::exportRuns);
    connect(m_browser, &ui::RunBrowser::overlayRequested, this, &MainWindow::overlayTraining);
    connect(m_browser, &ui::RunBrowser::referenceRunsFound, this,
            &MainWindow::offerReferenceImport);
    connect(m_browser, &ui::RunBrowser::folderHoldsNoRuns, this, [this](const QString& folder) {
        showProblem(tr("No runs"), tr("%1 holds no runs (no run.h5 in it or below it). It is "
                                      "watched: runs written there later are listed.")
                                       .arg(folder));
    });
}

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
