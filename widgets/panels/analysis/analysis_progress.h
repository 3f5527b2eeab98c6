#pragma once
// The progress area of evaluation and probe jobs (in the status bar): "evaluate run-x ·
// ood_length (method 3 of 12)", one bar over the whole job, ETA, and Stop. It listens to the
// RunController and shows only analysis jobs; the Train view shows only training. It hides
// itself when the job ends. GUI thread only.

#include <QWidget>

#include "run_controller.h"

class QLabel;
class QProgressBar;
class QToolButton;

namespace lengen::ui {

class AnalysisProgressArea final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AnalysisProgressArea)

public:
    explicit AnalysisProgressArea(RunController& controller, QWidget* parent = nullptr);
    QString text() const;
    /// The bar's value in per mille of the whole job.
    int perMille() const;
    /// The widest its text may be, in pixels (clamped to 100..360; elided, whole in the
    /// tooltip): the window narrows it while a status message needs the room, since the Jobs
    /// panel says the same.
    void setTextRoom(int pixels);
    int textRoom() const { return m_room; }
    /// The widest its text may be when nothing else needs the room.
    static int fullTextRoom();

private:
    void onProgress(const JobInfo& job, const AnalysisProgress& p);
    void onEnded(quint64 id);
    void showText();

    RunController& m_controller;
    QLabel* m_label;
    QString m_text;  ///< the whole text (the label shows it elided)
    int m_room;      ///< the label's width at most (setTextRoom)
    QProgressBar* m_bar;
    QToolButton* m_stop;
    quint64 m_job = 0;  ///< the job shown, which Stop stops
};

}  // namespace lengen::ui
