// Analysis ▸ Evaluate with interventions… and Probe attention under an intervention…: the
// dialog lists what applies to the open run (engine::applicableInterventions on its stored
// config) and the job goes to the worker like any evaluation or probe.

#include <QDir>

#include <QFileInfo>
#include <QStatusBar>
#include <algorithm>
#include <functional>

#include "analysis_jobs.h"
#include "intervention_dialog.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/interventions.h"
#include "lengen/engine/run_file.h"
#include "main_window.h"

namespace lengen::studio {

namespace {
// The interventions that apply to a run (its config in `config`), or an empty list with the
// reason in `error`.
QStringList applicableFor(const QString& run, engine::RunConfig& config, QString& error)
{
    QStringList out;
    try {
        const auto info = engine::readRunInfo(engine::locateRunFile(run.toStdString()));
        config = engine::storedRunConfig(info.configYaml, run.toStdString());
        for (const auto& n : engine::applicableInterventions(config))
            out << QString::fromStdString(n);
    } catch (const std::exception& e) {
        error = QString::fromUtf8(e.what());
    }
    return out;
}
// Window-modal with open(), not exec(): jobs and timers run on while it is up, and its answer
// arrives through `accepted` (no nested event loop). It refuses in place what the run refuses.
void openInterventionDialog(QWidget* parent, ui::InterventionDialog::Mode mode, const QString& run,
                            const engine::RunConfig& config, const QStringList& applicable,
                            std::function<void(ui::InterventionDialog*)> accepted)
{
    auto* dialog =
        new ui::InterventionDialog(mode, QFileInfo(run).dir().dirName(), applicable, parent);
    dialog->setObjectName(QStringLiteral("interventionDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setRunConfig(config);
    QObject::connect(dialog, &QDialog::accepted, parent,
                     [dialog, accepted = std::move(accepted)] { accepted(dialog); });
    dialog->open();
}
}  // namespace

void MainWindow::evaluateWithInterventions()
{
    const QString run = m_run.runFile();
    if (run.isEmpty())
        return statusBar()->showMessage(tr("Open a run first (double-click it in the Runs list)"));
    QString error;
    engine::RunConfig config;
    const auto applicable = applicableFor(run, config, error);
    if (applicable.isEmpty())
        return showProblem(tr("Evaluate with interventions"), error);
    openInterventionDialog(this, ui::InterventionDialog::Mode::Evaluate, run, config, applicable,
                           [this, run](ui::InterventionDialog* d) {
                               if (m_run.runFile() == run)  // the run asked for is still open
                                   evaluateOpenRunWith(d->interventions(), d->methods());
                           });
}

void MainWindow::evaluateOpenRunWith(const QStringList& interventions, const QStringList& methods)
{
    const QString run = m_run.runFile();
    if (run.isEmpty() || interventions.isEmpty())
        return;
    engine::EvalOptions o;
    for (const auto& m : methods)
        o.methods.push_back(m.toStdString());
    // The prompts of the run's stored plain evaluation (a sweep may have used fewer than the
    // default): the interventions are compared on those prompts, and nothing plain is redone.
    try {
        engine::pairWithStoredEvaluation(run.toStdString(), o);
    } catch (const std::exception&) {  // a damaged file: the evaluation reports it
    }
    for (const auto& i : interventions)
        o.interventions.push_back(i.toStdString());
    m_controller.enqueue(
        ui::JobKind::Evaluation,
        tr("evaluate %1 with %2").arg(QFileInfo(run).dir().dirName(), interventions.join(", ")),
        evalJob(run, o, m_switches), ui::runSubject(run));
    statusBar()->showMessage(
        tr("Evaluation with interventions queued: its progress is shown here"));
}

void MainWindow::probeWithIntervention()
{
    const QString run = m_run.runFile();
    if (run.isEmpty())
        return statusBar()->showMessage(tr("Open a run first (double-click it in the Runs list)"));
    QString error;
    engine::RunConfig config;
    auto applicable = applicableFor(run, config, error);
    // One map per probe: the table says which run many short prompts, with no single map.
    applicable.removeIf([](const QString& name) {
        const auto* row = engine::findIntervention(name.toStdString());
        return row && row->manyPrompts;
    });
    if (applicable.size() <= 1)
        return showProblem(tr("Probe under an intervention"),
                           error.isEmpty() ? tr("No intervention changes this run's attention.")
                                           : error);
    openInterventionDialog(this, ui::InterventionDialog::Mode::Probe, run, config, applicable,
                           [this, run](ui::InterventionDialog* d) {
                               if (m_run.runFile() == run && !d->interventions().isEmpty())
                                   probeOpenRunUnder(d->interventions().front());
                           });
}

void MainWindow::probeOpenRunUnder(const QString& intervention)
{
    const QString run = m_run.runFile();
    if (run.isEmpty())
        return;
    engine::ProbeOptions o;
    o.attention = true;
    o.intervention = intervention.toStdString();
    m_controller.enqueue(ui::JobKind::Probe,
                         tr("probe %1 under %2").arg(QFileInfo(run).dir().dirName(), intervention),
                         probeJob(run, o, m_switches), ui::runSubject(run));
    statusBar()->showMessage(
        tr("Attention probe under %1 queued; the Attention view shows it beside "
           "the untouched map")
            .arg(intervention));
}

}  // namespace lengen::studio
