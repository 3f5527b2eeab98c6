// What the Runs list's menu asks of the window (issue 72): one queued job per selected run,
// named after the run, on the controller every view follows.

#include <QDir>
#include <QFileInfo>
#include <QStatusBar>

#include "analysis_jobs.h"
#include "main_window.h"

namespace lengen::studio {

void MainWindow::evaluateRuns(const QStringList& runFiles)
{
    for (const auto& run : runFiles)
        m_controller.enqueue(ui::JobKind::Evaluation,
                             tr("evaluate %1").arg(QFileInfo(run).dir().dirName()),
                             evalJob(run, engine::EvalOptions{}, m_switches), ui::runSubject(run));
    statusBar()->showMessage(
        tr("%n evaluation(s) queued: the Jobs panel shows them", nullptr, int(runFiles.size())));
}

void MainWindow::probeRuns(const QStringList& runFiles)
{
    for (const auto& run : runFiles)
        m_controller.enqueue(ui::JobKind::Probe, tr("probe %1").arg(QFileInfo(run).dir().dirName()),
                             probeJob(run, engine::ProbeOptions::all(), m_switches),
                             ui::runSubject(run));
    statusBar()->showMessage(
        tr("%n probe run(s) queued: the Jobs panel shows them", nullptr, int(runFiles.size())));
}

}  // namespace lengen::studio
