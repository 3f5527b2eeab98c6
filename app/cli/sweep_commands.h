#pragma once
// `lengen sweep …`: create a sweep folder, run its cells here (N at a time, as child
// processes), run one cell (what each child and each Slurm array task executes), and report
// where every cell stands. docs/sweep-format.md describes the folder; docs/cli.md the options.

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

int runSweepNew(const SweepNewArgs& args);
int runSweepRun(const SweepRunArgs& args);
int runSweepCell(const SweepCellArgs& args);
/// Exit 0 when every cell is done, 5 when one failed, 8 when some are pending, running or
/// stopped (and none failed).
int runSweepStatus(const std::string& dir, bool json);

}  // namespace lengen::cli
