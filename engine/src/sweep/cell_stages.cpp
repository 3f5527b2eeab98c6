// One cell run in this process (runSweepCell, what `lengen sweep run-cell` does): its stages
// (train, evaluate, probe) recorded in its cell.json as they start and end. It trains, so it is
// in lengen_engine, not the Torch-free core.

#include "sweep/cell_stages.h"

#include <filesystem>
#include <optional>

#include "lengen/engine/analysis.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep_run.h"
#include "lengen/engine/trainer.h"
#include "sweep/job_record.h"

namespace lengen::engine::sweep {

const SweepCell& cellAt(const SweepIndex& sweep, const std::string& root, int index)
{
    if (index < 0 || index >= int(sweep.cells.size()))
        throw Error(ErrorKind::Usage, "cell " + std::to_string(index) + " is not in " + root +
                                          " (cells 0.." + std::to_string(sweep.cells.size() - 1) +
                                          ")");
    return sweep.cells[size_t(index)];
}

std::string axesText(const SweepCell& cell)
{
    std::string out;
    for (const auto& [k, v] : cell.axes)
        out += (out.empty() ? "" : " ") + k + "=" + v;
    return out;
}

CellStages::CellStages(const SweepPaths& paths, const SweepIndex& sweep, const SweepCell& cell,
                       std::function<void(const std::string&)> say)
    : m_paths(paths), m_sweep(sweep), m_cell(cell), m_say(std::move(say))
{}

void CellStages::set(const std::string& stage, const std::string& message, int code)
{
    m_state.stage = stage;
    m_state.message = message;
    m_state.exitCode = code;
    writeCellState(m_paths, m_cell.name, m_state);
}

void CellStages::note(const std::string& line) const
{
    if (m_say)
        m_say(line);
}

CellOutcome CellStages::stopped(const std::string& what)
{
    set("stopped", what, exitCodeFor(ErrorKind::Interrupted));
    note("cell " + m_cell.name + ": " + what);
    return CellOutcome::Stopped;
}

bool CellStages::cancelMarked() const { return sweep::cancelMarked(m_paths, m_cell.name); }

TrainOptions CellStages::trainOptions(const CellRunOptions& options) const
{
    TrainOptions train;
    train.runDir = m_paths.cellDir(m_cell.name);
    train.threads = options.threads;
    train.device = options.device;
    train.switches = options.switches;
    train.sweepName = m_sweep.name;
    train.sweepCell = m_cell.name;
    train.sweepAxes = axesText(m_cell);
    return train;
}

CellOutcome CellStages::analyse(const CellRunOptions& options, RunControl& control,
                                AnalysisObserver& analysis)
{
    const auto& stages = m_sweep.stages;
    const std::string run = runFile();
    // A cancel mark that came while it trained elsewhere (another host: no signal reaches it)
    // holds before the next stage.
    if ((stages.eval || stages.probe) && cancelMarked())
        return stopped("cancelled after training (sweep cancel); the run is kept");
    if (stages.eval) {
        set("eval");
        auto o = stages.evalOptions;
        o.skipInapplicable = true;  // a grid over PEs: yarn is for the rotary cells only
        o.common.threads = options.threads;
        o.common.device = options.device;
        o.common.switches = options.switches;
        if (evaluateRun(run, o, control, analysis).cancelled)
            return stopped("stopped during the evaluation; finished methods are stored");
    }
    if (stages.probe && stages.eval && cancelMarked())
        return stopped("cancelled after the evaluation (sweep cancel)");
    if (stages.probe) {
        set("probe");
        auto o = stages.probeOptions;
        o.common.threads = options.threads;
        o.common.device = options.device;
        o.common.switches = options.switches;
        if (probeRun(run, o, control, analysis).cancelled)
            return stopped("stopped during the probes; finished probes are stored");
    }
    set("done");
    note("cell " + m_cell.name + ": done");
    return CellOutcome::Done;
}

void CellStages::failed(const std::exception& e) noexcept
{
    try {
        const Error* known = dynamic_cast<const Error*>(&e);
        const Error error = known ? *known : classifyException(e);
        set("failed", error.what(), exitCodeFor(error.kind()));
    } catch (const std::exception&) {
        // The disk may be what failed: the log and the exit code still say it.
    }
}

}  // namespace lengen::engine::sweep

namespace lengen::engine {

namespace fs = std::filesystem;

CellOutcome runSweepCell(const std::string& dir, int index, const CellRunOptions& options,
                         RunControl& control, TrainObserver& training, AnalysisObserver& analysis,
                         const std::function<void(const std::string&)>& say)
{
    const SweepPaths paths{locateSweep(dir)};
    const auto sweep = readSweepIndex(paths.root);
    const auto& cell = sweep::cellAt(sweep, paths.root, index);
    sweep::CellStages stages(paths, sweep, cell, say);
    stages.note("cell " + cell.name + " (" + sweep::axesText(cell) + ")");
    try {
        stages.set(
            "train");  // publishes this process's pid: a `sweep cancel` from now on signals it
        // A cancel that landed before the pid was published left only its mark (issue 54).
        if (stages.cancelMarked())
            return stages.stopped("cancelled before it started (sweep cancel)");
        const std::string run = stages.runFile();
        const TrainOptions train = stages.trainOptions(options);
        std::optional<RunSummary> summary;
        const auto info = fs::exists(run) ? std::optional(readRunInfo(run)) : std::nullopt;
        if (info && info->status != "finished" && info->checkpointStep < 0)
            fs::remove(run);  // stopped before its first checkpoint: nothing to keep
        if (info && info->status == "finished") {
            stages.note("trained already (" + std::to_string(info->totalSteps) + " steps)");
        } else if (info && info->checkpointStep >= 0) {
            summary = resume(run, train, control, training);
        } else {
            const auto loaded = loadConfigFile(paths.cellDir(cell.name) + "/config.yaml");
            summary = engine::train(loaded.runs.at(0), train, control, training);
        }
        if (summary && summary->outcome == RunOutcome::Cancelled)
            return stages.stopped("stopped after " + std::to_string(summary->stepsDone) +
                                  " steps; checkpoint written");
        return stages.analyse(options, control, analysis);
    } catch (const std::exception& e) {
        stages.failed(e);
        throw;
    }
}

}  // namespace lengen::engine
