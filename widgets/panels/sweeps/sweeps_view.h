#pragma once
// The Sweeps tab: a sweep folder (docs/sweep-format.md) as a live grid — rows and columns are
// its axes (task × PE), one mark per seed coloured by state with progress — read from the
// files every 2 s, so cells run by `lengen sweep run`, a Slurm array or this view's own
// executor all show. Runs the sweep here (`lengen sweep run` as a child process; Stop sends it
// one SIGTERM, and every cell writes its checkpoint) or submits it to Slurm; aggregates over
// seeds and draws the grid figure (one panel per task, a curve per PE with its band).
// New sweeps come from the Set up tab's config (SweepDialog). GUI thread only.

#include <QElapsedTimer>
#include <QWidget>

#include <functional>
#include <map>
#include <optional>

#include "figure_spec.h"
#include "lengen/engine/config.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_aggregate.h"
#include "lengen/engine/sweep_run.h"
#include "run_controller.h"
#include "setup_model.h"
#include "sweeps_model.h"

class QComboBox;
class QCustomPlot;
class QHBoxLayout;
class QLabel;
class QPushButton;
class QScrollArea;
class QStackedWidget;
class QSpinBox;
class QTableWidget;
class QTimer;

namespace lengen::ui {

class SweepsView final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SweepsView)

public:
    explicit SweepsView(QWidget* parent = nullptr);
    ~SweepsView() override;
    /// Where "New sweep…" takes its base config from: the Set up tab's draft with its Steps
    /// (SetupModel::sweepBase), or why there is none.
    void setBaseConfig(std::function<SweepBase()> provider);
    /// Shows a sweep folder; false + a status message when it is not one.
    bool setSweep(const QString& dir);
    QString sweep() const { return m_model.dir(); }
    /// The Runs list's folders: New sweep proposes a folder under the first, and a sweep
    /// created outside them is asked to be followed (runsFolderWanted).
    void setRunsFolders(std::function<QStringList()> folders)
    {
        m_runsFolders = std::move(folders);
    }
    /// The folder New sweep proposes now (defaultSweepFolder).
    QString proposedFolder() const;
    /// Re-reads every cell's state (what the timer does).
    void refresh();
    /// Aggregates over seeds (engine::aggregateSweep; writes aggregate.h5) and redraws: as a job
    /// of the controller when there is one, else here and now.
    void aggregate();
    QTableWidget* grid() const { return m_grid; }
    /// The tab's state (sweeps_model.h): the sweep, its grid, its cells, the summary.
    const SweepsModel& model() const { return m_model; }
    const std::optional<plots::GridSpec>& figure() const { return m_model.figure(); }
    /// Writes the grid figure (PNG/SVG/PDF/CSV by extension); false + error when none is drawn.
    bool exportTo(const QString& path, int dpi, QString* error = nullptr);
    /// The job controller whose worker creates, runs and submits sweeps (nothing of a sweep
    /// runs on the GUI thread). Without one those buttons only say so.
    void setController(RunController* controller);
    /// The `lengen` its cells and Slurm tasks run ("" = the one of this build; the studio passes
    /// SessionSwitches::cellExecutable, LENGEN_CLI).
    void setCellExecutable(std::string executable) { m_cellExecutable = std::move(executable); }
    /// Whether this view's sweep job (a local run) is the controller's current job.
    bool runningHere() const;
    /// The line under the grid: the cells' states, and what the last Run here did.
    QString summaryText() const;
    /// What the buttons do, for tests and menus: each queues a job on the controller.
    quint64 createSweep(engine::NewSweep request);  ///< the job's id (0: no controller)
    void runHere();
    void stopRun();
    void submitTo(engine::SlurmSweepOptions options);
    /// "New sweep…" (also Set up's "New sweep from this config…"): the base config must be one
    /// run (engine::sweepBaseRun, else a status message), then the dialog opens (open(), no
    /// nested event loop) and an accepted answer becomes createSweep.
    void newSweep();

Q_SIGNALS:
    void statusMessage(QString message);
    void openRunRequested(QString runFile);
    void compareRequested(QStringList runFiles);
    /// A sweep was created in a folder the Runs list does not follow: its runs belong there.
    void runsFolderWanted(QString folder);

private:
    QHBoxLayout* buildBar(QPushButton* open, QPushButton* create);
    void buildBody(QHBoxLayout* bar);
    void wireControls(QPushButton* open, QPushButton* create);
    /// The shown sweep's folder (engine::locateSweep), or nullopt after a status message
    /// `failure` with %1 the reason (moved or deleted since it was opened).
    std::optional<std::string> locateShown(const QString& failure);
    void submit();
    void onRunEnded(const JobInfo& job, const std::string& root);
    std::string shownRoot() const;
    quint64 shownRunJob() const;  ///< the shown sweep's run here (queued or running), 0 none
    void paintGrid();
    void drawFigure();
    void cellActivated(int row, int column);
    void updateResumePlan(const std::string& root, const std::vector<engine::CellStatus>& cells);

    SweepsModel m_model;
    std::function<SweepBase()> m_baseConfig;
    QLabel *m_title, *m_summary;
    std::function<QStringList()> m_runsFolders;
    QTableWidget* m_grid;
    QSpinBox* m_jobs;
    QSpinBox* m_members;  ///< LocalSweepOptions::members
    QPushButton *m_run, *m_stop, *m_submit, *m_aggregateButton, *m_export;
    QComboBox* m_band = nullptr;  ///< the band over seeds the aggregate draws (seed_stats.h)
    engine::AggregateOptions aggregateOptions() const;
    QComboBox* m_method;
    QCustomPlot* m_plot;
    QScrollArea* m_plotScroll;  ///< the figure, scrolling when its panels need the room
    QLabel* m_noFigure;         ///< what brings a figure, while there is none
    QStackedWidget* m_figureStack;
    RunController* m_controller = nullptr;
    // What squeue says of the cells, asked off the GUI thread through the one "latest only"
    // helper (latest_only.h); the answer and the throttle are the model's.
    void askScheduler(const std::string& root);
    LatestOnly<SweepSchedulerView> m_askScheduler{this, [this](SweepSchedulerView v, bool latest) {
                                                      schedulerAnswered(std::move(v), latest);
                                                  }};
    void schedulerAnswered(SweepSchedulerView view, bool latest);
    QElapsedTimer m_clock;  ///< the steady clock the model's throttle reads
    void aggregatePass();
    /// One aggregate job at a time; a request meanwhile runs once it ends.
    Coalesced m_aggregating{[this] { aggregatePass(); }};
    QString queuedBehind() const;  ///< what that run waits for ("" when not queued)
    std::string m_cellExecutable;
    QTimer* m_timer;
};

}  // namespace lengen::ui
