#pragma once
// One sweep cell's stages as its cell.json records them, shared by the cell run alone
// (runSweepCell) and the cells trained as members of one batched model (runSweepMembers):
// each stage written as it begins (with this process's pid, which `sweep cancel` signals),
// the training options a cell's run takes, the analyses after training, and the outcome.

#include <exception>
#include <functional>
#include <string>

#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_run.h"
#include "lengen/engine/trainer.h"

namespace lengen::engine::sweep {

class CellStages {
public:
    CellStages(const SweepPaths& paths, const SweepIndex& sweep, const SweepCell& cell,
               std::function<void(const std::string&)> say);
    const SweepCell& cell() const { return m_cell; }
    std::string runFile() const { return m_paths.runFile(m_cell.name); }
    void set(const std::string& stage, const std::string& message = {}, int code = 0);
    void note(const std::string& line) const;
    /// Writes "stopped" with `what` and says it.
    CellOutcome stopped(const std::string& what);
    /// Whether `sweep cancel` marked this cell.
    bool cancelMarked() const;
    /// The options this cell's run trains with: its folder, sweep name, cell and axes.
    TrainOptions trainOptions(const CellRunOptions& options) const;
    /// After training: the sweep's eval and probe stages (a cancel mark holds before each),
    /// then "done".
    CellOutcome analyse(const CellRunOptions& options, RunControl& control,
                        AnalysisObserver& analysis);
    /// Writes "failed" with the error's message and exit code (the disk may be what failed: a
    /// write that fails is let go).
    void failed(const std::exception& e) noexcept;

private:
    const SweepPaths& m_paths;
    const SweepIndex& m_sweep;
    const SweepCell& m_cell;
    std::function<void(const std::string&)> m_say;
    CellState m_state;
};

/// Cell `index` of the sweep, or Error(Usage) naming the folder and the cells it has.
const SweepCell& cellAt(const SweepIndex& sweep, const std::string& root, int index);

/// "key=value key=value" of a cell's axes, as runs store it.
std::string axesText(const SweepCell& cell);

}  // namespace lengen::engine::sweep
