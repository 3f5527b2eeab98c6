#pragma once
// The `lengen` subcommands. Each returns the process exit code; engine errors propagate as
// lengen::engine::Error and are turned into messages and exit codes by main().

#include <cstdint>
#include <optional>
#include <string>

namespace lengen::cli {

struct TrainArgs {
    std::string config;
    std::string resume;
    std::string outDir = "runs";
    std::optional<std::uint64_t> seed;
    std::optional<std::int64_t> steps;
    std::string device;
    std::string precision;  ///< "" = fp32, or the run's own on --resume
    int threads = 0;
    bool quiet = false;
};

int runTrain(const TrainArgs& args);
int runValidate(const std::string& config, bool quiet);
/// `pointwiseRows` > 0: also print the per-position metric averaged over the last rows of the log.
int runInfo(const std::string& run, bool listParameters, int pointwiseRows);

}  // namespace lengen::cli
