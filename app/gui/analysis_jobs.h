#pragma once
// Engine jobs the studio queues on its worker thread: training one config, evaluating and
// probing a run. Each reports through the TrainObserver the worker listens to.

#include "setup_panel.h"
#include "training_worker.h"

#include "lengen/engine/analysis.h"
#include "lengen/engine/probes.h"

namespace lengen::studio {

ui::TrainingWorker::Job trainJob(engine::RunConfig config, engine::TrainOptions options);
ui::TrainingWorker::Job evalJob(QString runFile, engine::EvalOptions options);
ui::TrainingWorker::Job probeJob(QString runFile, engine::ProbeOptions options);

}  // namespace lengen::studio
