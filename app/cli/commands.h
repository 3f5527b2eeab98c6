#pragma once
// The `lengen` subcommands. Each returns the process exit code; engine errors propagate as
// lengen::engine::Error and are turned into messages and exit codes by main().

#include <cstdint>
#include <optional>
#include <string>

#include "command_registry.h"
#include "lengen/engine/trainer.h"

namespace lengen::cli {

/// `train`: the engine's options as the flags set them (their defaults are the engine's), the
/// config or the run to resume.
struct TrainArgs {
    std::string config;
    std::vector<std::string> resume;  ///< one run, or several to continue as members
    engine::TrainOptions options;     ///< switches: the session's, set by runTrain
    bool quiet = false;
    /// > 1: that many runs of the config as one batched model (seeds seed, seed + 1, ...).
    int members = 1;
};

int runTrain(const TrainArgs& args, const Session& session);
int runValidate(const std::string& config, bool quiet);
/// `pointwiseRows` > 0: also print the per-position metric averaged over the last rows of the log.
int runInfo(const std::string& run, bool listParameters, int pointwiseRows);

}  // namespace lengen::cli
