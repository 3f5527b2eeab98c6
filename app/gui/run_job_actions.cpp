// Evaluate, probe and export the figures of runs (run_job_actions.h).

#include "run_job_actions.h"

#include <QDir>
#include <QFileInfo>

#include "analysis_jobs.h"
#include "ask.h"
#include "export_dialog.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/sweep_run.h"
#include "open_run_model.h"
#include "run_controller.h"

namespace lengen::studio {

RunJobActions::RunJobActions(QWidget* window, ui::RunController& controller,
                             const ui::OpenRunModel& openRun, engine::SessionSwitches switches)
    : QObject(window), m_window(window), m_controller(controller), m_run(openRun),
      m_switches(std::move(switches))
{}

void RunJobActions::evaluate(const QStringList& runFiles, const QString& method)
{
    engine::EvalOptions options;
    if (!method.isEmpty())
        options.methods = {method.toStdString()};
    for (const auto& run : runFiles) {
        const QString name = QFileInfo(run).dir().dirName();
        m_controller.enqueue(ui::JobKind::Evaluation,
                             method.isEmpty() ? tr("evaluate %1").arg(name)
                                              : tr("evaluate %1 (%2)").arg(name, method),
                             evalJob(run, options, m_switches), ui::runSubject(run));
    }
    if (!method.isEmpty())
        Q_EMIT statusMessage(
            tr("%n evaluation(s) of %1 queued", nullptr, int(runFiles.size())).arg(method));
    else
        Q_EMIT statusMessage(
            runFiles.size() == 1
                ? tr("1 evaluation queued: the Jobs panel shows it")
                : tr("%1 evaluations queued: the Jobs panel shows them").arg(runFiles.size()));
}

void RunJobActions::probe(const QStringList& runFiles)
{
    for (const auto& run : runFiles)
        m_controller.enqueue(ui::JobKind::Probe, tr("probe %1").arg(QFileInfo(run).dir().dirName()),
                             probeJob(run, engine::ProbeOptions::all(), m_switches),
                             ui::runSubject(run));
    Q_EMIT statusMessage(
        runFiles.size() == 1
            ? tr("1 probe run queued: the Jobs panel shows it")
            : tr("%1 probe runs queued: the Jobs panel shows them").arg(runFiles.size()));
}

void RunJobActions::exportFigures(const QStringList& runFiles)
{
    if (runFiles.isEmpty())
        return;
    // A folder that exists (issue 80, defect 7: "figures" inside the run's folder was offered,
    // which did not exist, so Choose was greyed out): where the last export went, else the
    // runs folder. The folder chosen is remembered for the next export.
    ui::ask::folder(
        m_window, tr("Export the figures of %n run(s) into", nullptr, int(runFiles.size())),
        ui::exportFolder(), [this, runFiles](const QString& dir) {
            ui::rememberExportFolder(dir);
            ui::ask::integer(m_window, tr("PNG resolution"),
                             tr("Every figure is written as PNG, SVG, PDF and "
                                "CSV.\nPNG resolution, dots per inch:"),
                             150, 30, 1200, 10,
                             [this, runFiles, dir](int dpi) { exportInto(runFiles, dir, dpi); });
        });
}

// A job like an evaluation per run: `lengen export --all` in a child process of the worker,
// its progress in the Jobs panel, Stop ends it; the window never waits for it.
void RunJobActions::exportInto(const QStringList& runFiles, const QString& dir, int dpi)
{
    const std::string lengen =
        m_switches.cellExecutable.empty() ? engine::lengenExecutable() : m_switches.cellExecutable;
    for (const auto& run : runFiles) {
        const QString into =
            runFiles.size() == 1 ? dir : QDir(dir).filePath(QFileInfo(run).dir().dirName());
        m_controller.enqueue(
            ui::JobKind::Export, tr("export %1").arg(QFileInfo(run).dir().dirName()),
            exportJob(run, into, dpi, QString::fromStdString(lengen)), ui::runSubject(run));
    }
    Q_EMIT statusMessage(tr("Export of every figure queued: its progress is shown here"));
}

QString RunJobActions::openRunOrSay()
{
    const QString run = m_run.runFile();
    if (run.isEmpty())
        Q_EMIT statusMessage(tr("Open a run first (double-click it in the Runs list)"));
    return run;
}

void RunJobActions::evaluateOpenRun()
{
    if (const QString run = openRunOrSay(); !run.isEmpty())
        evaluate({run});
}

void RunJobActions::probeOpenRun()
{
    if (const QString run = openRunOrSay(); !run.isEmpty())
        probe({run});
}

void RunJobActions::exportOpenRun()
{
    if (const QString run = openRunOrSay(); !run.isEmpty())
        exportFigures({run});  // one way to ask: the Runs list's Export figures
}

}  // namespace lengen::studio
