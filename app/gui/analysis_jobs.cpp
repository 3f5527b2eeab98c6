#include "analysis_jobs.h"

#include "lengen/engine/trainer.h"

namespace lengen::studio {

namespace {

// Analysis progress as training progress: the worker and views need only one kind.
class ProgressAdapter final : public engine::AnalysisObserver {
public:
    explicit ProgressAdapter(engine::TrainObserver& obs) : m_obs(obs) {}
    void onProgress(const std::string&, std::int64_t done, std::int64_t total) override
    {
        engine::StepProgress p;
        p.step = std::max<std::int64_t>(0, done - 1);
        p.totalSteps = std::max<std::int64_t>(1, total);
        m_obs.onStep(p);
    }
    void onWarning(const std::string& w) override { m_obs.onWarning(w); }

private:
    engine::TrainObserver& m_obs;
};

}  // namespace

ui::TrainingWorker::Job trainJob(engine::RunConfig config, engine::TrainOptions options)
{
    return [config = std::move(config), options = std::move(options)](engine::RunControl& control,
                                                                        engine::TrainObserver& obs) {
        return engine::train(config, options, control, obs);
    };
}

ui::TrainingWorker::Job evalJob(QString runFile, engine::EvalOptions options)
{
    return [runFile, options](engine::RunControl& control, engine::TrainObserver& obs) {
        ProgressAdapter progress(obs);
        engine::RunStarted started;
        started.runFile = runFile.toStdString();
        obs.onStarted(started);
        const auto s = engine::evaluateRun(runFile.toStdString(), options, control, progress);
        engine::RunSummary summary;
        summary.runFile = runFile.toStdString();
        summary.stepsDone = std::int64_t(s.computed.size());
        summary.outcome = s.cancelled ? engine::RunOutcome::Cancelled : engine::RunOutcome::Finished;
        return summary;
    };
}

ui::TrainingWorker::Job probeJob(QString runFile, engine::ProbeOptions options)
{
    return [runFile, options](engine::RunControl& control, engine::TrainObserver& obs) {
        ProgressAdapter progress(obs);
        engine::RunStarted started;
        started.runFile = runFile.toStdString();
        obs.onStarted(started);
        const auto s = engine::probeRun(runFile.toStdString(), options, control, progress);
        for (const auto& skipped : s.skipped)
            obs.onWarning("skipped: " + skipped);
        engine::RunSummary summary;
        summary.runFile = runFile.toStdString();
        summary.stepsDone = std::int64_t(s.computed.size());
        summary.outcome = s.cancelled ? engine::RunOutcome::Cancelled : engine::RunOutcome::Finished;
        return summary;
    };
}

}  // namespace lengen::studio
