#include "open_run_model.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>

#include <exception>

#include "lengen/engine/run_file.h"

namespace lengen::ui {

QString validatedRunFile(const QString& pathOrDir, std::string* status)
{
    const auto file = engine::locateRunFile(pathOrDir.toStdString());
    const auto info =
        engine::readRunInfo(file);  // every header value checked: damaged files are refused here
    if (status)
        *status = info.status;
    return QFileInfo(QString::fromStdString(file)).absoluteFilePath();
}

OpenRunModel::OpenRunModel(QObject* parent) : QObject(parent)
{
    m_follow.setInterval(2000);
    connect(&m_follow, &QTimer::timeout, this, [this] {
        if (m_runFile.isEmpty())
            return m_follow.stop();
        Q_EMIT updated(m_runFile, Part::Log);
        followIfRunning();
    });
    // Results that another process stores for the open run (issue 41, found under Xvfb: a
    // `lengen eval` in a terminal showed only once the run was opened again).
    m_watch.setInterval(3000);
    connect(&m_watch, &QTimer::timeout, this, [this] {
        if (m_runFile.isEmpty())
            return m_watch.stop();
        checkStillThere();
        if (m_runFile.isEmpty())
            return;
        const qint64 now = analysisStamp();
        if (now == m_analysisStamp)
            return;
        m_analysisStamp = now;
        Q_EMIT updated(m_runFile, Part::Analysis);
    });
}

qint64 OpenRunModel::analysisStamp() const
{
    const QFileInfo analysis(QFileInfo(m_runFile).dir().filePath(QStringLiteral("analysis.h5")));
    if (!analysis.exists())
        return -1;
    return analysis.lastModified().toMSecsSinceEpoch() * 131 + analysis.size();
}

bool OpenRunModel::checkStillThere()
{
    if (m_runFile.isEmpty() || QFileInfo::exists(m_runFile))
        return !m_runFile.isEmpty();
    const QString was = m_runFile;
    close();
    Q_EMIT gone(was);
    return false;
}

void OpenRunModel::movedAway(const QStringList& runFiles)
{
    for (const auto& run : runFiles)
        if (isOpenRun(run)) {
            const QString was = m_runFile;
            close();
            Q_EMIT gone(was);
            return;
        }
}

bool OpenRunModel::isOpenRun(const QString& pathOrDir) const
{
    if (m_runFile.isEmpty() || pathOrDir.isEmpty())
        return false;
    QFileInfo info(pathOrDir);
    if (info.isDir())
        info = QFileInfo(info.filePath() + QStringLiteral("/run.h5"));
    return info.absoluteFilePath() == m_runFile;
}

QString OpenRunModel::open(const QString& pathOrDir)
{
    QString file;
    std::string status;
    try {
        file = validatedRunFile(pathOrDir, &status);
    } catch (const std::exception& e) {
        const QString message = QString::fromUtf8(e.what());
        Q_EMIT openFailed(pathOrDir, message);
        return message;
    }
    if (file == m_runFile) {
        Q_EMIT updated(m_runFile, Part::Log);
        Q_EMIT updated(m_runFile, Part::Analysis);
    } else {
        m_runFile = file;
        Q_EMIT changed(m_runFile);
    }
    m_analysisStamp = analysisStamp();
    m_watch.start();
    followIfRunning(&status);  // the header just read, not a second read
    return {};
}

void OpenRunModel::close()
{
    m_follow.stop();
    m_watch.stop();
    if (m_runFile.isEmpty())
        return;
    m_runFile.clear();
    Q_EMIT changed(m_runFile);
}

void OpenRunModel::notifyUpdated(const QString& pathOrDir, Part part)
{
    if (isOpenRun(pathOrDir)) {
        if (part == Part::Analysis)
            m_analysisStamp = analysisStamp();  // the watch need not say it again
        Q_EMIT updated(m_runFile, part);
        followIfRunning();
    }
}

void OpenRunModel::followIfRunning(const std::string* status)
{
    bool running = false;
    if (status) {
        running = *status == "running";
    } else {
        try {
            running = engine::readRunInfo(m_runFile.toStdString()).status == "running";
        } catch (const std::exception&) {
            running = false;  // gone or damaged since: nothing more to follow
        }
    }
    if (running && !m_follow.isActive())
        m_follow.start();
    else if (!running)
        m_follow.stop();
}

}  // namespace lengen::ui
