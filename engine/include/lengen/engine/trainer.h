#pragma once
// Synchronous training entry points. Torch stays behind this header: callers pass plain config
// structs, a RunControl to steer, and an observer to hear progress.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lengen/engine/config.h"
#include "lengen/engine/observer.h"
#include "lengen/engine/run_control.h"
#include "lengen/engine/session.h"

namespace lengen::engine {

struct TrainOptions {
    std::string outDir = "runs";           ///< root of <task>/dim_a-b/<date>/<id>/run.h5
    std::optional<std::uint64_t> seed;     ///< overrides config `seed`; random if neither
    std::optional<std::int64_t> maxSteps;  ///< overrides training.max_steps (stored in the run)
    std::string device;                    ///< "cpu", "cuda", "cuda:N"; "" = cuda if available
    int threads = 0;                       ///< intra-op CPU threads; 0 = library default
    /// Matrix-product precision on a GPU: "fp32", "tf32" or "bf16" (autocast); a CPU run
    /// takes fp32 only. Stored in the run (root attribute `precision`); "" = fp32 for a new
    /// run, the run's stored precision for a resume. See docs/gpu.md.
    std::string precision;
    SessionSwitches switches;  ///< layer path, graphs, thread policy (session.h)
    std::string runId;         ///< "" = random 8 hex digits
    /// "" = <outDir>/<task>/dim_a-b/<date>/<run id>/; else the run goes to exactly this folder
    /// (a sweep's cells/<cell>/)
    std::string runDir;
    /// Sweep membership stored in the run (root attributes sweep, sweep_cell, sweep_axes).
    std::string sweepName, sweepCell, sweepAxes;
};

/// Train one run (one max_length value) from scratch. Writes run.h5 as it goes.
/// Throws Error (Runtime for NaN loss / device problems, Io for unwritable output).
RunSummary train(RunConfig config, const TrainOptions& options, RunControl& control,
                 TrainObserver& observer);

/// Continue a stopped run from its latest checkpoint; the continued log and final weights are
/// identical to an uninterrupted run (same device and thread count). Options' seed/maxSteps
/// are ignored (the run's own are used); device/threads apply.
RunSummary resume(const std::string& runFile, const TrainOptions& options, RunControl& control,
                  TrainObserver& observer);

struct MemberOutcome;

/// One run of several trained as one batched model (trainMembers).
struct MemberRun {
    std::uint64_t seed = 0;
    std::string runDir;                 ///< "" = <outDir>/<task>/dim_a-b/<date>/<run id>/
    std::string runId;                  ///< "" = random
    RunControl* control = nullptr;      ///< stops this member alone (null: only `all` stops it)
    TrainObserver* observer = nullptr;  ///< null: none
    std::string sweepCell, sweepAxes;   ///< stored in its run, as TrainOptions' are
    /// Called once, on the training thread, as this member leaves (stopped, failed, or done)
    /// and lets its run go, while the others may train on.
    std::function<void(const MemberOutcome&)> onLeft;
};

/// What became of one member: its summary, or why it failed ("" = it did not).
struct MemberOutcome {
    RunSummary summary;
    std::string error;
};

/// Trains runs of one config that differ only in seed as one batched model (issue 58): every
/// member's weights stacked along a leading member dimension, one forward and backward for
/// all, each member with its own data stream, initialisation, gradient clipping, AdamW state,
/// run file, checkpoints, status and stop. A member matches its solo run within float rounding
/// (the module path's math, batched). A member whose loss is not finite, or that is stopped,
/// leaves; the others go on. Each run file is an ordinary run: `resume` continues it alone.
/// Throws Error(Config) for configs this does not train (MemberModel::refusal: Llama with a
/// position encoding without weights of its own, fixed positions).
std::vector<MemberOutcome> trainMembers(RunConfig config, const std::vector<MemberRun>& members,
                                        const TrainOptions& options, RunControl& all);

/// Why runs of `config` cannot train as members ("" = they can).
std::string membersRefusal(const RunConfig& config);
/// Whether two configs describe the same run but for the seed (what members share).
bool sameRunButSeed(const RunConfig& a, const RunConfig& b);

/// Continues stopped runs of one config that differ only in seed (a `trainMembers` run that
/// was stopped, say) as members of one batched model, each from its latest checkpoint: their
/// logs and weights are those of an uninterrupted members run, bit for bit. `hooks[k]`
/// (optional) gives member k its own control, observer and onLeft (its seed and folder are the
/// run's own). Error(Usage) naming the run that has another config, stopped at another step
/// or has finished; Error(Config) for a config members do not train.
std::vector<MemberOutcome> resumeMembers(const std::vector<std::string>& runFiles,
                                         const TrainOptions& options, RunControl& all,
                                         const std::vector<MemberRun>& hooks = {});

/// "cpu" or "cuda:0" etc. for a requested device string ("" = best available).
std::string resolveDevice(const std::string& requested);

/// The devices a sweep's cells share, from `sweep run --device`: "cuda" is every visible GPU
/// (cuda:0 … cuda:G-1), a comma list names its own ("cuda:0,cuda:2"), "cpu" the CPU; ""
/// (auto) every GPU, or {""} (each cell's default, the CPU) where there is none. Throws
/// Error(Config) for a GPU that is not there, Error(Usage) for a name given twice or unknown.
std::vector<std::string> resolveSweepDevices(const std::string& requested);

}  // namespace lengen::engine
