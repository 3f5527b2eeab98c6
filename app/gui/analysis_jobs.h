#pragma once
// Engine jobs the studio queues on its worker thread: training one config or resuming a run
// (reports through a
// TrainObserver), evaluating and probing a run (through an AnalysisObserver: stages and their
// progress, never as training steps).

#include "job_worker.h"
#include "setup_panel.h"

#include "lengen/engine/analysis.h"
#include "lengen/engine/probes.h"

namespace lengen::studio {

// Each takes the studio's session switches (StudioOptions::switches, read from the
// environment by main()) and gives them to the session it starts.
ui::JobWorker::Job trainJob(engine::RunConfig config, engine::TrainOptions options,
                            const engine::SessionSwitches& switches);
/// Continues a stopped or interrupted run from its checkpoint (`lengen train --resume`).
ui::JobWorker::Job resumeJob(QString runFile, const engine::SessionSwitches& switches);
ui::JobWorker::AnalysisJob evalJob(QString runFile, engine::EvalOptions options,
                                   const engine::SessionSwitches& switches);
ui::JobWorker::AnalysisJob probeJob(QString runFile, engine::ProbeOptions options,
                                    const engine::SessionSwitches& switches);
/// Every figure of a run into `dir` (PNG at `dpi`, SVG, PDF, CSV): `lengen export --all` as a
/// child process of the worker thread (QCustomPlot draws on a GUI thread only, so not in the
/// studio's worker), its progress the files written so far; Stop ends it. stepsDone: files.
ui::JobWorker::AnalysisJob exportJob(QString runFile, QString dir, int dpi, QString lengen);

}  // namespace lengen::studio
