#pragma once
// The Jobs panel: every job of the studio (RunController::jobs) as one row — what it is, its
// state (queued behind what / running / paused / stopping / finished / stopped / failed with
// the message), progress, elapsed time and ETA, and what it works on. Pause, Continue, Stop,
// Cancel and Open run act on the selected job, whose name the panel shows beside them
// (qBittorrent's transfer list is the model). Rows are rebuilt at most 4 times a second however
// often jobs report. GUI thread only.

#include <QWidget>

class QLabel;
class QPushButton;
class QTimer;
class QTreeWidget;

namespace lengen::ui {

class RunController;

class JobsPanel final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(JobsPanel)

public:
    explicit JobsPanel(RunController& controller, QWidget* parent = nullptr);
    /// The rows as shown: "label | state | progress" per job (tests).
    QStringList rowTexts() const;
    /// Selects the row of job `id` (tests, and the studio after it queues a job).
    void select(quint64 id);
    quint64 selectedJob() const;
    enum class Action { Pause, Continue, Stop, Cancel, OpenRun };
    bool actionEnabled(Action a) const;
    void trigger(Action a);

Q_SIGNALS:
    void openRunRequested(QString runFile);

private:
    void rebuild();
    void updateActions();

    RunController& m_controller;
    QTreeWidget* m_list;
    QLabel* m_selected;
    QPushButton *m_pause, *m_continue, *m_stop, *m_cancel, *m_open;
    QTimer* m_timer;
    bool m_dirty = true;
    int m_ticks = 0;
};

}  // namespace lengen::ui
