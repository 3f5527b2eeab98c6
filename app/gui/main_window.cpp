#include "main_window.h"

#include <algorithm>
#include <memory>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QLayout>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>

#include "analysis_jobs.h"
#include "analysis_progress.h"
#include "ask.h"
#include "attention_view.h"
#include "compare_view.h"
#include "export_dialog.h"
#include "figure_view.h"
#include "hparams_view.h"
#include "jobs_panel.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep_run.h"
#include "run_browser.h"
#include "run_table_model.h"
#include "saved_views_controller.h"
#include "setup_panel.h"
#include "status_fit.h"
#include "sweeps_view.h"
#include "training_view.h"

namespace lengen::studio {

namespace {

constexpr int kPageMinimumHeight = 160;  ///< px: the header and first controls of any tab

bool isEvalFigure(const figures::FigureInfo& f)
{
    return f.kind == figures::FigureKind::Evaluation;
}

bool isProbeFigure(const figures::FigureInfo& f) { return f.kind == figures::FigureKind::Probe; }

}  // namespace

MainWindow::MainWindow(const StudioOptions& options, QWidget* parent)
    : QMainWindow(parent), m_switches(options.switches)
{
    setWindowTitle(tr("LenGen Studio"));
    setAcceptDrops(true);
    buildViews(options.configRoot);
    buildDocks();
    buildActions();
    wireViews();
    buildMenus();
    wireController();
    restoreSettings();
    applyStartOptions(options);
    fitStatusMessages(*statusBar());
    statusBar()->showMessage(tr("Ready"));
}

// The window's helpers by role, each a child that says what happened through its signals.
void MainWindow::buildActions()
{
    const auto say = [this](const QString& message) { statusBar()->showMessage(message); };
    const auto problem = [this](const QString& title, const QString& message) {
        showProblem(title, message);
    };
    m_interventions = new InterventionActions(this, m_controller, m_run, m_switches);
    connect(m_interventions, &InterventionActions::statusMessage, this, say);
    connect(m_interventions, &InterventionActions::problem, this, problem);
    m_runJobs = new RunJobActions(this, m_controller, m_run, m_switches);
    connect(m_runJobs, &RunJobActions::statusMessage, this, say);
    m_importOffer =
        new ReferenceImportOffer(this, m_controller, [this] { return m_setup->outputFolder(); });
    connect(m_importOffer, &ReferenceImportOffer::statusMessage, this, say);
    connect(m_importOffer, &ReferenceImportOffer::problem, this, &MainWindow::showProblem);
    connect(m_importOffer, &ReferenceImportOffer::folderToList, m_browser,
            &ui::RunBrowser::addFolder);
    connect(m_importOffer, &ReferenceImportOffer::runToSelect, m_browser,
            &ui::RunBrowser::selectRun);
    m_savedViews = new SavedViewsController(this, m_browser, m_compare, m_hparams);
    connect(m_savedViews, &SavedViewsController::statusMessage, this,
            [this](const QString& message, int ms) { statusBar()->showMessage(message, ms); });
    connect(m_savedViews, &SavedViewsController::problem, this, problem);
}

// The tabs, one view each, in the order a session goes: set up, train, look, compare, sweep.
void MainWindow::buildViews(const QString& configRoot)
{
    m_setup = new ui::SetupPanel(configRoot);
    m_training = new ui::TrainingView(m_controller);
    m_eval = new ui::FigureView(isEvalFigure, tr("No evaluation stored for this run.\n"
                                                 "Analysis ▸ Evaluate computes the error per "
                                                 "position against the baselines."));
    m_probes =
        new ui::FigureView(isProbeFigure, tr("No probes stored for this run.\n"
                                             "Analysis ▸ Probe runs the attention, "
                                             "duplicated-example and serial-position tests."));
    m_eval->setComputeAction(tr("Evaluate this run"),
                             tr("Error per position at the training length and 8× beyond, against "
                                "the baselines (runs in the background; Analysis ▸ Evaluate)"));
    m_probes->setComputeAction(tr("Probe this run"),
                               tr("Attention, duplicated-example and serial-position probes (runs "
                                  "in the background; Analysis ▸ Probe)"));
    connect(
        m_eval->addRunButton(tr("With interventions…"),
                             tr("Evaluate under training-free length extensions (PI, YaRN, Λ-mask, "
                                "windows, truncation, …), each overlaid on the untouched model")),
        &QPushButton::clicked, this, [this] { m_interventions->evaluateWithInterventions(); });
    m_attention = new ui::AttentionView;
    m_compare = new ui::CompareView;
    m_tabs = new QTabWidget;
    m_tabs->addTab(m_setup, tr("Set up"));
    m_tabs->addTab(m_training, tr("Train"));
    m_tabs->addTab(m_eval, tr("Evaluation"));
    m_tabs->addTab(m_probes, tr("Probes"));
    m_tabs->addTab(m_attention, tr("Attention"));
    m_tabs->addTab(m_compare, tr("Compare"));
    m_hparams = new ui::HParamsView;
    m_tabs->addTab(m_hparams, tr("Hyperparameters"));
    m_sweeps = new ui::SweepsView;
    m_sweeps->setController(&m_controller);  // sweeps are created, run and submitted as jobs
    m_sweeps->setCellExecutable(m_switches.cellExecutable);
    m_tabs->addTab(m_sweeps, tr("Sweeps"));
    // A page's own minimum does not bound the Runs dock: dragged up, the dock takes the room
    // and the page's bottom goes under it, the user's choice (the Xvfb pass, N8: the Train
    // tab's 394 px let the dock grow by 48 px). At the default dock height every page has its
    // room (tst_layout).
    for (int i = 0; i < m_tabs->count(); ++i)
        m_tabs->widget(i)->setMinimumHeight(kPageMinimumHeight);
    setCentralWidget(m_tabs);
}

// The Runs list and the Jobs panel, tabbed at the bottom.
void MainWindow::buildDocks()
{
    m_browser = new ui::RunBrowser;
    auto* dock = new QDockWidget(tr("Runs"), this);
    dock->setObjectName(QStringLiteral("runs"));
    dock->setWidget(m_browser);
    addDockWidget(Qt::BottomDockWidgetArea, dock);
    // Every job of the studio, beside the runs (issue 39): the one place that acts on any job.
    m_jobs = new ui::JobsPanel(m_controller);
    auto* jobsDock = new QDockWidget(tr("Jobs"), this);
    jobsDock->setObjectName(QStringLiteral("jobs"));
    jobsDock->setWidget(m_jobs);
    addDockWidget(Qt::BottomDockWidgetArea, jobsDock);
    tabifyDockWidget(dock, jobsDock);
    dock->raise();
    connect(m_jobs, &ui::JobsPanel::openRunRequested, this, &MainWindow::openRun);
    connect(m_jobs, &ui::JobsPanel::statusMessage, this,
            [this](const QString& m) { statusBar()->showMessage(m, 8000); });
    // Other processes' jobs under the folders the studio follows: the Runs list's and the sweep
    // the Sweeps tab shows (issue 53).
    // Another process's training is named as the studio names its own: task · encoding.
    m_jobs->setRunNamer([this](const QString& runFile) {
        const auto* model = m_browser->model();
        const int row = model->rowOfPath(runFile);
        return row < 0 || model->row(row).task.isEmpty()
                   ? QString()
                   : QStringLiteral("%1 · %2").arg(model->row(row).task, model->row(row).pe);
    });
    m_jobs->setFoldersSource([this] {
        QStringList folders = m_browser->folders();
        if (!m_sweeps->sweep().isEmpty())
            folders << m_sweeps->sweep();
        return folders;
    });
}

// What each view asks of the window: sweeps, training, evaluations, the one open run.
void MainWindow::wireViews()
{
    // New sweep starts from the Set up draft as the tab shows it, Steps included (issue 80 §1).
    m_sweeps->setBaseConfig([this] { return m_setup->sweepBase(); });
    // Set up's "Sweep position encodings…" is the Sweeps tab's New sweep, on this config.
    connect(m_setup, &ui::SetupPanel::sweepRequested, this, [this] {
        m_tabs->setCurrentWidget(m_sweeps);
        m_sweeps->newSweep();
    });
    connect(m_sweeps, &ui::SweepsView::openRunRequested, this, [this](const QString& run) {
        if (openRun(run))
            m_tabs->setCurrentWidget(m_eval);
    });
    connect(m_sweeps, &ui::SweepsView::compareRequested, this, &MainWindow::compareRuns);
    // One palette (issue 70, defect 17): whatever Compare drew, the swatches and the overlay
    // show each run in the colour Compare shows it in.
    connect(m_compare, &ui::CompareView::statusMessage, this,
            [this](const QString& m) { statusBar()->showMessage(m, 8000); });
    connect(m_compare, &ui::CompareView::colorsChanged, this, [this] {
        m_browser->model()->colorsChanged();
        m_training->refreshColors();
    });
    m_sweeps->setRunsFolders([this] { return m_browser->folders(); });
    connect(m_sweeps, &ui::SweepsView::runsFolderWanted, m_browser, &ui::RunBrowser::addFolder);
    for (auto* w :
         std::initializer_list<QObject*>{m_setup, m_eval, m_probes, m_attention, m_sweeps})
        connect(w, SIGNAL(statusMessage(QString)), statusBar(), SLOT(showMessage(QString)));
    connect(m_setup, &ui::SetupPanel::trainRequested, this, &MainWindow::train);
    connect(m_eval, &ui::FigureView::computeRequested, m_runJobs, &RunJobActions::evaluateOpenRun);
    connect(m_probes, &ui::FigureView::computeRequested, m_runJobs, &RunJobActions::probeOpenRun);
    connect(m_training, &ui::TrainingView::resumeRequested, this, &MainWindow::resumeRun);
    connect(m_training, &ui::TrainingView::openRunRequested, this, &MainWindow::openRun);
    // The Hyperparameters tab draws the Runs list's runs; its brushes select them there.
    m_hparams->followRuns(*m_browser->model(), m_browser->shownRuns());
    connect(m_hparams, &ui::HParamsView::selectRequested, m_browser, &ui::RunBrowser::selectRuns);
    connect(m_hparams, &ui::HParamsView::compareRequested, this, &MainWindow::compareRuns);
    connect(m_hparams, &ui::HParamsView::statusMessage, statusBar(),
            [this](const QString& m) { statusBar()->showMessage(m, 8000); });
    // Only what the comparison lacks, not every method of the task.
    connect(m_compare, &ui::CompareView::evaluateRequested, m_runJobs, &RunJobActions::evaluate);
    // The one open run: every view follows it; the window only names it in the title.
    m_training->followOpenRun(m_run);
    m_eval->followOpenRun(m_run);
    m_probes->followOpenRun(m_run);
    m_attention->followOpenRun(m_run);
    connect(&m_run, &ui::OpenRunModel::changed, this, [this](const QString& run) {
        setWindowTitle(run.isEmpty() ? tr("LenGen Studio") : tr("LenGen Studio — %1").arg(run));
        if (!run.isEmpty())
            m_browser->selectRun(run);
        // The Train tab draws the open run in its colour: its swatch comes or goes, and the
        // Task column fits it (the Xvfb pass: "linea…ssion" beside the swatch). Queued, after
        // the views drew it.
        QTimer::singleShot(0, m_browser, [this] { m_browser->model()->colorsChanged(); });
    });
    connect(&m_run, &ui::OpenRunModel::openFailed, this, &MainWindow::openFailed);
    // The open run follows its file: deleted, archived or moved, it closes and says so.
    connect(m_browser, &ui::RunBrowser::runsMoved, &m_run, &ui::OpenRunModel::movedAway);
    connect(&m_run, &ui::OpenRunModel::gone, this, [this](const QString& run) {
        statusBar()->showMessage(
            tr("The open run %1 is no longer there (deleted, archived or moved): closed. The "
               "Runs list's Undo puts back what the studio moved")
                .arg(QFileInfo(run).dir().dirName()),
            20000);
    });
    wireRunsList();
}

// What the Runs list and its run menu ask of the window: the analysis jobs go to RunJobActions,
// Python runs found to the import offer; the menu names this studio's own jobs as such (issue
// 80 §1, defect 6).
void MainWindow::wireRunsList()
{
    connect(m_browser, &ui::RunBrowser::openRequested, this, &MainWindow::openRun);
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
    connect(m_browser, &ui::RunBrowser::evaluateRequested, m_runJobs,
            [this](const QStringList& runs) { m_runJobs->evaluate(runs); });
    connect(m_browser, &ui::RunBrowser::probeRequested, m_runJobs, &RunJobActions::probe);
    connect(m_browser, &ui::RunBrowser::exportFiguresRequested, m_runJobs,
            &RunJobActions::exportFigures);
    connect(m_browser, &ui::RunBrowser::overlayRequested, this, &MainWindow::overlayTraining);
    connect(m_browser, &ui::RunBrowser::referenceRunsFound, m_importOffer,
            &ReferenceImportOffer::offer);
    connect(m_browser, &ui::RunBrowser::folderHoldsNoRuns, this, [this](const QString& folder) {
        showProblem(tr("No runs"), tr("%1 holds no runs (no run.h5 in it or below it). It is "
                                      "watched: runs written there later are listed.")
                                       .arg(folder));
    });
}

// The command line's asks (--preset, --open, --sweep, --train, …), once the window is built.
void MainWindow::applyStartOptions(const StudioOptions& options)
{
    m_setup->setOutputFolder(options.runsFolder);
    ui::setExportFallbackFolder(options.runsFolder);  // exports start there, then where they went
    if (options.steps > 0)
        m_setup->setSteps(options.steps);
    QStringList folders = m_browser->folders();
    if (!folders.contains(options.runsFolder))
        folders.prepend(options.runsFolder);
    m_browser->setFolders(folders);
    if (!options.preset.isEmpty())
        m_setup->loadFile(options.preset);
    if (!options.compare.isEmpty())
        compareRuns(options.compare);
    if (!options.sweep.isEmpty()) {
        m_sweeps->setSweep(options.sweep);
        m_tabs->setCurrentWidget(m_sweeps);  // --sweep DIR: the sweep is what was asked for
    }
    if (!options.openRun.isEmpty()) {
        // A run, or a folder: a models/ tree of the Python code offers its import, which asks,
        // so it waits until the window is up.
        const QString path = options.openRun;
        if (QFileInfo(path).isDir() && !QFileInfo::exists(path + "/run.h5"))
            QTimer::singleShot(0, this, [this, path] { openPath(path); });
        else
            QTimer::singleShot(0, this, [this, path] { openRun(path); });  // a refusal is shown
    }
    if (options.train)
        QTimer::singleShot(0, this, [this] {
            if (auto r = m_setup->request())
                train(*r);
        });
}

MainWindow::~MainWindow() = default;

void MainWindow::wireController()
{
    auto status = [this](const QString& s) { statusBar()->showMessage(s); };
    statusBar()->addPermanentWidget(new ui::AnalysisProgressArea(m_controller));
    auto label = [](const ui::JobInfo& j) { return QString::fromStdString(j.label); };
    connect(&m_controller, &ui::RunController::runStarted, this,
            [=](const ui::JobInfo& j, const engine::RunStarted& info) {
                status(tr("%1 running…").arg(label(j)));
                m_browser->follow();  // the new run is listed at once, not after Refresh
                // Training a run opens it: every tab, the title and Analysis act on it from now on.
                if (j.kind == ui::JobKind::Training && !info.runFile.empty())
                    m_run.open(QString::fromStdString(info.runFile));
            });
    connect(&m_controller, &ui::RunController::warning, this,
            [=](const ui::JobInfo&, const QString& w) { status(w); });
    // One status everywhere: a training the studio paused reads "paused" in the Runs list too.
    connect(&m_controller, &ui::RunController::jobChanged, this, [this](const ui::JobInfo& j) {
        const QString subject = QString::fromStdString(j.subject);
        if (j.kind != ui::JobKind::Training || !subject.endsWith(QLatin1String(".h5")))
            return;
        const bool shown = j.state == ui::JobState::Paused || j.state == ui::JobState::Stopping;
        m_browser->model()->setJobState(subject, shown ? ui::jobStateText(j.state) : QString());
    });
    connect(&m_controller, &ui::RunController::runFinished, this, [=](const ui::JobInfo& j) {
        m_browser->follow();  // only what changed: a job ended
        const QString run = QString::fromStdString(j.subject);
        if (j.kind == ui::JobKind::Training) {
            m_run.notifyUpdated(run, ui::OpenRunModel::Part::Log);  // its final status and log
            status(tr("%1 finished").arg(label(j)));
            return;
        }
        const auto compared = m_compare->runs();
        if (std::any_of(compared.begin(), compared.end(), [&](const QString& r) {
                try {
                    return QFileInfo(QString::fromStdString(
                               engine::locateRunFile(r.toStdString()))) == QFileInfo(run);
                } catch (const std::exception&) {
                    return false;  // gone since: nothing to refresh
                }
            }))
            m_compare->followFiles();  // its curve joins now, the zoom and hidden curves kept
        m_run.notifyUpdated(run, ui::OpenRunModel::Part::Analysis);  // what the analysis added
        status(
            tr("%1: %2").arg(label(j), QString::fromStdString(j.message)));  // in its kind's units
    });
    connect(&m_controller, &ui::RunController::runCancelled, this, [=](const ui::JobInfo& j) {
        const bool training = j.kind == ui::JobKind::Training;
        status(training
                   ? tr("%1 stopped; Resume training on the Train tab continues it").arg(label(j))
                   : tr("%1 stopped; what it computed is stored").arg(label(j)));
        m_browser->follow();  // only what changed: a job ended
        m_run.notifyUpdated(QString::fromStdString(j.subject),
                            training ? ui::OpenRunModel::Part::Log
                                     : ui::OpenRunModel::Part::Analysis);
    });
    connect(&m_controller, &ui::RunController::runFailed, this,
            [=](const ui::JobInfo& j, const ui::RunError& e) {
                m_browser->follow();  // only what changed: a job ended
                showProblem(tr("%1 failed").arg(label(j)), e.message, e.detail);
            });
}

void MainWindow::train(const ui::TrainRequest& request)
{
    for (size_t i = 0; i < request.runs.size(); ++i) {
        const QString label = request.runs.size() > 1 ? QStringLiteral("%1 [max_length %2]")
                                                            .arg(request.label)
                                                            .arg(request.runs[i].model.maxLength)
                                                      : request.label;
        m_controller.enqueue(label, trainJob(request.runs[i], request.options, m_switches),
                             ui::newRunSubject(label));
    }
    m_tabs->setCurrentWidget(m_training);
}

void MainWindow::compareRuns(const QStringList& runFiles)
{
    m_compare->setRuns(runFiles);  // its colorsChanged repaints the swatches and the overlay
    m_tabs->setCurrentWidget(m_compare);
}

void MainWindow::overlayTraining(const QStringList& runFiles)
{
    const QStringList failed = m_training->setOverlays(runFiles);
    m_browser->model()->colorsChanged();
    m_tabs->setCurrentWidget(m_training);
    if (!failed.isEmpty())
        showProblem(
            tr("Overlay training curves"),
            tr("%n run(s) could not be read and are not drawn:", nullptr, int(failed.size())) +
                "\n\n" + failed.join("\n"));
    else
        statusBar()->showMessage(runFiles.isEmpty()
                                     ? tr("Select runs in the Runs list first")
                                     : tr("%n run(s) overlaid on the loss plot", nullptr,
                                          int(m_training->overlays().size())),
                                 8000);  // timed: it stayed after the overlay was cleared
}

bool MainWindow::openRun(const QString& runFile)
{
    if (!m_run.open(runFile).isEmpty())
        return false;  // refused: openFailed said why
    statusBar()->showMessage(tr("Opened %1").arg(m_run.runFile()));
    return true;
}

void MainWindow::openFailed(const QString& path, const QString& message)
{
    showProblem(tr("Cannot open the run"),
                tr("%1\n\nThe open run is unchanged.").arg(message.isEmpty() ? path : message));
}

void MainWindow::showProblem(const QString& title, const QString& message, const QString& detail)
{
    // Timed: the box holds the problem; the bar must not keep it through later actions (issue
    // 80, defect 4: a failed resume's error stayed through restore, copy and export).
    statusBar()->showMessage(
        title + QStringLiteral(": ") + message.section(QLatin1Char('\n'), 0, 0), 15000);
    auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("problem"));
    if (!detail.isEmpty())
        box->setDetailedText(detail);
    box->open();
}

void MainWindow::resumeRun(const QString& runFile)
{
    if (runFile.isEmpty())
        return;
    const QString label = tr("resume %1").arg(QFileInfo(runFile).dir().dirName());
    m_controller.enqueue(label, resumeJob(runFile, m_switches), ui::runSubject(runFile));
    m_tabs->setCurrentWidget(m_training);
}

void MainWindow::openPath(const QString& path)
{
    const QFileInfo info(path);
    // A dropped state.pt or config.yaml of the Python code stands for its run folder.
    if (info.isFile() && (info.fileName() == "state.pt" || info.fileName() == "config.yaml") &&
        !QFileInfo::exists(info.dir().filePath("run.h5"))) {
        m_browser->addFolder(info.absolutePath());
        return;
    }
    if (QFileInfo(path).isDir() && !QFileInfo::exists(path + "/run.h5"))
        m_browser->addFolder(path);  // says so when it holds no runs
    else
        openRun(path);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    for (const auto& url : event->mimeData()->urls())
        if (url.isLocalFile())
            openPath(url.toLocalFile());
}

QSize fitWindowToScreen(QSize wanted, QSize available)
{
    const QSize frame(16, 48);  // borders and a title bar, outside the window's own size
    return wanted.boundedTo((available - frame).expandedTo(QSize(640, 400)));
}

void MainWindow::restoreSettings()
{
    QSettings s;
    // Size and position as the user left them; the default size only on a first start (a
    // resize after this, in main(), used to undo the restored size).
    if (!restoreGeometry(s.value("window/geometry").toByteArray()))
        resize(1280, 860);
    // A first start on a small screen, or a size left on a larger one: within this screen.
    if (const auto* screen = this->screen())
        if (const auto fitted = fitWindowToScreen(size(), screen->availableGeometry().size());
            fitted != size())
            resize(fitted);
    if (!restoreState(
            s.value("window/state").toByteArray()))  // first start: the views get the room
        if (auto* dock = findChild<QDockWidget*>(QStringLiteral("runs")))
            resizeDocks({dock}, {280}, Qt::Vertical);  // 220 px showed 2-4 rows at 1280 x 800
    m_browser->setFolders(s.value("runs/folders").toStringList());
    if (const int n = s.value("jobs/concurrent").toInt(); n > 0)
        m_controller.setMaxConcurrent(n);
    // Every named splitter of every panel keeps the sizes the user gave it.
    for (auto* split : findChildren<QSplitter*>())
        if (!split->objectName().isEmpty())
            split->restoreState(s.value("splitters/" + split->objectName()).toByteArray());
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    const auto jobs = m_controller.jobs();
    const int running = int(
        std::count_if(jobs.begin(), jobs.end(), [](const ui::JobInfo& j) { return j.active(); }));
    if (running > 0 &&
        // modal: destructive (running jobs are stopped); closeEvent answers before it returns
        QMessageBox::question(this, tr("Quit"),
                              tr("%n job(s) still running (the Jobs panel lists them). Stop "
                                 "them (a training writes its checkpoint) and quit?",
                                 nullptr, running)) != QMessageBox::Yes) {
        event->ignore();
        return;
    }
    QSettings s;
    s.setValue("window/geometry", saveGeometry());
    s.setValue("window/state", saveState());
    s.setValue("runs/folders", m_browser->folders());
    for (auto* split : findChildren<QSplitter*>())
        if (!split->objectName().isEmpty())
            s.setValue("splitters/" + split->objectName(), split->saveState());
    event->accept();
}

}  // namespace lengen::studio
