#pragma once
// `lengen sweep …`: create a sweep folder, run its cells here (N at a time, as child
// processes), run one cell (what each child and each Slurm array task executes), and report
// where every cell stands. docs/sweep-format.md describes the folder; docs/cli.md the options.

#include <map>
#include <string>
#include <vector>

namespace lengen::cli {

/// `sweep status` / `sweep run` exit code: cells are pending, running or stopped; none failed.
constexpr int kSweepUnfinished = 8;

struct SweepNewArgs {
    std::string config;                  ///< base run config
    std::vector<std::string> pes;        ///< `pe` axis (empty: none)
    std::vector<std::string> tasks;      ///< `task` axis (empty: none)
    int seeds = 1;                       ///< seeds 1..n
    std::vector<std::string> sets;       ///< "key=v1,v2" (one axis each)
    bool eval = true;
    std::vector<std::string> evalMethods{"standard", "ood_length"};
    std::vector<std::string> evalInterventions;
    int evalPrompts = 1280;
    bool probe = false;
    std::string outDir;
    bool quiet = false;
};

struct SweepRunArgs {
    std::string dir;
    int jobs = 0;                        ///< cells at once; 0 = the default (docs/cli.md)
    int threadsPerJob = 0;               ///< 0 = cores / jobs
    std::string device;
    bool retryFailed = false;
    bool quiet = false;
};

struct SweepCellArgs {
    std::string dir;
    int index = 0;
    int threads = 0;
    std::string device;
    bool quiet = false;
};

struct SweepSubmitArgs {
    std::string dir;
    std::string partition;               ///< "" = the cluster's default partition
    std::string time;                    ///< Slurm time limit ("2:00:00"); "" = the partition's
    int gpusPerJob = 0;
    int cpusPerJob = 0;                  ///< 0 = 1 (each cell runs with this many threads)
    int maxParallel = 0;                 ///< array throttle %K; 0 = none
    int signalSeconds = 120;             ///< USR1 this long before the time limit
    std::vector<std::string> sbatchArgs; ///< extra `#SBATCH` lines, e.g. "--account=lab"
    std::string device;
    std::string lengen;                  ///< the executable tasks run ("" = this one)
    bool retryFailed = false;
    bool dryRun = false;
};

struct SweepAggregateArgs {
    std::string dir;
    std::vector<std::string> by;         ///< axes to group by (empty: all but seed)
    int bootstrapTrials = 1000;
    std::string method;                  ///< table printed ("" = every method)
    bool quiet = false;
};

int runSweepNew(const SweepNewArgs& args);
int runSweepRun(const SweepRunArgs& args);
int runSweepCell(const SweepCellArgs& args);
/// Exit 0 submitted (the job id on stdout) or nothing to do; 9 when sbatch is missing, does not
/// answer or refuses the job.
int runSweepSubmit(SweepSubmitArgs args);
/// Exit 0 when every cell is done, 5 when one failed, 8 when some are pending, running or
/// stopped (and none failed).
int runSweepStatus(const std::string& dir, bool json);
/// Cancels cells (all unfinished when `cells` is empty) from any shell: sweep_jobs.h. Exit 0;
/// 124 when `wait` > 0 and some still run after it; 9 when scancel fails.
int runSweepCancel(const std::string& dir, const std::vector<std::string>& cells, double wait);
/// Writes <sweep>/aggregate.h5 and prints each method's table. Exit 0; 8 when some cells have
/// no results yet (the file holds the others).
int runSweepAggregate(const SweepAggregateArgs& args);


}  // namespace lengen::cli
