// `lengen`: the headless command line over the engine. Thin: parse, dispatch, map errors to
// exit codes (docs/cli.md).

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "commands.h"
#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/version.h"

using namespace lengen;

namespace {

std::string exitCodeHelp()
{
    return "Exit codes: 0 ok, 1 internal error, 2 config error, 3 run-file error, 4 I/O error,\n"
           "5 run failed (NaN loss, device), 64 usage error, 130 interrupted (checkpoint "
           "written).";
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app{"lengen - train and inspect in-context function-learning models "
                 "(LenGen Studio command line)"};
    app.set_version_flag("--version", std::string("lengen ") + engine::versionString());
    app.footer(exitCodeHelp());
    app.require_subcommand(1);

    cli::TrainArgs train;
    std::uint64_t seed = 0;
    std::int64_t steps = 0;
    auto* trainCmd = app.add_subcommand("train", "Train a model from a YAML run config, or "
                                                 "continue a stopped run with --resume");
    trainCmd->add_option("config", train.config, "Run config (YAML, !include allowed)")
        ->check(CLI::ExistingFile);
    trainCmd->add_option("--resume", train.resume, "Continue this run (folder or run.h5)");
    trainCmd->add_option("--out", train.outDir, "Root folder for new runs")->capture_default_str();
    auto* seedOpt = trainCmd->add_option("--seed", seed, "Random seed (default: config `seed`, "
                                                         "else random; stored in the run)");
    auto* stepsOpt = trainCmd->add_option("--steps", steps, "Override training.max_steps")
                         ->check(CLI::PositiveNumber);
    trainCmd->add_option("--device", train.device, "cpu, cuda or cuda:N (default: cuda if "
                                                   "available, else cpu)");
    trainCmd->add_option("--threads", train.threads, "CPU threads (default: all cores)")
        ->check(CLI::NonNegativeNumber);
    trainCmd->add_flag("--quiet,-q", train.quiet, "No progress output");

    std::string validateConfig;
    bool validateQuiet = false;
    auto* validateCmd = app.add_subcommand(
        "validate", "Check a run config and print it fully resolved (as stored in runs)");
    validateCmd->add_option("config", validateConfig, "Run config (YAML)")->required();
    validateCmd->add_flag("--quiet,-q", validateQuiet, "Only report problems");

    std::string infoRun;
    bool infoParams = false;
    auto* infoCmd = app.add_subcommand("info", "Summarise a run file");
    infoCmd->add_option("run", infoRun, "Run folder or run.h5")->required();
    infoCmd->add_flag("--parameters,-p", infoParams, "List every checkpoint tensor and shape");
    int infoPointwise = 0;
    infoCmd->add_option("--pointwise", infoPointwise,
                        "Print the per-position metric, mean of the last N logged steps")
        ->check(CLI::NonNegativeNumber);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : engine::exitCodeFor(engine::ErrorKind::Usage);
    }

    try {
        if (*trainCmd) {
            if (train.config.empty() == train.resume.empty()) {
                std::fprintf(stderr, "lengen train: give either a CONFIG or --resume RUN\n");
                return engine::exitCodeFor(engine::ErrorKind::Usage);
            }
            if (*seedOpt)
                train.seed = seed;
            if (*stepsOpt)
                train.steps = steps;
            return cli::runTrain(train);
        }
        if (*validateCmd)
            return cli::runValidate(validateConfig, validateQuiet);
        if (*infoCmd)
            return cli::runInfo(infoRun, infoParams, infoPointwise);
    } catch (const engine::Error& e) {
        std::fprintf(stderr, "lengen: error: %s\n", e.what());
        if (!e.detail().empty())
            std::fprintf(stderr, "  (%s)\n", e.detail().c_str());
        return engine::exitCodeFor(e.kind());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lengen: internal error: %s\n", e.what());
        return engine::exitCodeFor(engine::ErrorKind::Internal);
    }
    return 0;
}
