#include "open_run_model.h"

#include <QFileInfo>

#include <exception>

#include "lengen/engine/run_file.h"

namespace lengen::ui {

QString validatedRunFile(const QString& pathOrDir, std::string* status)
{
    const auto file = engine::locateRunFile(pathOrDir.toStdString());
    const auto info = engine::readRunInfo(file);  // every header value checked: damaged files are refused here
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
    followIfRunning(&status);  // the header just read, not a second read
    return {};
}

void OpenRunModel::close()
{
    m_follow.stop();
    if (m_runFile.isEmpty())
        return;
    m_runFile.clear();
    Q_EMIT changed(m_runFile);
}

void OpenRunModel::notifyUpdated(const QString& pathOrDir, Part part)
{
    if (isOpenRun(pathOrDir)) {
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
