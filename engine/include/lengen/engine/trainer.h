#pragma once
// Synchronous training entry points. Torch stays behind this header: callers pass plain config
// structs, a RunControl to steer, and an observer to hear progress.

#include <cstdint>
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

/// "cpu" or "cuda:0" etc. for a requested device string ("" = best available).
std::string resolveDevice(const std::string& requested);

/// The devices a sweep's cells share, from `sweep run --device`: "cuda" is every visible GPU
/// (cuda:0 … cuda:G-1), a comma list names its own ("cuda:0,cuda:2"), "cpu" the CPU; ""
/// (auto) every GPU, or {""} (each cell's default, the CPU) where there is none. Throws
/// Error(Config) for a GPU that is not there, Error(Usage) for a name given twice or unknown.
std::vector<std::string> resolveSweepDevices(const std::string& requested);

}  // namespace lengen::engine
