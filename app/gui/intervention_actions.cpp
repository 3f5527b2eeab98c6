// Analysis ▸ Evaluate with interventions… and Probe attention under an intervention…
// (intervention_actions.h).

#include "intervention_actions.h"

#include <QDir>
#include <QFileInfo>
#include <algorithm>
#include <functional>

#include "analysis_jobs.h"
#include "intervention_dialog.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/interventions.h"
#include "lengen/engine/run_file.h"
#include "open_run_model.h"
#include "run_controller.h"

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

InterventionActions::InterventionActions(QWidget* window, ui::RunController& controller,
                                         const ui::OpenRunModel& openRun,
                                         engine::SessionSwitches switches)
    : QObject(window), m_window(window), m_controller(controller), m_run(openRun),
      m_switches(std::move(switches))
{}

void InterventionActions::evaluateWithInterventions()
{
    const QString run = m_run.runFile();
    if (run.isEmpty())
        return Q_EMIT statusMessage(tr("Open a run first (double-click it in the Runs list)"));
    QString error;
    engine::RunConfig config;
    const auto applicable = applicableFor(run, config, error);
    if (applicable.isEmpty())
        return Q_EMIT problem(tr("Evaluate with interventions"), error);
    openInterventionDialog(m_window, ui::InterventionDialog::Mode::Evaluate, run, config,
                           applicable, [this, run](ui::InterventionDialog* d) {
                               if (m_run.runFile() == run)  // the run asked for is still open
                                   evaluateOpenRunWith(d->interventions(), d->methods());
                           });
}

void InterventionActions::evaluateOpenRunWith(const QStringList& interventions,
                                              const QStringList& methods)
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
    Q_EMIT statusMessage(tr("Evaluation with interventions queued: its progress is shown here"));
}

void InterventionActions::probeWithIntervention()
{
    const QString run = m_run.runFile();
    if (run.isEmpty())
        return Q_EMIT statusMessage(tr("Open a run first (double-click it in the Runs list)"));
    QString error;
    engine::RunConfig config;
    auto applicable = applicableFor(run, config, error);
    // One map per probe: the table says which run many short prompts, with no single map.
    applicable.removeIf([](const QString& name) {
        const auto* row = engine::findIntervention(name.toStdString());
        return row && row->manyPrompts;
    });
    if (applicable.size() <= 1)
        return Q_EMIT problem(tr("Probe under an intervention"),
                              error.isEmpty() ? tr("No intervention changes this run's attention.")
                                              : error);
    openInterventionDialog(m_window, ui::InterventionDialog::Mode::Probe, run, config, applicable,
                           [this, run](ui::InterventionDialog* d) {
                               if (m_run.runFile() == run && !d->interventions().isEmpty())
                                   probeOpenRunUnder(d->interventions().front());
                           });
}

void InterventionActions::probeOpenRunUnder(const QString& intervention)
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
    Q_EMIT statusMessage(tr("Attention probe under %1 queued; the Attention view shows it beside "
                            "the untouched map")
                             .arg(intervention));
}

}  // namespace lengen::studio
