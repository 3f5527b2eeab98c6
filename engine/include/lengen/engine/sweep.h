#pragma once
// Sweeps: a grid of seeded runs (tasks x position encodings x seeds x any config key) that is
// created, run, watched and aggregated as one experiment. The sweep file and the sweep folder
// are documented in docs/sweep-format.md. This header is plain values; the CLI's executor
// (`lengen sweep run`, `submit`) and the studio's Sweeps view sit on top of it.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/jobs.h"
#include "lengen/engine/probes.h"

namespace lengen::engine {

constexpr int kSweepIndexVersion = 1;

/// One axis of the grid. `key` is `task`, `pe`, `seed` or a dotted config key path
/// (`model.num_hidden_layers`); values are YAML scalars or flow sequences as written.
struct SweepAxis {
    std::string key;
    std::vector<std::string> values;
    SourceLocation where;  ///< where the axis was written (messages name it)
};

/// What each cell runs after training. Training always runs.
struct SweepStages {
    bool eval = false;
    EvalOptions evalOptions;
    SourceLocation interventionsAt;  ///< where `eval.interventions` was written (messages)
    bool probe = false;
    ProbeOptions probeOptions;
};

struct SweepSpec {
    std::string file;             ///< the sweep.yaml this came from ("" for text)
    std::string name;             ///< `name:`; default: the sweep folder's name
    std::string base;             ///< `base:` config path as written (or "")
    std::string pattern;          ///< `pattern:` with {task} and {pe} (or "")
    std::vector<SweepAxis> axes;  ///< in grid order: the last axis varies fastest
    SweepStages stages;
    /// `skip_refused: true`: leave out the combinations whose config the loader refuses (NoPE
    /// under randomized positions, say) instead of refusing the whole grid.
    bool skipRefused = false;
    /// The base as a config in memory (the studio's Set up draft: "Sweep position
    /// encodings…"); when set it replaces `base` and `pattern`. Not written to sweep.yaml.
    std::optional<RunConfig> baseConfig;
};

/// One cell of the grid: its axis values and its resolved, validated config (seed set).
struct SweepCell {
    int index = 0;     ///< 0-based, grid order
    std::string name;  ///< folder name: "003-linear_regression-rope-s2"
    std::vector<std::pair<std::string, std::string>> axes;  ///< (key, value) per axis
    RunConfig config;
    std::string configYaml;  ///< toYaml(config): what the cell's run stores
};

/// Reads sweep.yaml. Throws ConfigError (file:line:col: key: message) for every problem.
SweepSpec loadSweepFile(const std::string& path);
SweepSpec loadSweepText(const std::string& yaml, const std::string& name);
/// The sweep as YAML (what `sweep new` writes and loadSweepText reads back).
std::string sweepYaml(const SweepSpec& spec);

/// A combination of the axes left out under `skip_refused`: its axis values and why.
struct SkippedCell {
    std::string axes;  ///< "pe=nope training.random_positions.max_position=144"
    std::string why;   ///< the loader's first message
};

/// Resolves and validates every cell before anything runs. A bad or empty axis, or a cell
/// whose config does not load, throws ConfigError; a cell's issues are prefixed with its axis
/// values ("cell task=parity pe=fire seed=1: file:line:col: key: message"). Under
/// `skipRefused` a cell whose config the loader refuses is left out (into `skipped`): the
/// others' indices run on without gaps, their names keep the grid position. Errors of the sweep
/// itself (an unknown PE, a value that is not YAML, a value refused in every combination at its
/// own key: a misspelt task, max_position=64x) and a grid with no cell left still throw; a value
/// refused in every combination because of another setting (NoPE where every cell randomizes
/// positions) is left out with them.
std::vector<SweepCell> expandSweep(const SweepSpec& spec,
                                   std::vector<SkippedCell>* skipped = nullptr);

// ---- the sweep folder (docs/sweep-format.md) -------------------------------------------

/// Paths inside a sweep folder.
struct SweepPaths {
    std::string root;
    std::string sweepFile() const { return root + "/sweep.yaml"; }
    std::string indexFile() const { return root + "/index.json"; }
    std::string cellDir(const std::string& cell) const { return root + "/cells/" + cell; }
    std::string runFile(const std::string& cell) const { return cellDir(cell) + "/run.h5"; }
    std::string stateFile(const std::string& cell) const { return cellDir(cell) + "/cell.json"; }
    std::string logFile(const std::string& cell) const { return root + "/logs/" + cell + ".log"; }
};

/// The index: what `sweep run`, `status`, `aggregate` and the studio read.
struct SweepIndex {
    std::string name;
    std::vector<std::string> axisKeys;
    std::vector<SweepCell> cells;  ///< config is loaded from configYaml
    SweepStages stages;
    std::vector<SkippedCell> skipped;  ///< combinations left out (skip_refused)
};

/// Loads `<dir>/sweep.yaml`, expands it, and writes the index and each cell's config.yaml
/// (atomically). A cell whose run exists but whose config changed is refused (ConfigError
/// naming the cell): remove its folder to run it again.
SweepIndex prepareSweep(const std::string& dir);
/// Reads `<dir>/index.json` (Error(RunFile) naming the file when missing or damaged).
SweepIndex readSweepIndex(const std::string& dir);
/// A sweep folder: `dir` itself or its parent holding sweep.yaml.
std::string locateSweep(const std::string& pathOrDir);
/// Writes a text file of the sweep folder (the Slurm script, the submission record) through a
/// temporary file and a rename, so a reader never sees half of it. Error(Io) naming the path.
void writeSweepTextFile(const std::string& path, const std::string& text);

/// The state of one cell's work as its process writes it (cell.json) and its run files hold.
struct CellState {
    std::string stage;    ///< pending | train | eval | probe | done | failed | stopped
    std::string message;  ///< why it failed or stopped
    int exitCode = 0;
    std::string host;
    std::int64_t pid = 0;
    std::string updatedAt;
};
void writeCellState(const SweepPaths& paths, const std::string& cell, const CellState& state);
std::optional<CellState> readCellState(const SweepPaths& paths, const std::string& cell);

/// One line of `lengen sweep status`, read from the files (safe while cells run).
/// Where a cell stands, as `sweep status`, the executors and the studio read it. Ordered by
/// how much it needs attention (a grid square shows its worst cell).
/// Cancelled: `sweep cancel` ended it (or took it before it started); Requeued: the scheduler
/// holds it again after a checkpoint (its time limit, preemption, `scontrol requeue`).
enum class SweepCellState { Done, Pending, Cancelled, Stopped, Requeued, Running, Failed };
/// "done", "pending", "cancelled", "stopped", "requeued", "running", "failed" (tables, JSON).
const char* stateName(SweepCellState state);

struct CellStatus {
    const SweepCell* cell = nullptr;
    SweepCellState state = SweepCellState::Pending;
    std::string stage;  ///< train | eval | probe | done (what runs or ran last)
    std::int64_t step = 0, totalSteps = 0;
    double lastLoss = 0;  ///< NaN when nothing logged
    bool evalDone = false, probeDone = false;
    std::string message;
    std::string runFile;  ///< "" before the run exists
    /// The job that holds the cell, in the words of `lengen jobs` and the studio's Jobs panel
    /// (jobs.h; issue 73: one vocabulary, no translation): kind SweepCell, its holder (a `sweep
    /// run`'s or the cell's own "<host>:<pid>", or Slurm's "<array>_<cell>"; `scheduled` for
    /// Slurm), the scheduler's word (schedulerState), and its state — Running, Stopping once
    /// `sweep cancel` marked it, Queued while a live executor or the scheduler keeps it pending
    /// (waitingFor says why), an ended state otherwise. None while no executor ever held it.
    /// sweepStatus sets it where the cell's own process is alive (its state file names it);
    /// sweepJobStatus merges the submissions and squeue (sweep_jobs.h).
    std::optional<JobRecord> job;
    /// Whether a live executor or the scheduler keeps the cell pending (or requeued).
    bool queued() const { return job && job->state == JobState::Queued; }
    /// Who holds it ("" when nobody).
    std::string holder() const { return job ? job->holder : std::string(); }
};
std::vector<CellStatus> sweepStatus(const std::string& dir, const SweepIndex& index);

}  // namespace lengen::engine
