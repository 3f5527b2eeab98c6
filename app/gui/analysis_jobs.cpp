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

// An analysis as a worker job: progress through the adapter, its summary as a RunSummary
// (stepsDone = how many methods / probes were computed).
template <typename Analyse>
ui::TrainingWorker::Job analysisJob(QString runFile, Analyse analyse)
{
    return [runFile, analyse](engine::RunControl& control, engine::TrainObserver& obs) {
        ProgressAdapter progress(obs);
        engine::RunStarted started;
        started.runFile = runFile.toStdString();
        obs.onStarted(started);
        const auto s = analyse(runFile.toStdString(), control, progress);
        for (const auto& skipped : s.skipped)
            obs.onWarning("skipped: " + skipped);
        engine::RunSummary summary;
        summary.runFile = runFile.toStdString();
        summary.stepsDone = std::int64_t(s.computed.size());
        summary.outcome = s.cancelled ? engine::RunOutcome::Cancelled : engine::RunOutcome::Finished;
        return summary;
    };
}

ui::TrainingWorker::Job evalJob(QString runFile, engine::EvalOptions options)
{
    return analysisJob(runFile, [options](const std::string& run, engine::RunControl& c,
                                          engine::AnalysisObserver& o) {
        return engine::evaluateRun(run, options, c, o);
    });
}

ui::TrainingWorker::Job probeJob(QString runFile, engine::ProbeOptions options)
{
    return analysisJob(runFile, [options](const std::string& run, engine::RunControl& c,
                                          engine::AnalysisObserver& o) {
        return engine::probeRun(run, options, c, o);
    });
}

}  // namespace lengen::studio
