// The studio's menu bar (main_window.h): File, Run (Train, and Pause and Stop of the focus job,
// named in the menu), View and Analysis. The actions call the window's own functions.

#include "main_window.h"
#include "saved_views_controller.h"

#include <algorithm>

#include "ask.h"
#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QScopedValueRollback>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>

#include "analysis_jobs.h"
#include "analysis_progress.h"
#include "attention_view.h"
#include "compare_view.h"
#include "figure_view.h"
#include "jobs_panel.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep_run.h"
#include "reference_import.h"
#include "run_browser.h"
#include "run_table_model.h"
#include "setup_panel.h"
#include "sweeps_view.h"
#include "training_view.h"

namespace lengen::studio {

void MainWindow::buildMenus()
{
    buildFileMenu();
    buildRunMenu();
    buildViewMenu();
    buildAnalysisMenu();
}

void MainWindow::buildFileMenu()
{
    auto* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("Open &run…"), QKeySequence::Open, this, [this] {
        // Under the Runs list's first folder, not the process's current one (issue 70).
        ui::ask::openFile(this, tr("Open a run"), m_browser->folders().value(0),
                          tr("Run files (run.h5)"),
                          [this](const QString& path) { openPath(path); });
    });
    file->addAction(tr("Add runs &folder…"), this, [this] {
        ui::ask::folder(this, tr("Add a runs folder"),
                        QFileInfo(m_browser->folders().value(0)).absolutePath(),
                        [this](const QString& dir) { m_browser->addFolder(dir); });
    });
    file->addAction(tr("Open &config…"), this, [this] {
        ui::ask::openFile(this, tr("Open run config"),
                          m_setup->currentFile().isEmpty()
                              ? QString()
                              : QFileInfo(m_setup->currentFile()).absolutePath(),
                          tr("YAML configs (*.yaml *.yml)"), [this](const QString& path) {
                              if (m_setup->loadFile(path))
                                  m_tabs->setCurrentWidget(m_setup);
                          });
    });
    file->addAction(tr("&Save config as…"), QKeySequence::Save, this,
                    [this] { m_setup->saveAs(); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

// Train, and Pause and Stop of the focus job (named in the menu), the queue and the core limit.
void MainWindow::buildRunMenu()
{
    auto* run = menuBar()->addMenu(tr("&Run"));
    auto* start = run->addAction(tr("&Train"), QKeySequence(Qt::CTRL | Qt::Key_R), this, [this] {
        if (auto r = m_setup->request())
            train(*r);
        else
            m_tabs->setCurrentWidget(m_setup);
    });
    // Pause and Stop act on the focus job (the training, else the oldest running job) and say
    // which; the Jobs panel acts on any job.
    auto* pause =
        run->addAction(tr("&Pause / resume"), QKeySequence(Qt::CTRL | Qt::Key_P), this, [this] {
            m_controller.state() == ui::RunController::State::Paused ? m_controller.resume()
                                                                     : m_controller.pause();
        });
    auto* stop = run->addAction(tr("&Stop"), QKeySequence(Qt::CTRL | Qt::Key_Period), this,
                                [this] { m_controller.stop(); });
    run->addAction(tr("Clear &queue"), &m_controller, &ui::RunController::clearQueue);
    run->addAction(tr("C&oncurrent jobs…"), this, [this] {
        ui::ask::integer(
            this, tr("Concurrent jobs"),
            tr("Cores that CPU-heavy work may use at once: each training, evaluation, probe or "
               "export\n"
               "takes one, each cell of a sweep run here its threads. Jobs on one run always wait\n"
               "for each other; a sweep's own job and imports take none."),
            m_controller.maxConcurrent(), 1, 256, 1, [this](int n) {
                m_controller.setMaxConcurrent(n);
                QSettings().setValue("jobs/concurrent", n);
            });
    });
    connect(&m_controller, &ui::RunController::stateChanged, this,
            [=](ui::RunController::State s, const ui::JobInfo& focus) {
                using S = ui::RunController::State;
                const QString name = QString::fromStdString(focus.label);
                const bool trains = focus.id && engine::jobKindRow(focus.kind).pausable;
                pause->setEnabled(trains && (s == S::Running || s == S::Paused));
                pause->setText(
                    trains ? (s == S::Paused ? tr("&Continue “%1”") : tr("&Pause “%1”")).arg(name)
                           : tr("&Pause / resume"));
                stop->setEnabled(s == S::Running || s == S::Paused);
                stop->setText(focus.id ? tr("&Stop “%1”").arg(name) : tr("&Stop"));
                start->setText(s == S::Idle ? tr("&Train") : tr("&Train (queue)"));
            });
    pause->setEnabled(false);
    stop->setEnabled(false);
}

void MainWindow::buildViewMenu()
{
    // Closed panels come back from here (the Runs list is a dock the user can close).
    auto* viewMenu = menuBar()->addMenu(tr("&View"));
    for (auto* dock : findChildren<QDockWidget*>())
        viewMenu->addAction(dock->toggleViewAction());
    viewMenu->addSeparator();
    viewMenu->addAction(tr("&Compare selected runs"), this,
                        [this] { compareRuns(m_browser->selectedRuns()); });
    viewMenu->addAction(tr("&Overlay selected runs' training curves"), this,
                        [this] { overlayTraining(m_browser->selectedRuns()); });
    viewMenu->addAction(tr("C&lear training overlay"), this,
                        [this] { m_training->setOverlays({}); });
    viewMenu->addSeparator();
    // The Runs filter and columns, Compare's choices and the Hyperparameters axes under a name.
    auto* views = viewMenu->addMenu(tr("Saved &views"));
    views->setObjectName(QStringLiteral("savedViewsMenu"));
    connect(views, &QMenu::aboutToShow, this, [this, views] { m_savedViews->fillMenu(views); });
    m_savedViews->fillMenu(views);
}

void MainWindow::buildAnalysisMenu()
{
    auto* analysis = menuBar()->addMenu(tr("&Analysis"));
    analysis->addAction(tr("&Evaluate open run"), QKeySequence(Qt::CTRL | Qt::Key_E), m_runJobs,
                        &RunJobActions::evaluateOpenRun);
    analysis->addAction(tr("&Probe open run (attention, attacks, serial position)"), m_runJobs,
                        &RunJobActions::probeOpenRun);
    analysis->addAction(tr("Evaluate with &interventions…"),
                        QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E), m_interventions,
                        &InterventionActions::evaluateWithInterventions);
    analysis->addAction(tr("Probe attention under an i&ntervention…"), m_interventions,
                        &InterventionActions::probeWithIntervention);
    analysis->addAction(tr("Export &all figures of the open run…"), m_runJobs,
                        &RunJobActions::exportOpenRun);
    analysis->addAction(tr("E&xport current figure…"),
                        QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S), this, [this] {
                            if (auto* view = qobject_cast<ui::FigureView*>(m_tabs->currentWidget()))
                                view->exportWithDialog();
                            else
                                statusBar()->showMessage(tr(
                                    "Switch to the Evaluation or Probes tab to export a figure"));
                        });
}

}  // namespace lengen::studio
