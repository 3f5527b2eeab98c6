#pragma once
// Analysis ▸ Evaluate with interventions… and Probe attention under an intervention… (a class
// of its own by issue 82 §5): the dialog lists what applies to the open run
// (engine::applicableInterventions on its stored config) and the job goes to the controller
// like any evaluation or probe. It reads the open run and says what happened through its
// signals; MainWindow only builds it and wires its menu entries. GUI thread.

#include <QObject>
#include <QString>
#include <QStringList>

#include "lengen/engine/session.h"

class QWidget;

namespace lengen::ui {
class OpenRunModel;
class RunController;
}  // namespace lengen::ui

namespace lengen::studio {

class InterventionActions final : public QObject {
    Q_OBJECT

public:
    /// `window`: the parent of its dialogs; jobs go to `controller` with `switches`.
    InterventionActions(QWidget* window, ui::RunController& controller,
                        const ui::OpenRunModel& openRun, engine::SessionSwitches switches);

    /// Asks which interventions that apply to the open run to evaluate, then queues the job.
    void evaluateWithInterventions();
    /// Asks which one to probe the attention under, then queues the probe.
    void probeWithIntervention();
    /// The same without the dialog: an evaluation of `methods` with these specs.
    void evaluateOpenRunWith(const QStringList& interventions, const QStringList& methods);
    /// The attention probe of the open run under one intervention.
    void probeOpenRunUnder(const QString& intervention);

Q_SIGNALS:
    void statusMessage(QString message);
    /// A failure that needs reading (the window shows it in a box).
    void problem(QString title, QString message);

private:
    QWidget* m_window;
    ui::RunController& m_controller;
    const ui::OpenRunModel& m_run;
    engine::SessionSwitches m_switches;
};

}  // namespace lengen::studio
