#include "analysis_jobs.h"

#include "lengen/engine/trainer.h"

namespace lengen::studio {


ui::TrainingWorker::Job trainJob(engine::RunConfig config, engine::TrainOptions options)
{
    return [config = std::move(config), options = std::move(options)](engine::RunControl& control,
                                                                        engine::TrainObserver& obs) {
        return engine::train(config, options, control, obs);
    };
}

ui::TrainingWorker::Job resumeJob(QString runFile, engine::TrainOptions options)
{
    return [runFile, options = std::move(options)](engine::RunControl& control,
                                                   engine::TrainObserver& obs) {
        return engine::resume(runFile.toStdString(), options, control, obs);
    };
}

// An analysis as a worker job: its summary as a RunSummary (stepsDone = how many methods or
// probes were computed; the views say so in those words).
template <typename Analyse>
ui::TrainingWorker::AnalysisJob analysisJob(QString runFile, Analyse analyse)
{
    return [runFile, analyse](engine::RunControl& control, engine::AnalysisObserver& obs) {
        const auto s = analyse(runFile.toStdString(), control, obs);
        for (const auto& skipped : s.skipped)
            obs.onWarning("skipped: " + skipped);
        engine::RunSummary summary;
        summary.runFile = runFile.toStdString();
        summary.stepsDone = std::int64_t(s.computed.size());
        summary.outcome = s.cancelled ? engine::RunOutcome::Cancelled : engine::RunOutcome::Finished;
        return summary;
    };
}

ui::TrainingWorker::AnalysisJob evalJob(QString runFile, engine::EvalOptions options)
{
    return analysisJob(runFile, [options](const std::string& run, engine::RunControl& c,
                                          engine::AnalysisObserver& o) {
        return engine::evaluateRun(run, options, c, o);
    });
}

ui::TrainingWorker::AnalysisJob probeJob(QString runFile, engine::ProbeOptions options)
{
    return analysisJob(runFile, [options](const std::string& run, engine::RunControl& c,
                                          engine::AnalysisObserver& o) {
        return engine::probeRun(run, options, c, o);
    });
}

}  // namespace lengen::studio
