#pragma once
// The `lengen` subcommands. Each returns the process exit code; engine errors propagate as
// lengen::engine::Error and are turned into messages and exit codes by main().

#include <cstdint>
#include <optional>
#include <string>

#include "command_registry.h"
#include "lengen/engine/config.h"
#include "lengen/engine/trainer.h"

namespace CLI {
class App;
}

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
/// `train`'s flags in the table (train_command.cpp, lengen-core only; addTrainCommands adds it
/// first).
void addTrainCommand(CLI::App& app, CommandTable& table);
/// The loader's warnings, then each run's curriculum shortfall at the steps it will train
/// (`steps`: `--steps`): a run whose max_steps ends before its curriculum trains shorter prompts
/// than points.end, which its figures then mark (issue 52). On stderr.
void printWarnings(const engine::LoadedConfig& loaded,
                   std::optional<std::int64_t> steps = std::nullopt);
int runValidate(const std::string& config, bool quiet);
/// `pointwiseRows` > 0: also print the per-position metric averaged over the last rows of the log.
int runInfo(const std::string& run, bool listParameters, int pointwiseRows);

}  // namespace lengen::cli
