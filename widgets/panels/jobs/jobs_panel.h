#pragma once
// The Jobs panel: every job of the studio (RunController::jobs) and the jobs other processes
// run under the studio's folders (engine::findJobs every 2 s, off the GUI thread: a terminal's
// `lengen train`, evaluations, a sweep's cells, Slurm tasks, marked with their holder), one row
// each — what it is, its state, progress, elapsed time and ETA, and what it works on. What the
// rows say, their order (running and waiting first), the cores line and the actions' rules are
// the JobsModel's (jobs_model.h); this view paints it and forwards clicks. Pause, Continue,
// Stop, Cancel and Open run act on the selected job, whose name the panel shows beside them
// (qBittorrent's transfer list is the model): Stop on another process's training is `lengen
// stop`'s request, Cancel on a sweep cell `lengen sweep cancel`'s. Rows are rebuilt at most 4
// times a second however often jobs report. GUI thread only.

#include <QWidget>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "jobs_model.h"
#include "lengen/engine/jobs.h"

class QLabel;
class QPushButton;
class QTimer;
class QTreeWidget;

namespace lengen::ui {

class RunController;
template <typename T>
class LatestOnly;

class JobsPanel final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(JobsPanel)

public:
    explicit JobsPanel(RunController& controller, QWidget* parent = nullptr);
    ~JobsPanel() override;
    /// The state the panel paints (jobs_model.h): rows, cores, selection, actions.
    const JobsModel& model() const { return m_model; }
    /// The cores line: in use of the limit, and how many jobs wait for one (tests).
    QString coresText() const;
    /// The rows as shown: "label | state | progress | elapsed" per job (tests).
    QStringList rowTexts() const;
    /// Selects the row of job `id` (tests, and the studio after it queues a job).
    void select(quint64 id);
    quint64 selectedJob() const { return m_model.selectedJob(); }
    using Action = JobsModel::Action;
    bool actionEnabled(Action a) const;
    /// What the action does to the selected job, or why it cannot (its button's tooltip).
    QString actionTip(Action a) const;
    void trigger(Action a);

    /// Where to look for other processes' jobs (the Runs list's folders, the sweep shown); the
    /// panel asks it at every look. Without one, only the studio's own jobs are listed.
    void setFoldersSource(std::function<QStringList()> folders);
    /// How the Runs list names a run ("linear_regression · RoPE"): another process's training
    /// is named so.
    void setRunNamer(std::function<QString(const QString& runFile)> namer);
    /// Looks for other processes' jobs now (off the GUI thread; the rows follow when it ends).
    void lookForOtherJobs();
    /// The jobs found on disk last (tests): other processes', and the cells of a sweep this
    /// studio runs (its own sweep job is one row; its cells are processes of their own).
    const std::vector<engine::JobRecord>& otherJobs() const { return m_model.other(); }
    /// Selects the row of another process's job by its key (JobRecord::key); false if absent.
    bool selectOther(const std::string& key);

Q_SIGNALS:
    void openRunRequested(QString runFile);
    /// What an action on another process's job did ("asked host:pid to stop run X").
    void statusMessage(QString message);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void rebuild();
    void updateActions();
    void act(Action a, const engine::JobRecord& j);
    /// The action on the job it was asked for (another process's, else the studio's `id`).
    void carryOut(Action a, const std::optional<engine::JobRecord>& other, quint64 id);

    RunController& m_controller;
    mutable JobsModel m_model;  // its own jobs refreshed from the controller before each ask
    QTreeWidget* m_list;
    QLabel* m_selected;
    QLabel* m_cores;  // "2 cores: 1 in use here" (Concurrent jobs) and what waits for one
    QPushButton *m_pause, *m_continue, *m_stop, *m_cancel, *m_open;
    QTimer* m_timer;
    bool m_dirty = true;
    int m_ticks = 0;
    std::function<QStringList()> m_folders;
    std::unique_ptr<LatestOnly<std::vector<engine::JobRecord>>> m_looking;  // one look at a time
    QTimer* m_look;
};

}  // namespace lengen::ui
