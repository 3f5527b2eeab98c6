#pragma once
// The one open run of the studio. Every view and every action that concerns "the run" follows
// this object instead of being told by the window: the title, Train, Evaluation, Probes,
// Attention, the Runs list's selection, Analysis ▸ Evaluate / Probe / Export. GUI thread only.
//
//   changed(run)  another run is open (empty: none): views drop what they showed and read it
//   updated(run, part)  the same run has new content: Log, rows logged by a writer (followed
//                 every 2 s while its file says "running"); Analysis, results an analysis job
//                 stored (the figure views redraw only for these, keeping their zoom otherwise)
//
// open() validates the file before anything changes: a damaged or foreign file is refused with
// the engine's message (the same one the CLI prints), and the open run stays as it was.

#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <string>

namespace lengen::ui {

class OpenRunModel final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(OpenRunModel)

public:
    enum class Part { Log, Analysis };
    Q_ENUM(Part)

    explicit OpenRunModel(QObject* parent = nullptr);

    /// The open run's run.h5 (absolute), or empty.
    QString runFile() const { return m_runFile; }
    bool isOpen() const { return !m_runFile.isEmpty(); }
    /// Whether `pathOrDir` names the open run.
    bool isOpenRun(const QString& pathOrDir) const;

    /// Opens a run folder or run.h5. Returns an empty string on success, else the message
    /// (also emitted as openFailed); the open run is unchanged then. Opening the open run
    /// again re-reads all of it (updated: Log, then Analysis).
    QString open(const QString& pathOrDir);
    void close();
    /// The open run follows its file (issue 80 §1, defect 4: a deleted open run stayed open,
    /// Resume offered): whether it is still there; when its run.h5 is gone (moved or deleted,
    /// by the studio or anyone) the run is closed and gone(was) emitted. The analysis watch
    /// asks every 3 s.
    bool checkStillThere();
    /// The studio moved these runs (the Runs list's Delete or Archive): when the open run is
    /// one, it is closed at once and gone(was) emitted.
    void movedAway(const QStringList& runFiles);
    /// A run's files changed (an analysis stored results, a training ended): when it is the
    /// open run, views re-read that part.
    void notifyUpdated(const QString& pathOrDir, Part part);

    /// Follow interval while the run's file says "running" (tests shorten it).
    void setFollowInterval(int ms) { m_follow.setInterval(ms); }
    /// How often the open run's analysis.h5 is checked for results another process stored
    /// (`lengen eval` in a terminal, a sweep cell): size and modification time (3 s; tests
    /// shorten it).
    void setWatchInterval(int ms) { m_watch.setInterval(ms); }
    bool following() const { return m_follow.isActive(); }

Q_SIGNALS:
    void changed(const QString& runFile);
    void updated(const QString& runFile, lengen::ui::OpenRunModel::Part part);
    void openFailed(const QString& path, const QString& message);
    /// The open run's file went away (checkStillThere, movedAway); the run is closed.
    void gone(const QString& runFile);

private:
    /// Follows while `status` (as just read) is "running"; without it, reads the header.
    void followIfRunning(const std::string* status = nullptr);

    /// The analysis file's size and mtime folded, -1 when it does not exist.
    qint64 analysisStamp() const;

    QString m_runFile;
    QTimer m_follow;
    QTimer m_watch;  ///< the open run's analysis.h5, written by anyone
    qint64 m_analysisStamp = -1;
};

/// The absolute run.h5 of a run folder or file, checked by reading the run's header (its status
/// into `status` when given); throws engine::Error (RunFile) naming the file for a missing,
/// damaged or foreign one.
QString validatedRunFile(const QString& pathOrDir, std::string* status = nullptr);

}  // namespace lengen::ui
