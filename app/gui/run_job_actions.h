#pragma once
// The analysis jobs a user asks of runs (issue 82 §5, a class of its own): evaluate, probe and
// export every figure, of the open run (the Analysis menu) or of the Runs list's selection (its
// run menu). Each is one queued job per run, named after the run, on the controller every view
// follows; what was queued is said through statusMessage. MainWindow builds it and wires the
// menus and the list to it. GUI thread.

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

class RunJobActions final : public QObject {
    Q_OBJECT

public:
    /// `window`: the parent of its dialogs; jobs go to `controller` with `switches`.
    RunJobActions(QWidget* window, ui::RunController& controller, const ui::OpenRunModel& openRun,
                  engine::SessionSwitches switches);

    /// One evaluation per run, stored results or not: of every method of the run's task, or
    /// only `method` (what a comparison lacks).
    void evaluate(const QStringList& runFiles, const QString& method = QString());
    /// One probe run (every probe) per run.
    void probe(const QStringList& runFiles);
    /// Asks for a folder and a resolution, then queues `lengen export --all` per run: into the
    /// folder for one run, into <folder>/<run folder's name>/ for several.
    void exportFigures(const QStringList& runFiles);
    /// The same for the open run; without one, says so.
    void evaluateOpenRun();
    void probeOpenRun();
    void exportOpenRun();

Q_SIGNALS:
    void statusMessage(QString message);

private:
    QString openRunOrSay();
    void exportInto(const QStringList& runFiles, const QString& dir, int dpi);

    QWidget* m_window;
    ui::RunController& m_controller;
    const ui::OpenRunModel& m_run;
    engine::SessionSwitches m_switches;
};

}  // namespace lengen::studio
