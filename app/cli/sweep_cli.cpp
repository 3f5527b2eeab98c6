// `lengen sweep new|run|run-cell|submit|aggregate|status`: the options of each, registered in
// the command table (command_registry.h). The work is in sweep_commands.cpp (new, run-cell,
// status, cancel, aggregate) and sweep_executor.cpp (run, submit).

#include <CLI/CLI.hpp>

#include <memory>

#include "command_registry.h"
#include "common_options.h"
#include "lengen/engine/config_edit.h"
#include "lengen/engine/seed_stats.h"
#include "option_ranges.h"
#include "sweep_commands.h"
#include "sweep_table.h"

namespace lengen::cli {

namespace {

void addNew(CLI::App& sweep, CommandTable& table)
{
    auto a = std::make_shared<SweepNewArgs>();
    auto* cmd = sweep.add_subcommand("new", "Write a sweep folder from a base config");
    cmd->add_option("config", a->config, "Base run config (YAML)")
        ->required();  // a missing one is a config error (exit 2), as `train` says it
    std::string pes;
    for (const auto& pe : engine::sweepPeNames())
        pes += (pes.empty() ? "" : ", ") + pe;
    cmd->add_option("--pe", a->request.pes,
                    "Position encodings and backbones (lengen list encodings): " + pes)
        ->delimiter(',');
    cmd->add_option("--task", a->request.tasks, "Tasks")->delimiter(',');
    cmd->add_option("--seeds", a->request.seeds, "Seeds 1..N per cell")
        ->capture_default_str()
        ->check(inRange(1, 10000));
    cmd->add_option("--set", a->sets,
                    "An axis over a config key: KEY=V1,V2 "
                    "(e.g. model.num_hidden_layers=4,6); repeatable");
    cmd->add_flag("!--no-eval", a->request.eval, "Train only (default: evaluate each cell)");
    cmd->add_option("--methods", a->request.evalMethods, "Evaluation methods")
        ->delimiter(',')
        ->capture_default_str();
    cmd->add_option("--prompts", a->request.evalPrompts, "Evaluation prompts per method")
        ->capture_default_str()
        ->check(inRange(1, 1e7));
    cmd->add_option("--interventions", a->request.evalInterventions,
                    "Training-free length extensions to evaluate in each cell besides the plain "
                    "model (docs/interventions.md), or `all`: every one that applies to the cell")
        ->delimiter(';');
    cmd->add_flag("--probe", a->request.probe, "Also run every probe on each cell");
    cmd->add_flag(
        "--skip-refused", a->request.skipRefused,
        "Leave out the combinations the config refuses (NoPE under randomized positions, …) "
        "instead of refusing the grid");
    cmd->add_option("--out", a->request.outDir, "The sweep folder to create")->required();
    addQuietFlag(cmd, a->quiet);
    table.add(cmd, [a](const Session&) { return runSweepNew(*a); });
}

#ifndef LENGEN_LIGHT_CLI  // run, run-cell and submit: lengen-core only
CLI::Validator slurmTime()
{
    return CLI::Validator(
        [](std::string& v) {
            return !v.empty() && v.find_first_not_of("0123456789:-") == std::string::npos
                       ? std::string()
                       : "must be a Slurm time such as 30, 2:00:00 or 1-12:00:00, not '" + v + "'";
        },
        "TIME");
}

void addRun(CLI::App& sweep, CommandTable& table)
{
    auto a = std::make_shared<SweepRunArgs>();
    auto* cmd = sweep.add_subcommand(
        "run",
        "Run every unfinished cell here, N at a time (resumes stopped cells; Ctrl-C stops all "
        "with checkpoints)");
    cmd->add_option("dir", a->dir, "Sweep folder")->required();
    cmd->add_option("--jobs,-j", a->options.jobs, "Cells at once (default: one per core)")
        ->check(inRange(0, 1024));
    cmd->add_option("--cells-per-device,--cells-per-gpu", a->options.cellsPerDevice,
                    "Cells at once on each device of --device (K x GPUs; instead of --jobs)")
        ->check(inRange(1, 64));
    cmd->add_option("--threads-per-job", a->options.threadsPerJob,
                    "CPU threads per cell (default: cores / jobs)")
        ->check(threadRange());
    addSharedDevicesOption(cmd, a->options.device);
    cmd->add_flag("--mps", a->options.mps,
                  "Share each GPU between its cells through a private CUDA MPS daemon "
                  "(nvidia-cuda-mps-control)");
    cmd->add_flag("--retry-failed", a->options.retryFailed, "Run failed cells again");
    cmd->add_option("--members", a->options.members,
                    "Train up to K cells of one config (seed apart; fresh, or stopped at one step) "
                    "in one process as one batched model (pays off on a GPU; "
                    "docs/sweep-format.md)")
        ->check(inRange(1, 64));
    addQuietFlag(cmd, a->quiet);
    table.add(cmd, [a](const Session& session) { return runSweepRun(*a, session); });

    auto c = std::make_shared<SweepCellArgs>();
    auto* cell = sweep.add_subcommand(
        "run-cell",
        "Run one cell in this process (what `sweep run` children and Slurm array tasks do)");
    cell->add_option("dir", c->dir, "Sweep folder")->required();
    cell->add_option("index", c->indices,
                     "Cell index (from 0); several: those of one config (fresh, or stopped at "
                     "one step) train as members of one batched model")
        ->required()
        ->check(inRange(0, 1e6));
    addThreadsOption(cell, c->options.threads);
    addDeviceOption(cell, c->options.device);
    addQuietFlag(cell, c->quiet);
    table.add(cell, [c](const Session& session) { return runSweepCell(*c, session); });
}

void addSubmit(CLI::App& sweep, CommandTable& table)
{
    auto a = std::make_shared<SweepSubmitArgs>();
    auto* cmd = sweep.add_subcommand(
        "submit", "Submit the unfinished cells as one Slurm job array (one task per cell; requeued "
                  "tasks resume their checkpoint)");
    cmd->add_option("dir", a->dir, "Sweep folder")->required();
    cmd->add_option("--partition,-p", a->options.partition,
                    "Slurm partition (default: the cluster's)");
    cmd->add_option("--time,-t", a->options.time,
                    "Time limit per cell, as Slurm writes it "
                    "(30, 2:00:00, 1-12:00:00)")
        ->check(slurmTime());
    cmd->add_option("--gpus-per-job", a->options.gpusPerJob, "GPUs per cell (--gpus-per-task)")
        ->check(inRange(0, 64));
    cmd->add_option("--cpus-per-job", a->options.cpusPerJob,
                    "CPU cores per cell, also its threads "
                    "(default 1)")
        ->check(inRange(0, 1024));
    cmd->add_option("--max-parallel", a->options.maxParallel,
                    "Cells running at once (the array's %K; "
                    "default: no limit)")
        ->check(inRange(0, 100000));
    cmd->add_option("--signal-before", a->options.signalSeconds,
                    "Seconds before the time limit when a cell checkpoints and requeues itself")
        ->capture_default_str()
        ->check(inRange(10, 3600));
    cmd->add_option("--sbatch-arg", a->options.sbatchArgs,
                    "An extra #SBATCH line, e.g. "
                    "--sbatch-arg=--account=lab (repeatable)");
    addDeviceOption(cmd, a->options.device);  // cuda when --gpus-per-job is set
    cmd->add_flag("--retry-failed", a->options.retryFailed, "Submit failed cells again");
    cmd->add_flag("--dry-run", a->dryRun, "Print the job script; submit nothing");
    table.add(cmd, [a](const Session& session) {
        if (a->options.device.empty() && a->options.gpusPerJob > 0)
            a->options.device = "cuda";
        return runSweepSubmit(*a, session);
    });
}
#endif  // LENGEN_LIGHT_CLI

void addResults(CLI::App& sweep, CommandTable& table)
{
    auto a = std::make_shared<SweepAggregateArgs>();
    auto* cmd = sweep.add_subcommand(
        "aggregate",
        "Combine the cells' evaluation and probe curves over seeds into DIR/aggregate.h5 "
        "and print the summary table");
    cmd->add_option("dir", a->dir, "Sweep folder")->required();
    cmd->add_option("--by", a->options.groupBy, "Axes to group by (default: all but seed)")
        ->delimiter(',');
    cmd->add_option("--bootstrap", a->options.bootstrapTrials,
                    "Bootstrap resamples over seeds (3 seeds "
                    "or more)")
        ->capture_default_str()
        ->check(inRange(1, 100000));
    a->band = engine::bandKindName(a->options.band);  // the engine's default, as --help shows it
    cmd->add_option("--band", a->band,
                    "The band over seeds: auto (bootstrap 5-95 % from 3 seeds, else "
                    "min-max), bootstrap, sd, se, minmax; one seed has none")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "bootstrap", "sd", "se", "minmax", "min-max"}));
    cmd->add_option("--method", a->method, "Print only this method's table");
    addQuietFlag(cmd, a->quiet);
    table.add(cmd, [a](const Session&) { return runSweepAggregate(*a); });

    struct Status {
        std::string dir;
        bool json = false;
    };
    auto s = std::make_shared<Status>();
    auto* status = sweep.add_subcommand("status", "One line per cell: state, stage, step, loss, "
                                                  "analysis (exit 0 done, 5 failed, 8 unfinished)");
    status->add_option("dir", s->dir, "Sweep folder")->required();
    addJsonFlag(status, s->json);
    table.add(status, [s](const Session&) { return runSweepStatus(s->dir, s->json); });

    struct Table {
        std::string dir, format;
        std::vector<std::string> columns;
    };
    auto t = std::make_shared<Table>();
    auto* tab = sweep.add_subcommand(
        "table", "One row per cell: its axes, then its results (final and least loss, steps/s, "
                 "wall time, each evaluation at the training and the longest length)");
    tab->add_option("dir", t->dir, "Sweep folder")->required();
    addColumnsOption(tab, t->columns, std::string(kColumnsHelp) + " (default: the sweep's axes)");
    tab->add_option("--format", t->format, "text, csv, md or json (default text)")
        ->check(CLI::IsMember({"text", "csv", "md", "json"}));
    table.add(tab, [t](const Session&) {
        splitColumns(t->columns);
        return runSweepTable(t->dir, t->columns, t->format);
    });

    struct Cancel {
        std::string dir;
        std::vector<std::string> cells;
        double wait = 0;
    };
    auto c = std::make_shared<Cancel>();
    auto* cancel = sweep.add_subcommand(
        "cancel",
        "Cancel cells from any shell, while `sweep run`, `submit` or the studio holds them: "
        "queued ones never start, running ones stop with a checkpoint (exit 0; 124 when "
        "--wait ends first; 9 scancel failed)");
    cancel->add_option("dir", c->dir, "Sweep folder")->required();
    cancel
        ->add_option("--cells", c->cells, "Cell names or indices (default: every unfinished cell)")
        ->delimiter(',');
    cancel
        ->add_option("--wait", c->wait, "Seconds to wait for the cancelled cells to end (0: don't)")
        ->capture_default_str()
        ->check(inRange(0, 86400));
    table.add(cancel, [c](const Session&) { return runSweepCancel(c->dir, c->cells, c->wait); });
}

}  // namespace

void addSweepCommands(CLI::App& app, CommandTable& table)
{
    auto* sweep = app.add_subcommand(
        "sweep", "Experiments: a grid of seeded runs over tasks x position encodings x seeds x "
                 "config keys, run here N at a time (docs/sweep-format.md)");
    sweep->require_subcommand(1);
    addNew(*sweep, table);
#ifndef LENGEN_LIGHT_CLI  // sweep_executor.cpp: lengen-core only
    addRun(*sweep, table);
    addSubmit(*sweep, table);
#endif
    addResults(*sweep, table);
}

}  // namespace lengen::cli
