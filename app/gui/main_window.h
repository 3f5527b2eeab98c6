#pragma once
// The studio's window: arranges the panels and wires them to the run controller. Logic lives
// in the panels and the engine; this class only builds menus, tabs and connections.

#include <QDialog>
#include <QMainWindow>
#include <QPointer>
#include <QTimer>

#include "intervention_actions.h"
#include "open_run_model.h"
#include "reference_import_offer.h"
#include "run_controller.h"
#include "run_job_actions.h"
#include "saved_views_controller.h"

#include "lengen/engine/session.h"

class QMenu;
class QTabWidget;

namespace lengen::ui {
class AttentionView;
class CompareView;
class HParamsView;
class SweepsView;
class JobsPanel;
class FigureView;
class RunBrowser;
class SetupPanel;
class TrainingView;
struct TrainRequest;
}  // namespace lengen::ui

namespace lengen::studio {

struct StudioOptions {
    QString configRoot;  ///< folder with quick/ and tasks/
    QString preset;      ///< config file to load at start
    QString runsFolder = QStringLiteral("runs");
    QString openRun;      ///< run to open at start
    QStringList compare;  ///< runs to overlay in the Compare tab at start
    QString sweep;        ///< sweep folder to show in the Sweeps tab at start
    int steps = 0;        ///< override training.max_steps (0 = as configured)
    bool train = false;   ///< start training the preset at once
    /// Given to every session the studio starts (main() reads the environment into it).
    engine::SessionSwitches switches;
};

/// The window's size within a screen's available geometry (issue 70, defect 16: it opened
/// 1280x860 on a 1280x800 screen, its status bar off-screen): `wanted`, bounded by `available`
/// less the window frame's title bar and borders, which lie outside the size.
QSize fitWindowToScreen(QSize wanted, QSize available);

class MainWindow final : public QMainWindow {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MainWindow)

public:
    explicit MainWindow(const StudioOptions& options, QWidget* parent = nullptr);
    ~MainWindow() override;

    ui::RunController& controller() { return m_controller; }
    QTabWidget* tabs() const { return m_tabs; }
    /// The one open run every tab, the title and the Analysis actions follow.
    ui::OpenRunModel& openRunModel() { return m_run; }
    QString openRunFile() const { return m_run.runFile(); }
    /// Opens a run (folder or run.h5); a damaged or foreign file is refused with a message
    /// and the open run stays. Returns whether it opened.
    bool openRun(const QString& runFile);
    ui::TrainingView* trainingView() const { return m_training; }
    ui::FigureView* evaluationView() const { return m_eval; }
    ui::FigureView* probesView() const { return m_probes; }
    ui::AttentionView* attentionView() const { return m_attention; }
    ui::RunBrowser* runBrowser() const { return m_browser; }
    ui::HParamsView* hparamsView() const { return m_hparams; }
    ui::CompareView* compareView() const { return m_compare; }
    ui::JobsPanel* jobsPanel() const { return m_jobs; }
    void train(const ui::TrainRequest& request);
    /// Evaluate, probe and export the figures of the open run or of the Runs list's selection
    /// (the Analysis menu, the run menu): RunJobActions.
    RunJobActions& runJobActions() { return *m_runJobs; }
    /// Evaluate with interventions… and Probe under an intervention… (docs/interventions.md)
    /// for the open run: InterventionActions.
    InterventionActions& interventionActions() { return *m_interventions; }
    /// Continues a stopped or interrupted run in the worker (the Train tab's Resume).
    void resumeRun(const QString& runFile);
    /// Overlays these runs' evaluation curves in the Compare tab.
    void compareRuns(const QStringList& runFiles);
    void overlayTraining(const QStringList& runFiles);
    /// Saved views (issue 72): the Runs filter and columns, Compare's choices and the
    /// Hyperparameters axes, colour and brushes, under a name (SavedViewsController).
    ui::SavedViewsModel& savedViews() { return m_savedViews->model(); }
    SavedViewsController& savedViewsController() { return *m_savedViews; }

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    // The constructor's steps, in order.
    void buildViews(const QString& configRoot);
    void buildDocks();
    void wireViews();
    void wireRunsList();
    void applyStartOptions(const StudioOptions& options);
    void buildMenus();
    void buildFileMenu();
    void buildRunMenu();
    void buildViewMenu();
    void buildAnalysisMenu();
    void wireController();
    void restoreSettings();
    void openPath(const QString& path);
    /// A failure that needs reading: said in the status bar and in a window-modal box that
    /// does not block the caller (open(), not exec(): callers are often signal handlers).
    void showProblem(const QString& title, const QString& message, const QString& detail = {});
    void openFailed(const QString& path, const QString& message);
    void buildActions();

    engine::SessionSwitches m_switches;  ///< StudioOptions::switches
    ui::RunController m_controller;
    QTabWidget* m_tabs = nullptr;
    ui::SetupPanel* m_setup = nullptr;
    ui::TrainingView* m_training = nullptr;
    ui::RunBrowser* m_browser = nullptr;
    ui::FigureView* m_eval = nullptr;
    ui::FigureView* m_probes = nullptr;
    ui::AttentionView* m_attention = nullptr;
    ui::CompareView* m_compare = nullptr;
    ui::HParamsView* m_hparams = nullptr;
    ui::SweepsView* m_sweeps = nullptr;
    ui::JobsPanel* m_jobs = nullptr;
    ui::OpenRunModel m_run;
    SavedViewsController* m_savedViews = nullptr;    ///< a child: the View menu's saved views
    InterventionActions* m_interventions = nullptr;  ///< a child: the interventions' dialogs
    RunJobActions* m_runJobs = nullptr;              ///< a child: evaluate, probe, export runs
    ReferenceImportOffer* m_importOffer = nullptr;   ///< a child: importing the Python runs
};

}  // namespace lengen::studio
