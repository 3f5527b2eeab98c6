#pragma once
// Running a sweep (docs/sweep-format.md), below every front end: the CLI's `lengen sweep new |
// run | run-cell | submit | status` and the studio's Sweeps tab call these and nothing else.
// Qt-free, plain values in and out.
//
//   createSweep          writes a sweep folder (every cell validated first)
//   runSweepCell         one cell in this process: train or resume, then eval and probes
//   SweepExecutor        takes the unfinished cells (chooseCells, one rule for both): the local
//                        one runs them as child processes N at a time until they end or it is
//                        cancelled; the Slurm one writes a job array and returns once queued.
//                        Both record the job in the folder (jobs.json): sweep_jobs.h rebuilds
//                        it in any process for status, cancel and wait
//
// Stopping: a RunControl cancels the work in hand; a local executor passes exactly one SIGTERM
// to each running cell (each finishes its step and writes its checkpoint) and waits for them.

#include <chrono>
#include <csignal>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lengen/engine/analysis.h"
#include "lengen/engine/jobs.h"
#include "lengen/engine/observer.h"
#include "lengen/engine/run_control.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_jobs.h"

namespace lengen::engine {

class CoreBudget;

/// What `lengen sweep new` (and the studio's New sweep) asks for.
struct NewSweep {
    RunConfig base;                       ///< one run (one max_length value)
    std::string baseSource;               ///< where it came from (base.yaml's comment)
    std::vector<std::string> tasks, pes;  ///< `task` and `pe` axes (empty: none)
    int seeds = 1;                        ///< seed axis 1..seeds
    std::vector<std::pair<std::string, std::vector<std::string>>> sets;  ///< key-path axes
    bool eval = true;
    std::vector<std::string> evalMethods{"standard", "ood_length"};
    std::vector<std::string> evalInterventions;  ///< as `stages.eval.interventions`
    int evalPrompts = 1280;
    bool probe = false;
    bool skipRefused = false;  ///< sweep.yaml's skip_refused
    std::string outDir;
};
/// "model.num_hidden_layers=4,6" -> (key, values): a config-key axis as the CLI's --set and the
/// studio's New sweep take it. Error(Usage) when it is not KEY=V1,V2,….
std::pair<std::string, std::vector<std::string>> parseAxisSetting(const std::string& setting);

/// The one run a sweep's base config stands for (a cell is one run): the config's only run, or
/// ConfigError naming `source` and model.max_length when it lists several values (or none).
/// The CLI's `sweep new` and the studio's New sweep both ask this.
RunConfig sweepBaseRun(const std::vector<RunConfig>& runs, const std::string& source);

/// Writes the sweep folder beside `outDir` and renames it into place once every cell loaded
/// and validated (a bad axis leaves nothing). Error(Usage) when outDir exists and is not an
/// empty folder; ConfigError naming the cell and key for a cell that does not load.
SweepIndex createSweep(const NewSweep& request);
/// One line per distinct curriculum shortfall among the cells (curriculumShortfall): "4 cells
/// (001-…, …): the curriculum reaches 9 points at step 1600; with 1500 steps training ends at
/// 7 points". Empty when every cell trains to its curriculum's end. `sweep new` and the
/// studio's New sweep say these (issue 52).
std::vector<std::string> sweepCurriculumWarnings(const SweepIndex& index);
/// "000-rope-s1, 001-nope-s1, …": the first `most` cell names, as messages list them.
std::string cellNamesText(const std::vector<std::string>& cells, std::size_t most = 3);

struct CellRunOptions {
    int threads = 0;           ///< 0 = all cores
    std::string device;        ///< "" = cuda if available, else cpu
    SessionSwitches switches;  ///< for the cell's training and analyses
};
/// Failed: only runSweepMembers reports it (its cell.json says why); runSweepCell rethrows.
enum class CellOutcome { Done, Stopped, Failed };
/// Runs cell `index` of the sweep in `dir` here: trains its run (or resumes its checkpoint, or
/// skips a finished one), then the eval and probe stages, writing cell.json at every stage.
/// Stopped: `control` was cancelled (the checkpoint or the finished analyses are stored). A
/// failure is written to cell.json and rethrown. `say` gets one-line notes ("trained already").
CellOutcome runSweepCell(const std::string& dir, int index, const CellRunOptions& options,
                         RunControl& control, TrainObserver& training, AnalysisObserver& analysis,
                         const std::function<void(const std::string&)>& say = {});

/// Runs cells of the sweep in `dir` here, the fresh ones of one config (seed apart) trained as
/// members of one batched model (trainMembers; issue 58), or the stopped ones of one config at
/// one checkpoint step resumed as one (resumeMembers; issue 71), then each one's eval and probe
/// stages; any other cell runs as runSweepCell does, after them. Each cell's cell.json says
/// how it ended; a member that fails or is stopped leaves the others running. Throws only when
/// nothing could train (the members' setup).
std::vector<CellOutcome> runSweepMembers(const std::string& dir, const std::vector<int>& indices,
                                         const CellRunOptions& options, RunControl& control,
                                         TrainObserver& training, AnalysisObserver& analysis,
                                         const std::function<void(const std::string&)>& say = {});

/// How `sweep run --members` resumes the stopped cells named (issue 71), a line per group of
/// one config: "A, B together from step S" where they stopped at one step, "C alone from step
/// S (the other stopped cells of its config stopped at step T; …)" where not. Cells that run
/// alone anyway (failed, an encoding members do not train) or start over are left out.
std::vector<std::string> stoppedMembersPlan(const std::string& dir,
                                            const std::vector<std::string>& stoppedCells);
/// The same over a sweep's states: the cells the next run resumes, those stopped (Ctrl-C,
/// `lengen stop`) and those `sweep cancel` stopped (cancelled), as chooseCells takes them.
std::vector<std::string> stoppedMembersPlan(const std::string& dir,
                                            const std::vector<CellStatus>& cells);

/// What an executor reports while it works (from the thread that called submit).
class SweepObserver {
public:
    virtual ~SweepObserver() = default;
    /// One line: what starts, ends, fails and why, what was submitted.
    virtual void onMessage(const std::string& /*line*/) {}
    /// `ended` of the `total` cells this executor took have ended; ETA in seconds (< 0 unknown).
    virtual void onCells(int /*ended*/, int /*total*/, double /*etaSeconds*/) {}
    /// Every ~30 s while cells run: "cell stage step/total" of each running cell.
    virtual void onRunning(const std::string& /*line*/) {}
};

struct SweepRunSummary {
    int cells = 0;                    ///< cells in the sweep
    int done = 0;                     ///< done before
    int elsewhere = 0;                ///< running under another executor
    std::vector<std::string> heldBy;  ///< who holds those: "<host>:<pid>", Slurm's "<job>_<task>"
    int failedBefore = 0;             ///< failed and left alone (no retry)
    int taken = 0;                    ///< cells this executor took
    int finished = 0, stopped = 0, failed = 0;  ///< of those (local executor)
    int cancelledHere = 0;                      ///< taken, then skipped: `sweep cancel` marked them
    bool cancelled = false;
    std::string jobId;  ///< the scheduler's job (Slurm)
};
/// Who holds the cells left to others, as every message names them: "held by host:1234" or
/// "held by host:1234, 77_3" ("" when none is known).
std::string heldByText(const SweepRunSummary& summary);

/// The one choice of cells to run, for every executor: pending, stopped and cancelled cells
/// (a new run takes a cancelled cell again; failed ones only with `retryFailed`). Done cells,
/// cells another process runs or holds queued, and requeued ones are counted into `summary`
/// and left. `statuses` as sweepJobStatus gives them.
std::vector<const SweepCell*> chooseCells(const std::vector<CellStatus>& statuses, bool retryFailed,
                                          SweepRunSummary& summary);

/// Takes a sweep's unfinished cells (pending and stopped; failed ones with retryFailed).
class SweepExecutor {
public:
    virtual ~SweepExecutor() = default;
    /// The local executor returns when every cell it took has ended or `control` was cancelled;
    /// a scheduler's once the cells are queued. Error(Scheduler) when the scheduler is missing,
    /// dead or refuses.
    virtual SweepRunSummary submit(RunControl& control, SweepObserver& observer) = 0;
    /// Every cell's state, its job merged in (sweepJobStatus: the files, and squeue when the
    /// sweep was submitted to Slurm); the statuses point into this executor's index.
    std::vector<CellStatus> states() const { return sweepJobStatus(m_dir, m_index); }
    const SweepIndex& index() const { return m_index; }

protected:
    /// Reads and validates the sweep (every cell; prepareSweep).
    explicit SweepExecutor(const std::string& dir);
    std::string m_dir;
    SweepIndex m_index;
};

struct LocalSweepOptions {
    int jobs = 0;           ///< cells at once; 0 = one per core
    int threadsPerJob = 0;  ///< 0 = cores / jobs
    std::string device;     ///< every cell's --device when `devices` is empty
    /// The devices the cells share: each cell starts on the one running the fewest cells, the
    /// first of those in this order. Empty: resolveSweepDevices(device) (every GPU for "cuda").
    std::vector<std::string> devices;
    /// Cells at once on each device (`--cells-per-device`): jobs = K x devices; 0 = `jobs`.
    /// Giving both is a usage error.
    int cellsPerDevice = 0;
    /// Start a private CUDA MPS daemon for the cells' lifetime (sweep/mps.h). Every device must
    /// then be a GPU.
    bool mps = false;
    std::string mpsControl;  ///< "" = nvidia-cuda-mps-control on PATH
    bool retryFailed = false;
    /// Up to this many cells of one config (seed apart; fresh, or stopped at one step) in one
    /// child process, trained as members of one batched model (`sweep run-cell DIR I J …`;
    /// issues 58 and 71). 1: a cell a process.
    int members = 1;
    std::string executable;  ///< "" = lengenExecutable()
    /// Stop requests counted by a signal handler (the CLI's Ctrl-C): one SIGTERM to every
    /// running cell per request, so a second Ctrl-C makes them leave at once. nullptr: the
    /// control's cancel is the one request.
    const volatile std::sig_atomic_t* stopCount = nullptr;
    /// The cores this front end's jobs share (the studio's Concurrent jobs): each cell takes up
    /// to its threads before it starts (and runs with as many threads as it took) and gives
    /// them back when it ends, waiting while none is free (said once). nullptr: only `jobs`
    /// limits the cells.
    std::shared_ptr<CoreBudget> cores;
    /// `sweep cancel` marks written before this time are cleared as the executor takes their
    /// cells (a new run takes a cancelled cell again); later ones hold. Default: when submit
    /// begins. `lengen sweep run` gives its process's start (processStartTime()): a cancel
    /// typed while it loads still holds (issue 54).
    std::optional<std::chrono::system_clock::time_point> clearMarksBefore;
};
/// When this process started (/proc/self/stat), or now where that cannot be read.
std::chrono::system_clock::time_point processStartTime();
std::unique_ptr<SweepExecutor> makeLocalExecutor(const std::string& dir, LocalSweepOptions options);

struct SlurmSweepOptions {
    std::string partition;  ///< "" = the cluster's default
    std::string time;       ///< Slurm time limit ("2:00:00"); "" = the partition's
    int gpusPerJob = 0;
    int cpusPerJob = 0;                   ///< 0 = 1 (each cell runs with this many threads)
    int maxParallel = 0;                  ///< array throttle %K; 0 = none
    int signalSeconds = 120;              ///< USR1 this long before the time limit
    std::vector<std::string> sbatchArgs;  ///< extra `#SBATCH` lines
    std::string device;
    std::string executable;  ///< what tasks run; "" = lengenExecutable()
    bool retryFailed = false;
};
std::unique_ptr<SweepExecutor> makeSlurmExecutor(const std::string& dir, SlurmSweepOptions options);
/// The job script submit would write for the unfinished cells ("" when none): `--dry-run`.
std::string slurmJobScript(const std::string& dir, SlurmSweepOptions options);
/// What squeue says of the sweep's submitted jobs: cell index -> Slurm state ("RUNNING",
/// "PENDING", …); `note` (when given) names the jobs, or why the scheduler gave no answer.
std::map<int, std::string> slurmCellStates(const std::string& dir, std::string* note);

/// The `lengen` executable cells run: $LENGEN_CLI when set, else beside this program (the
/// CLI's launcher, or lengen-core), or in ../cli beside the studio, else on PATH. "" when none.
std::string lengenExecutable();

}  // namespace lengen::engine
