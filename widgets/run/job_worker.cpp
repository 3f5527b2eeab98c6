#include "job_worker.h"

#include <exception>

#include "lengen/engine/errors.h"

namespace lengen::ui {

void registerRunTypes()
{
    qRegisterMetaType<RunError>();
    qRegisterMetaType<JobKind>();
    qRegisterMetaType<JobInfo>();
    qRegisterMetaType<AnalysisProgress>();
    qRegisterMetaType<engine::RunStarted>();
    qRegisterMetaType<engine::StepProgress>();
    qRegisterMetaType<engine::LogRecord>();
    qRegisterMetaType<engine::JobResult>();
}

JobWorker::JobWorker(Job job, QObject* parent) : QObject(parent), m_job(std::move(job))
{
    registerRunTypes();
}

JobWorker::JobWorker(AnalysisJob job, QObject* parent) : QObject(parent), m_analysis(std::move(job))
{
    registerRunTypes();
}

void JobWorker::run()
{
    // Nothing may escape a slot: every failure becomes `failed`.
    try {
        m_begun = std::chrono::steady_clock::now();
        engine::JobResult result;
        bool cancelledHere = false;
        if (m_analysis) {
            result = m_analysis(m_control, static_cast<engine::AnalysisObserver&>(*this));
        } else {  // a training's result is its steps and last logged loss
            const auto s = m_job(m_control, static_cast<engine::TrainObserver&>(*this));
            result.done = s.stepsDone;
            result.finalLoss = s.finalLoss;
            cancelledHere = s.outcome == engine::RunOutcome::Cancelled;
        }
        if (cancelledHere || m_control.isCancelRequested())
            Q_EMIT cancelled(result);
        else
            Q_EMIT finished(result);
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

void JobWorker::onStarted(const engine::RunStarted& s) { Q_EMIT started(s); }

void JobWorker::onStep(const engine::StepProgress& p)
{
    // Throttled: the engine reports every step (hundreds per second on small models).
    const auto now = std::chrono::steady_clock::now();
    if (now - m_lastProgress < m_interval && p.step + 1 < p.totalSteps)
        return;
    m_lastProgress = now;
    Q_EMIT progress(p);
}

void JobWorker::onLog(const engine::LogRecord& r) { Q_EMIT logged(r); }

void JobWorker::onWarning(const std::string& message)
{
    Q_EMIT warning(QString::fromStdString(message));
}

void JobWorker::onStage(int index, int count, const std::string& name)
{
    m_stage.stage = index;
    m_stage.stages = std::max(1, count);
    m_stage.stageName = QString::fromStdString(name);
    onProgress(name, 0, 1);
}

void JobWorker::onFraction(double ofJob)
{
    if (!m_costFrom)
        m_costFrom = std::chrono::steady_clock::now();
    m_costFraction = ofJob;
}

void JobWorker::onProgress(const std::string& stage, std::int64_t done, std::int64_t total)
{
    // Within a stage the engine counts its own units; the job's fraction is the engine's share
    // by cost where it says one (onFraction), else stages weigh alike; it only grows (it
    // restarted at every stage when it was shown as training steps).
    // A new count of units (a stage's first report, a sweep's cells once known) always goes out:
    // throttled, the view kept the placeholder "0 of 1" until the next report, maybe minutes.
    const bool newTotal = std::max<std::int64_t>(1, total) != m_stage.total;
    m_stage.done = std::max<std::int64_t>(0, done);
    m_stage.total = std::max<std::int64_t>(1, total);
    const double within = std::min(1.0, double(m_stage.done) / double(m_stage.total));
    // Where the engine weighs its parts by cost (the probes), its share; else stages alike.
    const double even = (m_stage.stage + within) / m_stage.stages;
    const double fraction = std::max(m_stage.fraction, m_costFraction >= 0 ? m_costFraction : even);
    if (!stage.empty() && m_stage.stageName.isEmpty())
        m_stage.stageName = QString::fromStdString(stage);
    // The part of the stage the engine names ("duplicated: instruction position" in the stage
    // "duplicated"): what a long stage is doing now.
    const QString named = QString::fromStdString(stage);
    m_stage.part = named.startsWith(m_stage.stageName + QStringLiteral(": "))
                       ? named.mid(m_stage.stageName.size() + 2)
                       : QString();
    const auto now = std::chrono::steady_clock::now();
    // Against the share by cost, the time since its work began: loading the run is not in it
    // (the first estimate of a 52 s probe said 1:08 with 48 s to go, the Xvfb check).
    const double elapsed =
        std::chrono::duration<double>(now - (m_costFrom ? *m_costFrom : m_begun)).count();
    // Estimated where the fraction grows; while it stands, the estimate counts down from its
    // last value (issue 80, defect 22: it climbed 0:02 → 0:21 while a probe's bar stood).
    if (fraction > m_stage.fraction || m_stage.etaSeconds < 0) {
        m_stage.etaSeconds = fraction > 0.02 ? elapsed * (1 - fraction) / fraction : -1;
        m_etaFrom = now;
        m_etaBase = m_stage.etaSeconds;
    } else {
        m_stage.etaSeconds =
            std::max(0.0, m_etaBase - std::chrono::duration<double>(now - m_etaFrom).count());
    }
    m_stage.fraction = fraction;
    if (!newTotal && now - m_lastProgress < m_interval && done < total)
        return;
    m_lastProgress = now;
    Q_EMIT analysisProgress(m_stage);
}

}  // namespace lengen::ui
