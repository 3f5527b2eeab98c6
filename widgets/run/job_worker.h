#pragma once
// Runs one job of the studio (a training, or any other kind: evaluation, probes, export, sweep,
// import) on a worker thread and turns the engine's observer calls into queued signals: a
// training's as started/progress/logged, another kind's as analysisProgress (stage k of n,
// overall fraction and ETA). Lives on the QThread its RunController owns.
// requestCancel() and setPaused() are plain thread-safe calls, not slots: while the job runs
// the worker's event loop is blocked inside the engine, so a queued slot would never run.

#include <QObject>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>

#include "lengen/engine/analysis.h"
#include "lengen/engine/jobs.h"
#include "lengen/engine/observer.h"
#include "lengen/engine/run_control.h"
#include "run_types.h"

namespace lengen::ui {

class JobWorker final : public QObject,
                        private engine::TrainObserver,
                        private engine::AnalysisObserver {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(JobWorker)

public:
    /// A training: calls into the engine with the control and observer it is given, returns the
    /// engine's summary or throws engine::Error.
    using Job = std::function<engine::RunSummary(engine::RunControl&, engine::TrainObserver&)>;

    /// Any other kind: reports through the AnalysisObserver it is given and returns its kind's
    /// result (methods stored, files written, cells ended, …; engine::JobResult).
    using AnalysisJob =
        std::function<engine::JobResult(engine::RunControl&, engine::AnalysisObserver&)>;

    explicit JobWorker(Job job, QObject* parent = nullptr);
    explicit JobWorker(AnalysisJob job, QObject* parent = nullptr);

    void requestCancel() { m_control.requestCancel(); }           ///< any thread
    void setPaused(bool paused) { m_control.setPaused(paused); }  ///< any thread
    /// Minimum interval between two `progress` signals (default 50 ms: about 20 Hz).
    void setProgressInterval(std::chrono::milliseconds interval) { m_interval = interval; }

public Q_SLOTS:
    /// Runs the job; emits exactly one of finished, cancelled, failed.
    void run();

Q_SIGNALS:
    void started(lengen::engine::RunStarted info);
    void progress(lengen::engine::StepProgress step);
    void logged(lengen::engine::LogRecord record);
    void warning(QString message);
    void finished(lengen::engine::JobResult result);
    void cancelled(lengen::engine::JobResult result);
    void failed(lengen::ui::RunError error);
    void analysisProgress(lengen::ui::AnalysisProgress progress);

private:
    void onStarted(const engine::RunStarted& s) override;
    void onStep(const engine::StepProgress& p) override;
    void onLog(const engine::LogRecord& r) override;
    void onWarning(const std::string& message) override;
    void onStage(int index, int count, const std::string& name) override;
    void onProgress(const std::string& stage, std::int64_t done, std::int64_t total) override;
    void onFraction(double ofJob) override;

    Job m_job;
    AnalysisJob m_analysis;
    AnalysisProgress m_stage;
    /// The estimate when the fraction last grew, and when: it counts down from there.
    double m_etaBase = -1;
    double m_costFraction = -1;  ///< the engine's share done by cost; < 0: none said
    std::chrono::steady_clock::time_point m_etaFrom;
    std::chrono::steady_clock::time_point m_begun{};
    /// The first share by cost said: the work it weighs starts there (the run is loaded).
    std::optional<std::chrono::steady_clock::time_point> m_costFrom;
    engine::RunControl m_control;
    std::chrono::milliseconds m_interval{50};
    std::chrono::steady_clock::time_point m_lastProgress{};
};

}  // namespace lengen::ui
