// `lengen train`: a config, or runs to resume (one, or several as members of one batched
// model), with terminal progress. Only in lengen-core; validate, info, stop and jobs are in
// commands.cpp, which lengen-light holds too.

#include "commands.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>

#include "command_registry.h"
#include "common_options.h"
#include "early_signals.h"
#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/jobs.h"
#include "lengen/engine/run_control.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/trainer.h"
#include "option_ranges.h"
#include "progress.h"

namespace lengen::cli {

namespace {

int finishRun(const engine::RunSummary& summary, ProgressReporter& progress)
{
    progress.finish();
    std::printf("%s\n", summary.runFile.c_str());
    if (summary.outcome == engine::RunOutcome::Cancelled) {
        std::fprintf(stderr,
                     "stopped after %lld steps; checkpoint written. Continue with: "
                     "lengen train --resume %s\n",
                     static_cast<long long>(summary.stepsDone), summary.runFile.c_str());
        return engine::exitCodeFor(engine::ErrorKind::Interrupted);
    }
    std::fprintf(stderr, "finished %lld steps in %s, final loss %.4f\n",
                 static_cast<long long>(summary.stepsDone),
                 formatDuration(summary.wallSeconds).c_str(), summary.finalLoss);
    return 0;
}

// One line per member on stderr and its run file on stdout; the exit code of the worst.
int reportMembers(const std::vector<engine::MemberOutcome>& out)
{
    int code = 0;
    std::string stopped;  // the stopped members' files, to continue together
    for (size_t k = 0; k < out.size(); ++k) {
        const auto& o = out[k];
        std::printf("%s\n", o.summary.runFile.c_str());
        const auto seed =
            static_cast<unsigned long long>(engine::readRunInfo(o.summary.runFile).seed);
        if (!o.error.empty()) {
            std::fprintf(stderr, "member %zu (seed %llu) failed: %s\n", k, seed, o.error.c_str());
            code = engine::exitCodeFor(engine::ErrorKind::Runtime);
        } else if (o.summary.outcome == engine::RunOutcome::Cancelled) {
            std::fprintf(stderr, "member %zu (seed %llu) stopped after %lld steps\n", k, seed,
                         static_cast<long long>(o.summary.stepsDone));
            stopped += " " + o.summary.runFile;
            if (code == 0)
                code = engine::exitCodeFor(engine::ErrorKind::Interrupted);
        } else {
            std::fprintf(stderr, "member %zu (seed %llu) finished %lld steps, final loss %.4f\n", k,
                         seed, static_cast<long long>(o.summary.stepsDone), o.summary.finalLoss);
        }
    }
    if (!stopped.empty())
        std::fprintf(stderr,
                     "checkpoints written; continue them together with: lengen train "
                     "--resume%s\n",
                     stopped.c_str());
    return code;
}

void cpuMembersNote(const engine::TrainOptions& options, bool quiet)
{
    if (engine::resolveDevice(options.device) == "cpu" && !quiet)
        std::fprintf(stderr, "note: on the CPU members compute op by op, without the fused "
                             "layers; separate runs are faster there (bench/members.sh). "
                             "Members pay off on a GPU.\n");
}

// `train CONFIG --members K`: K runs as one batched model; progress follows the first.
int trainMembers(const engine::RunConfig& run, const TrainArgs& args,
                 const engine::TrainOptions& options, engine::RunControl& control,
                 ProgressReporter& progress)
{
    const std::uint64_t base = options.seed ? *options.seed
                               : run.seed   ? *run.seed
                                            : std::random_device{}();
    std::vector<engine::MemberRun> members(static_cast<size_t>(args.members));
    for (size_t k = 0; k < members.size(); ++k)
        members[k].seed = base + k;
    members.front().observer = &progress;
    cpuMembersNote(options, args.quiet);
    const auto out = engine::trainMembers(run, members, options, control);
    progress.finish();
    return reportMembers(out);
}

}  // namespace

int runTrain(const TrainArgs& args, const Session& session)
{
    engine::RunControl control;
    // First Ctrl-C: finish the current step, write a checkpoint, exit 130. Second: leave now.
    interruptsStop(control, true);
    ProgressReporter progress(ProgressReporter::detect(args.quiet));
    engine::TrainOptions options = args.options;
    options.switches = session.switches;
    try {
        if (args.resume.size() == 1)
            return finishRun(engine::resume(args.resume.front(), options, control, progress),
                             progress);
        if (args.resume.size() > 1) {  // several runs: members of one batched model
            cpuMembersNote(options, args.quiet);
            std::vector<engine::MemberRun> hooks(1);
            hooks.front().observer = &progress;  // progress follows the first
            const auto out = engine::resumeMembers(args.resume, options, control, hooks);
            progress.finish();
            return reportMembers(out);
        }
        const engine::LoadedConfig loaded = engine::loadConfigFile(args.config);
        printWarnings(loaded, args.options.maxSteps);
        int code = 0;
        for (const auto& run : loaded.runs) {
            code = args.members > 1
                       ? trainMembers(run, args, options, control, progress)
                       : finishRun(engine::train(run, options, control, progress), progress);
            if (code != 0)
                break;
        }
        return code;
    } catch (...) {
        progress.finish();
        throw;
    }
}

// `train CONFIG` or `train --resume RUN`.
void addTrainCommand(CLI::App& app, CommandTable& table)
{
    struct Train {
        TrainArgs args;
        std::uint64_t seed = 0;
        std::int64_t steps = 0;
        CLI::Option* seedOpt = nullptr;
        CLI::Option* stepsOpt = nullptr;
    };
    auto t = std::make_shared<Train>();
    auto* train = app.add_subcommand("train", "Train a model from a YAML run config, or continue "
                                              "a stopped run with --resume");
    // No CLI11 ExistingFile check: the config reader names a missing file or a folder as it
    // names any other damaged config, exit 2 (docs/cli.md, "Damaged files"), not 64.
    train->add_option("config", t->args.config, "Run config (YAML, !include allowed)");
    train->add_option("--resume", t->args.resume,
                      "Continue this run (folder or run.h5); several runs of one config that "
                      "differ in seed continue as members of one batched model");
    train->add_option("--out", t->args.options.outDir, "Root folder for new runs")
        ->capture_default_str();
    t->seedOpt = train
                     ->add_option("--seed", t->seed,
                                  "Random seed (default: config `seed`, "
                                  "else random; stored in the run)")
                     ->check(seedRange());
    t->stepsOpt = train->add_option("--steps", t->steps, "Override training.max_steps")
                      ->check(inRange(1, 1e9));
    addDeviceOption(train, t->args.options.device);
    train
        ->add_option("--precision", t->args.options.precision,
                     "Matrix products on a GPU: fp32, tf32 or bf16 (autocast); stored in the run. "
                     "Default fp32, and with --resume the run's own; docs/gpu.md")
        ->check(CLI::IsMember({"fp32", "tf32", "bf16"}));
    addThreadsOption(train, t->args.options.threads);
    addQuietFlag(train, t->args.quiet);
    train
        ->add_option("--members", t->args.members,
                     "Train K runs of the config as one batched model, seeds SEED .. SEED+K-1 "
                     "(one run file each; Llama with a position encoding without weights)")
        ->check(inRange(1, 64));
    table.add(train, [t](const Session& session) {
        if (t->args.config.empty() == t->args.resume.empty()) {
            std::fprintf(stderr, "lengen train: give either a CONFIG or --resume RUN\n");
            return engine::exitCodeFor(engine::ErrorKind::Usage);
        }
        if (t->args.members > 1 && !t->args.resume.empty()) {
            std::fprintf(stderr, "lengen train: --members trains new runs; give --resume the "
                                 "members' runs to continue them together\n");
            return engine::exitCodeFor(engine::ErrorKind::Usage);
        }
        if (*t->seedOpt)
            t->args.options.seed = t->seed;
        if (*t->stepsOpt)
            t->args.options.maxSteps = t->steps;
        return runTrain(t->args, session);
    });
}

}  // namespace lengen::cli
