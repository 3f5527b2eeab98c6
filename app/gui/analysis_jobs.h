#pragma once
// Engine jobs the studio queues on its worker thread: training one config or resuming a run
// (reports through a
// TrainObserver), evaluating and probing a run (through an AnalysisObserver: stages and their
// progress, never as training steps).

#include "setup_panel.h"
#include "training_worker.h"

#include "lengen/engine/analysis.h"
#include "lengen/engine/probes.h"

namespace lengen::studio {

ui::TrainingWorker::Job trainJob(engine::RunConfig config, engine::TrainOptions options);
/// Continues a stopped or interrupted run from its checkpoint (`lengen train --resume`).
ui::TrainingWorker::Job resumeJob(QString runFile, engine::TrainOptions options = {});
ui::TrainingWorker::AnalysisJob evalJob(QString runFile, engine::EvalOptions options);
ui::TrainingWorker::AnalysisJob probeJob(QString runFile, engine::ProbeOptions options);

}  // namespace lengen::studio
