// `lengen`: the headless command line over the engine. Thin: parse, dispatch, map errors to
// exit codes (docs/cli.md).

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "analysis_commands.h"
#include "commands.h"
#include "early_signals.h"
#include "option_ranges.h"
#include "reference_commands.h"
#include "sweep_commands.h"
#ifdef LENGEN_WITH_EXPORT
#include "export_command.h"
#endif
#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/version.h"

using namespace lengen;

namespace {

std::string exitCodeHelp()
{
    return "Exit codes: 0 ok, 1 internal error, 2 config error, 3 run-file error, 4 I/O error,\n"
           "5 run failed (NaN loss, device), 8 sweep unfinished, 9 scheduler (Slurm) error,\n"
           "64 usage error, 130 interrupted (checkpoint written).";
}

}  // namespace

int main(int argc, char** argv)
{
    if (const int sig = cli::takeOverSignals()) {
        std::fprintf(stderr, "lengen: interrupted (signal %d) while starting; nothing was done\n",
                     sig);
        return engine::exitCodeFor(engine::ErrorKind::Interrupted);
    }
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
                                                         "else random; stored in the run)")
                        ->check(cli::seedRange());
    auto* stepsOpt = trainCmd->add_option("--steps", steps, "Override training.max_steps")
                         ->check(cli::inRange(1, 1e9));
    trainCmd->add_option("--device", train.device, "cpu, cuda or cuda:N (default: cuda if "
                                                   "available, else cpu)");
    trainCmd->add_option("--threads", train.threads, "CPU threads (default: all cores)")
        ->check(cli::threadRange());
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
        ->check(cli::inRange(0, 1e9));

    cli::AnalysisArgs evalArgs;
    engine::EvalOptions evalOptions;
    bool evalShow = false;
    auto* evalCmd = app.add_subcommand(
        "eval", "Error per in-context position of a run's model and its task's baselines, at the "
                "training length and beyond (stored in <run>/analysis.h5)");
    evalCmd->add_option("run", evalArgs.run, "Run folder or run.h5")->required();
    evalCmd->add_option("--methods", evalOptions.methods,
                        "standard, ood_length, half_subspace, skewed, scale-x=<s>, scale-y=<s> "
                        "(default: all for the task)")
        ->delimiter(',');
    evalCmd->add_option("--prompts", evalOptions.prompts, "Prompts per method")
        ->capture_default_str()->check(cli::inRange(1, 1e7));
    evalCmd->add_option("--batch", evalOptions.batchSize, "Functions drawn per task instance")
        ->capture_default_str()->check(cli::inRange(1, 1e6));
    evalCmd->add_option("--ood-factor", evalOptions.oodFactor,
                        "Prompt length of the long methods, in training lengths")
        ->capture_default_str()->check(cli::inRange(1, 100));
    evalCmd->add_flag("!--no-baselines", evalOptions.baselines, "Evaluate the model only");
    evalCmd->add_flag("--show", evalShow, "Only print the stored results");
    auto addCommon = [](CLI::App* cmd, cli::AnalysisArgs& a) {
        cmd->add_option("--seed", a.common.seed, "Seed of prompts and bootstrap")
            ->capture_default_str()->check(cli::seedRange());
        cmd->add_option("--bootstrap", a.common.bootstrapTrials, "Bootstrap resamples")
            ->capture_default_str()->check(cli::inRange(0, 1e6));
        cmd->add_option("--memory-budget", a.common.memoryBudgetMiB,
                        "MiB the model forward may hold at once (micro-batches and attention "
                        "row blocks are sized to fit)")
            ->capture_default_str()->check(cli::inRange(16, 1e8, false));
        cmd->add_option("--device", a.common.device, "cpu, cuda or cuda:N");
        cmd->add_option("--threads", a.common.threads, "CPU threads (default: by model size)")
            ->check(cli::threadRange());
        cmd->add_flag("--force", a.common.force, "Recompute results already stored");
        cmd->add_flag("--quiet,-q", a.quiet, "No progress output");
    };
    addCommon(evalCmd, evalArgs);

    cli::AnalysisArgs probeArgs;
    probeArgs.common.bootstrapTrials = 100;  // the reference's probes resample 100 times
    engine::ProbeOptions probeOptions;
    bool probeAll = false, probeShow = false;
    auto* probeCmd = app.add_subcommand(
        "probe", "Attention maps, duplicated-example attacks and serial-position curves of a "
                 "run's model (stored in <run>/analysis.h5)");
    probeCmd->add_option("run", probeArgs.run, "Run folder or run.h5")->required();
    probeCmd->add_flag("--attention", probeOptions.attention, "Attention of the last query "
                       "(train length, long, duplicated prompt) and full maps");
    probeCmd->add_flag("--duplicated", probeOptions.duplicated, "Duplicated-example attacks");
    probeCmd->add_flag("--serial-position", probeOptions.serialPosition,
                       "Answer block at begin / middle / end (lost in the middle)");
    probeCmd->add_flag("--all", probeAll, "Every probe");
    probeCmd->add_flag("--show", probeShow, "Only print the stored results");
    probeCmd->add_option("--prompts", probeOptions.prompts, "Prompts of the attack and serial "
                         "position tests")->capture_default_str()->check(cli::inRange(1, 1e6));
    probeCmd->add_option("--test-length", probeOptions.testLength, "Points of the long layouts")
        ->capture_default_str()->check(cli::inRange(1, 1e5));
    probeCmd->add_option("--noise-counts", probeOptions.noiseCounts,
                         "Count sweep (default 5..20)")->delimiter(',')->check(cli::inRange(0, 1e4));
    probeCmd->add_option("--instruction", probeOptions.instructionPoints, "Instruction points "
                         "(default 2D)")->check(cli::inRange(0, 1e4));
    probeCmd->add_option("--answer", probeOptions.answerPoints, "Answer points (default D)")
        ->check(cli::inRange(0, 1e4));
    probeCmd->add_option("--target", probeOptions.targetPoints, "Target points (default "
                         "ceil(D/2))")->check(cli::inRange(0, 1e4));
    probeCmd->add_option("--attention-prompts", probeOptions.attentionPrompts,
                         "Prompts averaged by the attention probe")
        ->capture_default_str()->check(cli::inRange(1, 1e5));
    probeCmd->add_option("--long-points", probeOptions.longPoints, "Points of the long "
                         "attention test")->capture_default_str()->check(cli::inRange(1, 1e5));
    probeCmd->add_option("--lengths", probeOptions.extraLengths, "More attention prompt "
                         "lengths, in points")->delimiter(',')->check(cli::inRange(1, 1e5));
    probeCmd->add_option("--map-prompts", probeOptions.mapPrompts, "Prompts whose full "
                         "attention maps are stored")->capture_default_str()
        ->check(cli::inRange(0, 1e3));
    probeCmd->add_option("--map-max-tokens", probeOptions.mapMaxTokens, "Store full maps up "
                         "to this prompt length")->capture_default_str()->check(cli::inRange(0, 2e5));
    addCommon(probeCmd, probeArgs);

#ifdef LENGEN_WITH_EXPORT
    cli::ExportArgs exportArgs;
    auto* exportCmd = app.add_subcommand(
        "export", "Figures of a run (evaluation, attention, attacks, serial position, loss) or of a "
                  "sweep (grid, table) as PNG, SVG, PDF or CSV");
    exportCmd->add_option("run", exportArgs.run, "Run folder or run.h5, or a sweep folder (figures grid "
                                                 "and table)")->required();
    exportCmd->add_option("--method", exportArgs.method, "Sweep grid / table: evaluation method (default "
                                                         "ood_length)");
    exportCmd->add_option("--figure", exportArgs.figure, "Figure name (see --list)");
    exportCmd->add_flag("--all", exportArgs.all, "Every available figure (into <run>/figures)");
    exportCmd->add_flag("--list", exportArgs.list, "List the figures this run can draw");
    exportCmd->add_option("--format", exportArgs.formats, "png, svg, pdf, csv (several: comma); a sweep's "
                                                          "table: csv, md")
        ->delimiter(',');
    exportCmd->add_option("--out", exportArgs.out, "Output file (one figure) or folder (--all)");
    exportCmd->add_option("--dpi", exportArgs.dpi, "PNG resolution")->capture_default_str()
        ->check(CLI::Range(30, 1200));
    exportCmd->add_option("--prompt", exportArgs.prompt, "Attention map: prompt (from 0)")
        ->capture_default_str()->check(cli::inRange(0, 1e6));
    exportCmd->add_option("--layer", exportArgs.layer, "Attention map: layer from 0 (default -1: last)")
        ->check(cli::inRange(-1, 1e6));
    exportCmd->add_option("--head", exportArgs.head, "Attention map: head from 0, or -1: the mean over heads")
        ->capture_default_str()->check(cli::inRange(-1, 1e6));
    exportCmd->add_flag("--quiet,-q", exportArgs.quiet, "Do not print the written paths");
#endif

    std::string importJson, importRun, importLabel = "python";
    auto* importCmd = app.add_subcommand(
        "import", "Import the reference's metrics.json into a run's analysis file");
    importCmd->add_option("metrics", importJson, "metrics.json written by the Python code")
        ->required()->check(CLI::ExistingFile);
    importCmd->add_option("run", importRun, "Run folder or run.h5")->required();
    importCmd->add_option("--label", importLabel, "Name of the imported set")->capture_default_str();

    cli::ImportRunArgs importRunArgs;
    auto* importRunCmd = app.add_subcommand(
        "import-run", "Import runs of the reference's Python code (config.yaml + state.pt "
                      "[+ metrics.json]) as LenGen runs");
    importRunCmd->add_option("folders", importRunArgs.paths, "Reference run folders, or a "
                             "models/ tree holding them")->required();
    importRunCmd->add_option("--out", importRunArgs.outDir, "Root folder for the imported runs")
        ->capture_default_str();
    importRunCmd->add_flag("!--no-metrics", importRunArgs.metrics, "Do not import metrics.json");
    importRunCmd->add_flag("--quiet,-q", importRunArgs.quiet, "Only print the run paths");

    cli::ExportRunArgs exportRunArgs;
    auto* exportRunCmd = app.add_subcommand(
        "export-run", "Write a run as a reference run folder (config.yaml + state.pt) for the "
                      "Python code");
    exportRunCmd->add_option("run", exportRunArgs.run, "Run folder or run.h5")->required();
    exportRunCmd->add_option("--format", exportRunArgs.format, "pytorch")->capture_default_str();
    exportRunCmd->add_option("--out", exportRunArgs.outDir, "Folder to write")->required();
    exportRunCmd->add_flag("--quiet,-q", exportRunArgs.quiet, "Only print the folder");

    auto* sweepCmd = app.add_subcommand(
        "sweep", "Experiments: a grid of seeded runs over tasks x position encodings x seeds x "
                 "config keys, run here N at a time (docs/sweep-format.md)");
    sweepCmd->require_subcommand(1);
    cli::SweepNewArgs sweepNew;
    auto* sweepNewCmd = sweepCmd->add_subcommand("new", "Write a sweep folder from a base config");
    sweepNewCmd->add_option("config", sweepNew.config, "Base run config (YAML)")->required()
        ->check(CLI::ExistingFile);
    sweepNewCmd->add_option("--pe", sweepNew.pes, "Position encodings: rope, nope, alibi, fire, yarn, "
                            "dynamic_yarn, pi, dynamic_ntk, mamba, gpt2")->delimiter(',');
    sweepNewCmd->add_option("--task", sweepNew.tasks, "Tasks")->delimiter(',');
    sweepNewCmd->add_option("--seeds", sweepNew.seeds, "Seeds 1..N per cell")->capture_default_str()
        ->check(cli::inRange(1, 10000));
    sweepNewCmd->add_option("--set", sweepNew.sets, "An axis over a config key: KEY=V1,V2 "
                            "(e.g. model.num_hidden_layers=4,6); repeatable");
    sweepNewCmd->add_flag("!--no-eval", sweepNew.eval, "Train only (default: evaluate each cell)");
    sweepNewCmd->add_option("--methods", sweepNew.evalMethods, "Evaluation methods")->delimiter(',')
        ->capture_default_str();
    sweepNewCmd->add_option("--prompts", sweepNew.evalPrompts, "Evaluation prompts per method")
        ->capture_default_str()->check(cli::inRange(1, 1e7));
    sweepNewCmd->add_flag("--probe", sweepNew.probe, "Also run every probe on each cell");
    sweepNewCmd->add_option("--out", sweepNew.outDir, "The sweep folder to create")->required();
    sweepNewCmd->add_flag("--quiet,-q", sweepNew.quiet, "Only print the folder");

    cli::SweepRunArgs sweepRun;
    auto* sweepRunCmd = sweepCmd->add_subcommand(
        "run", "Run every unfinished cell here, N at a time (resumes stopped cells; Ctrl-C stops all "
               "with checkpoints)");
    sweepRunCmd->add_option("dir", sweepRun.dir, "Sweep folder")->required();
    sweepRunCmd->add_option("--jobs,-j", sweepRun.jobs, "Cells at once (default: one per core)")
        ->check(cli::inRange(0, 1024));
    sweepRunCmd->add_option("--threads-per-job", sweepRun.threadsPerJob,
                            "CPU threads per cell (default: cores / jobs)")->check(cli::threadRange());
    sweepRunCmd->add_option("--device", sweepRun.device, "cpu, cuda or cuda:N");
    sweepRunCmd->add_flag("--retry-failed", sweepRun.retryFailed, "Run failed cells again");
    sweepRunCmd->add_flag("--quiet,-q", sweepRun.quiet, "Only say what failed");

    cli::SweepCellArgs sweepCell;
    auto* sweepCellCmd = sweepCmd->add_subcommand(
        "run-cell", "Run one cell in this process (what `sweep run` children and Slurm array tasks do)");
    sweepCellCmd->add_option("dir", sweepCell.dir, "Sweep folder")->required();
    sweepCellCmd->add_option("index", sweepCell.index, "Cell index (from 0)")->required()
        ->check(cli::inRange(0, 1e6));
    sweepCellCmd->add_option("--threads", sweepCell.threads, "CPU threads")->check(cli::threadRange());
    sweepCellCmd->add_option("--device", sweepCell.device, "cpu, cuda or cuda:N");
    sweepCellCmd->add_flag("--quiet,-q", sweepCell.quiet, "No progress output");

    cli::SweepSubmitArgs sweepSubmit;
    auto* sweepSubmitCmd = sweepCmd->add_subcommand(
        "submit", "Submit the unfinished cells as one Slurm job array (one task per cell; requeued "
                  "tasks resume their checkpoint)");
    sweepSubmitCmd->add_option("dir", sweepSubmit.dir, "Sweep folder")->required();
    sweepSubmitCmd->add_option("--partition,-p", sweepSubmit.partition, "Slurm partition (default: the cluster's)");
    sweepSubmitCmd->add_option("--time,-t", sweepSubmit.time, "Time limit per cell, as Slurm writes it "
                                                              "(30, 2:00:00, 1-12:00:00)")
        ->check(CLI::Validator(
            [](std::string& v) {
                return !v.empty() && v.find_first_not_of("0123456789:-") == std::string::npos
                           ? std::string()
                           : "must be a Slurm time such as 30, 2:00:00 or 1-12:00:00, not '" + v + "'";
            },
            "TIME"));
    sweepSubmitCmd->add_option("--gpus-per-job", sweepSubmit.gpusPerJob, "GPUs per cell (--gpus-per-task)")
        ->check(cli::inRange(0, 64));
    sweepSubmitCmd->add_option("--cpus-per-job", sweepSubmit.cpusPerJob, "CPU cores per cell, also its "
                                                                         "threads (default 1)")
        ->check(cli::inRange(0, 1024));
    sweepSubmitCmd->add_option("--max-parallel", sweepSubmit.maxParallel, "Cells running at once (the "
                                                                          "array's %K; default: no limit)")
        ->check(cli::inRange(0, 100000));
    sweepSubmitCmd->add_option("--signal-before", sweepSubmit.signalSeconds,
                               "Seconds before the time limit when a cell checkpoints and requeues itself")
        ->capture_default_str()->check(cli::inRange(10, 3600));
    sweepSubmitCmd->add_option("--sbatch-arg", sweepSubmit.sbatchArgs, "An extra #SBATCH line, e.g. "
                                                                       "--sbatch-arg=--account=lab (repeatable)");
    sweepSubmitCmd->add_option("--device", sweepSubmit.device, "cpu, cuda or cuda:N (default: cuda when "
                                                               "--gpus-per-job is set)");
    sweepSubmitCmd->add_flag("--retry-failed", sweepSubmit.retryFailed, "Submit failed cells again");
    sweepSubmitCmd->add_flag("--dry-run", sweepSubmit.dryRun, "Print the job script; submit nothing");

    cli::SweepAggregateArgs sweepAggregate;
    auto* sweepAggregateCmd = sweepCmd->add_subcommand(
        "aggregate", "Combine the cells' evaluation and probe curves over seeds into DIR/aggregate.h5 "
                     "and print the summary table");
    sweepAggregateCmd->add_option("dir", sweepAggregate.dir, "Sweep folder")->required();
    sweepAggregateCmd->add_option("--by", sweepAggregate.by, "Axes to group by (default: all but seed)")
        ->delimiter(',');
    sweepAggregateCmd->add_option("--bootstrap", sweepAggregate.bootstrapTrials,
                                  "Bootstrap resamples over seeds (3 seeds or more)")
        ->capture_default_str()->check(cli::inRange(1, 100000));
    sweepAggregateCmd->add_option("--method", sweepAggregate.method, "Print only this method's table");
    sweepAggregateCmd->add_flag("--quiet,-q", sweepAggregate.quiet, "Print no table");

    std::string sweepStatusDir;
    bool sweepStatusJson = false;
    auto* sweepStatusCmd = sweepCmd->add_subcommand(
        "status", "One line per cell: state, stage, step, loss, analysis (exit 0 done, 5 failed, 8 unfinished)");
    sweepStatusCmd->add_option("dir", sweepStatusDir, "Sweep folder")->required();
    sweepStatusCmd->add_flag("--json", sweepStatusJson, "A JSON array instead of the table");

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
        if (*evalCmd)
            return evalShow ? cli::printEvaluations(evalArgs.run)
                            : cli::runEval(evalArgs, evalOptions);
        if (*probeCmd) {
            if (probeShow)
                return cli::printProbes(probeArgs.run);
            if (probeAll)
                probeOptions.attention = probeOptions.duplicated = probeOptions.serialPosition = true;
            return cli::runProbe(probeArgs, probeOptions);
        }
#ifdef LENGEN_WITH_EXPORT
        if (*exportCmd)
            return cli::runExport(exportArgs);
#endif
        if (*sweepNewCmd)
            return cli::runSweepNew(sweepNew);
        if (*sweepRunCmd)
            return cli::runSweepRun(sweepRun);
        if (*sweepCellCmd)
            return cli::runSweepCell(sweepCell);
        if (*sweepSubmitCmd) {
            if (sweepSubmit.device.empty() && sweepSubmit.gpusPerJob > 0)
                sweepSubmit.device = "cuda";
            return cli::runSweepSubmit(sweepSubmit);
        }
        if (*sweepAggregateCmd)
            return cli::runSweepAggregate(sweepAggregate);
        if (*sweepStatusCmd)
            return cli::runSweepStatus(sweepStatusDir, sweepStatusJson);
        if (*importCmd)
            return cli::runImport(importJson, importRun, importLabel);
        if (*importRunCmd)
            return cli::runImportRun(importRunArgs);
        if (*exportRunCmd)
            return cli::runExportRun(exportRunArgs);
    } catch (const engine::Error& e) {
        std::fprintf(stderr, "lengen: error: %s\n", e.what());
        if (!e.detail().empty())
            std::fprintf(stderr, "  (%s)\n", e.detail().c_str());
        return engine::exitCodeFor(e.kind());
    } catch (const std::exception& e) {
        const auto error = engine::classifyException(e);
        if (error.kind() == engine::ErrorKind::Internal) {
            std::fprintf(stderr, "lengen: internal error: %s\n", e.what());
            return engine::exitCodeFor(engine::ErrorKind::Internal);
        }
        std::fprintf(stderr, "lengen: error: %s\n  (%s)\n", error.what(), error.detail().c_str());
        return engine::exitCodeFor(error.kind());
    }
    return 0;
}
