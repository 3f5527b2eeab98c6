#include "training_worker.h"

#include <exception>

#include "lengen/engine/errors.h"

namespace lengen::ui {

void registerRunTypes()
{
    qRegisterMetaType<RunError>();
    qRegisterMetaType<engine::RunStarted>();
    qRegisterMetaType<engine::StepProgress>();
    qRegisterMetaType<engine::LogRecord>();
    qRegisterMetaType<engine::RunSummary>();
}

TrainingWorker::TrainingWorker(Job job, QObject* parent) : QObject(parent), m_job(std::move(job))
{
    registerRunTypes();
}

void TrainingWorker::run()
{
    // Nothing may escape a slot: every failure becomes `failed`.
    try {
        const auto summary = m_job(m_control, *this);
        if (summary.outcome == engine::RunOutcome::Cancelled || m_control.isCancelRequested())
            Q_EMIT cancelled(summary);
        else
            Q_EMIT finished(summary);
    } catch (const std::exception& e) {
        // Engine errors as they are; out of memory from LibTorch as a sentence, not a dump.
        const auto error = engine::classifyException(e);
        const bool internal = error.kind() == engine::ErrorKind::Internal;
        Q_EMIT failed(RunError{internal ? QStringLiteral("Internal error: %1").arg(e.what())
                                        : QString::fromStdString(error.what()),
                               QString::fromStdString(error.detail()),
                               static_cast<int>(error.kind())});
    } catch (...) {
        Q_EMIT failed(RunError{QStringLiteral("Internal error (unknown exception)"), QString(), 1});
    }
}

void TrainingWorker::onStarted(const engine::RunStarted& s) { Q_EMIT started(s); }

void TrainingWorker::onStep(const engine::StepProgress& p)
{
    // Throttled: the engine reports every step (hundreds per second on small models).
    const auto now = std::chrono::steady_clock::now();
    if (now - m_lastProgress < m_interval && p.step + 1 < p.totalSteps)
        return;
    m_lastProgress = now;
    Q_EMIT progress(p);
}

void TrainingWorker::onLog(const engine::LogRecord& r) { Q_EMIT logged(r); }

void TrainingWorker::onWarning(const std::string& message)
{
    Q_EMIT warning(QString::fromStdString(message));
}

}  // namespace lengen::ui
