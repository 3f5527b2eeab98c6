#pragma once
// `lengen sweep …`: create a sweep folder, run its cells here (N at a time, as child
// processes), run one cell (what each child and each Slurm array task executes), and report
// where every cell stands. docs/sweep-format.md describes the folder; docs/cli.md the options.

#include <map>
#include <string>
#include <vector>

#include "lengen/engine/sweep_aggregate.h"
#include "lengen/engine/sweep_run.h"

#include "command_registry.h"

namespace lengen::cli {

/// `sweep status` / `sweep run` exit code: cells are pending, running or stopped; none failed.
constexpr int kSweepUnfinished = 8;

// The options bind straight to the engine's structs (their defaults are the engine's): the CLI
// adds only what is its own (the folder, the raw --set text, quiet, --dry-run).
struct SweepNewArgs {
    std::string config;             ///< base run config
    std::vector<std::string> sets;  ///< "key=v1,v2" (one axis each), parsed into request.sets
    engine::NewSweep request;       ///< base, baseSource and sets filled from the above
    bool quiet = false;
};

struct SweepRunArgs {
    std::string dir;
    engine::LocalSweepOptions options;  ///< stopCount set by runSweepRun
    bool quiet = false;
};

struct SweepCellArgs {
    std::string dir;
    std::vector<int> indices;
    engine::CellRunOptions options;
    bool quiet = false;
};

struct SweepSubmitArgs {
    std::string dir;
    engine::SlurmSweepOptions options;
    bool dryRun = false;
};

/// `sweep aggregate`: the engine's options as the flags set them (their defaults are the
/// engine's), the band by name.
struct SweepAggregateArgs {
    std::string dir;
    engine::AggregateOptions options;  ///< groupBy empty: every axis but seed
    std::string band;                  ///< "" = options.band (auto), else bandKindFromName's names
    std::string method;                ///< table printed ("" = every method)
    bool quiet = false;
};

int runSweepNew(const SweepNewArgs& args);
int runSweepRun(const SweepRunArgs& args, const Session& session);
int runSweepCell(const SweepCellArgs& args, const Session& session);
/// Exit 0 submitted (the job id on stdout) or nothing to do; 9 when sbatch is missing, does not
/// answer or refuses the job.
int runSweepSubmit(SweepSubmitArgs args, const Session& session);
/// Exit 0 when every cell is done, 5 when one failed, 8 when some are pending, running or
/// stopped (and none failed).
int runSweepStatus(const std::string& dir, bool json);
/// One row per cell: its axes (or `columns`), then its results (run_table.h); a cell not
/// started has empty results. Exit 0.
int runSweepTable(const std::string& dir, const std::vector<std::string>& columns,
                  const std::string& format);
/// Cancels cells (all unfinished when `cells` is empty) from any shell: sweep_jobs.h. Exit 0;
/// 124 when `wait` > 0 and some still run after it; 9 when scancel fails.
int runSweepCancel(const std::string& dir, const std::vector<std::string>& cells, double wait);
/// Writes <sweep>/aggregate.h5 and prints each method's table. Exit 0; 8 when some cells have
/// no results yet (the file holds the others).
int runSweepAggregate(const SweepAggregateArgs& args);

}  // namespace lengen::cli
