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

// The loader's warnings, then each run's curriculum shortfall at the steps it will train
// (`--steps` included): a run whose max_steps ends before its curriculum trains shorter prompts
// than points.end, which its figures then mark (issue 52).
void printWarnings(const engine::LoadedConfig& loaded, std::optional<std::int64_t> steps)
{
    for (const auto& w : loaded.warnings)
        std::fprintf(stderr, "warning: %s\n", w.toString().c_str());
    std::string said;
    for (auto run : loaded.runs) {
        if (steps)
            run.training.maxSteps = *steps;
        const auto shortfall = engine::curriculumShortfall(run);
        if (!shortfall.empty() && shortfall != said)  // once for every max_length of one config
            std::fprintf(stderr, "warning: %s: training.max_steps: %s\n", run.sourceFile.c_str(),
                         shortfall.c_str());
        said = shortfall;
    }
}

int runValidate(const std::string& config, bool quiet)
{
    const engine::LoadedConfig loaded = engine::loadConfigFile(config);
    printWarnings(loaded);
    for (size_t i = 0; i < loaded.runs.size(); ++i) {
        if (quiet)
            continue;
        if (loaded.runs.size() > 1)
            std::printf("--- # run %zu of %zu (max_length %g)\n", i + 1, loaded.runs.size(),
                        loaded.runs[i].model.maxLength);
        std::fputs(engine::toYaml(loaded.runs[i]).c_str(), stdout);
    }
    std::fprintf(stderr, "%s: valid (%zu run%s)\n", config.c_str(), loaded.runs.size(),
                 loaded.runs.size() == 1 ? "" : "s");
    return 0;
}

namespace {

// Per-position metric averaged over the last `rows` log rows that reached full length (each row
// is one training batch of fresh functions; late in training the weights barely move).
void printPointwise(const std::string& path, int rows, bool accuracy)
{
    const auto log = engine::readTrainLog(path);
    // The length the run reached (its last row's), which is the curriculum's end only when
    // max_steps let the curriculum finish (issue 52).
    const int width =
        log.nPoints.empty() ? log.pointwiseWidth : std::min(log.nPoints.back(), log.pointwiseWidth);
    std::vector<double> sum(static_cast<size_t>(width), 0.0);
    int used = 0;
    for (size_t r = log.step.size(); r-- > 0 && used < rows;) {
        if (log.nPoints[r] != width)
            break;
        for (int i = 0; i < width; ++i)
            sum[static_cast<size_t>(i)] +=
                log.pointwise[r * static_cast<size_t>(log.pointwiseWidth) + i];
        ++used;
    }
    if (used == 0) {
        std::printf("pointwise    no logged step yet\n");
        return;
    }
    std::printf("pointwise    %s by in-context examples k at %d points, mean of the last %d logged "
                "steps (steps %lld..%lld):\n",
                accuracy ? "accuracy" : "squared error", width, used,
                static_cast<long long>(log.step[log.step.size() - used]),
                static_cast<long long>(log.step.back()));
    for (int i = 0; i < width; ++i)
        std::printf("  k=%-3d %.4f\n", i, sum[static_cast<size_t>(i)] / used);
}

// `lengen info`, first lines: the file, its id, its status (how to continue), tags and notes.
void printInfoRunState(const engine::RunFileInfo& info)
{
    std::printf("run file     %s\n", info.path.c_str());
    std::printf("run id       %s (created %s, lengen %s, format %d)\n", info.runId.c_str(),
                info.createdAt.c_str(), info.engineVersion.c_str(), info.formatVersion);
    const std::string status = engine::statusLabel(info.status);  // as the studio says it
    std::printf("status       %s, checkpoint after %lld of %lld steps\n", status.c_str(),
                static_cast<long long>(std::max<std::int64_t>(info.checkpointStep, 0)),
                static_cast<long long>(info.totalSteps));
    if (info.status == "cancelled")
        std::printf("             continue with: lengen train --resume %s\n", info.path.c_str());
    if (info.status == "interrupted")
        std::printf("             the process writing it died; continue with: lengen train "
                    "--resume %s\n             (h5py opens it with swmr=True, or after "
                    "`h5clear -s`)\n",
                    info.path.c_str());
    if (!info.tags.empty()) {
        std::string joined;
        for (const auto& t : info.tags)
            joined += (joined.empty() ? "" : ", ") + t;
        std::printf("tags         %s\n", joined.c_str());
    }
    if (!info.notes.empty()) {  // every line of the notes, indented under the first
        size_t start = 0;
        for (int line = 0; start <= info.notes.size(); ++line) {
            const auto end = std::min(info.notes.find('\n', start), info.notes.size());
            std::printf("%s%s\n", line == 0 ? "notes        " : "             ",
                        info.notes.substr(start, end - start).c_str());
            start = end + 1;
        }
    }
}

// `lengen info`: where the run came from, its task, model and training settings.
void printInfoSetup(const engine::RunFileInfo& info, const engine::RunConfig& c)
{
    if (!info.importedFrom.empty())
        std::printf("imported     from %s (trained by the reference's Python code)\n",
                    info.importedFrom.c_str());
    std::printf("task         %s (%s), D = %d, points %d..%d, dims %d..%d\n", info.task.c_str(),
                c.task.data.c_str(), c.inputDims(), c.task.curriculum.points.start,
                c.task.curriculum.points.end, c.task.curriculum.dims.start,
                c.task.curriculum.dims.end);
    std::printf("trained on   %s\n", engine::reachedText(info.reached, c).c_str());
    // "Llama2 + RoPE"; Mamba and GPT-2 carry their own positions, so the backbone alone.
    const std::string model = c.model.backbone == engine::Backbone::Llama
                                  ? info.backbone + " + " + info.positionEncoding
                                  : info.positionEncoding;
    const bool mamba = c.model.backbone == engine::Backbone::Mamba;
    std::printf("model        %s, hidden %d, layers %d, %s %d, %.3f M parameters\n", model.c_str(),
                c.model.hiddenSize, c.model.numLayers, mamba ? "state" : "heads",
                mamba ? c.model.stateSize : c.model.numHeads,
                static_cast<double>(info.parameterCount) / 1e6);
    // The Python code seeds nothing: an imported run's training seed is unknown (its stored
    // seed only drives the generator of a continued training).
    const std::string seed = info.importedFrom.empty() ? std::to_string(info.seed) : "unknown";
    std::printf("training     lr %g, batch %d, seed %s, device %s (%s)%s\n",
                c.training.learningRate, c.training.batchSize, seed.c_str(), info.device.c_str(),
                info.precision.c_str(),
                c.compat == engine::CompatMode::Reference ? ", compat: reference" : "");
    if (c.training.randomPositions > 0)
        std::printf(
            "positions    randomized in training: sorted random subsets of 0..%lld (Ruoss et al. "
            "2023); evaluated at 0..T-1\n",
            static_cast<long long>(c.training.randomPositions - 1));
}

// `lengen info`: the training log's size and last loss, then the position encoding's constants.
void printInfoLog(const engine::RunFileInfo& info)
{
    if (info.logRows > 0)
        std::printf("log          %lld rows, last loss %.5g\n",
                    static_cast<long long>(info.logRows), info.lastLoss);
    else
        std::printf("log          empty\n");
    for (const auto& [name, values] : info.positionConstants) {
        // The label column is 13 wide, as every line's; a longer name (YaRN's
        // original_max_position) has its values on the next line at that column.
        const std::string label = "PE " + name;
        if (label.size() <= 12)
            std::printf("%-12s", label.c_str());
        else
            std::printf("%s\n%12s", label.c_str(), "");
        for (size_t i = 0; i < values.size() && i < 16; ++i)
            std::printf(" %.6g", values[i]);
        std::printf(values.size() > 16 ? " ... (%zu values)\n" : "\n", values.size());
    }
}

// `lengen info --parameters`: each stored parameter's name and shape.
void printInfoParameters(const engine::RunFileInfo& info)
{
    for (const auto& p : info.parameters) {
        std::printf("  %-56s [", p.name.c_str());
        for (size_t i = 0; i < p.shape.size(); ++i)
            std::printf(i ? ", %lld" : "%lld", static_cast<long long>(p.shape[i]));
        std::printf("]\n");
    }
}

}  // namespace

int runInfo(const std::string& run, bool listParameters, int pointwiseRows)
{
    const engine::RunFileInfo info = engine::readRunInfo(run);
    const engine::RunConfig c = engine::storedRunConfig(info.configYaml, info.path);
    printInfoRunState(info);
    printInfoSetup(info, c);
    printInfoLog(info);
    if (pointwiseRows > 0)
        printPointwise(info.path, pointwiseRows, c.isClassification());
    if (listParameters)
        printInfoParameters(info);
    return 0;
}

// What `lengen stop` says once the writer left. A request sent in a run's last half second can
// arrive after its last step: the run then ends `finished` (or `failed`) without seeing it, and
// there is nothing to resume (issue 71, item 3).
static int reportStopOutcome(const engine::RunFileInfo& info)
{
    const auto step = static_cast<long long>(info.checkpointStep);
    const auto total = static_cast<long long>(info.totalSteps);
    if (info.status == "finished") {
        std::fprintf(stderr,
                     "not stopped: the training finished (step %lld of %lld) before it saw the "
                     "request; nothing to resume\n",
                     total, total);
        return 10;
    }
    if (info.status == "failed") {
        std::fprintf(stderr,
                     "not stopped: the training failed before it saw the request (checkpoint at "
                     "step %lld of %lld; `lengen info %s` says why)\n",
                     step, total, info.path.c_str());
        return 5;
    }
    std::fprintf(
        stderr,
        "stopped: %s, checkpoint at step %lld of %lld; continue with: lengen train --resume %s\n",
        info.status.c_str(), step, total, info.path.c_str());
    return 0;
}

// `lengen stop`: the request file (run_control.h), then the writer lock's release.
static int runStop(const std::string& path, double wait)
{
    const std::string run = engine::locateRunFile(path);
    char host[256] = "";
    ::gethostname(host, sizeof host - 1);
    engine::requestStop(run, "lengen stop (" + std::string(host) + ":" +
                                 std::to_string(::getpid()) + ")");
    if (wait <= 0) {
        std::fprintf(stderr, "asked the training of %s to stop\n", run.c_str());
        return 0;
    }
    std::fprintf(stderr, "asked the training of %s to stop; waiting for its checkpoint...\n",
                 run.c_str());
    if (!engine::waitForWriterToLeave(run, wait)) {
        std::fprintf(
            stderr, "still training after %.0f s (the request stands; a step may be long)\n", wait);
        return 124;
    }
    return reportStopOutcome(engine::readRunInfo(run));
}

// `lengen jobs`: engine::findJobs as a table or JSON.
static int runJobs(std::vector<std::string> folders, bool json)
{
    if (folders.empty())
        folders.push_back(std::filesystem::is_directory("runs") ? "runs" : ".");
    std::string note;
    const auto found = engine::findJobs(folders, &note);
    if (json) {
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& j : found)
            rows.push_back({{"kind", engine::jobKindRow(j.kind).name},
                            {"state", engine::jobStateName(j.state, j.kind)},
                            {"waiting_for", j.waitingFor},
                            {"subject", j.subject},
                            {"cell", j.cell},
                            {"holder", j.holder},
                            {"scheduler_state", j.schedulerState},
                            {"step", j.step},
                            {"total_steps", j.totalSteps},
                            {"started_ms", j.startedAtMs},
                            {"last_loss", std::isfinite(j.lastLoss) ? nlohmann::json(j.lastLoss)
                                                                    : nlohmann::json()}});
        std::printf("%s\n", rows.dump(1).c_str());
    } else {
        std::printf("%-10s %-9s %15s %-24s %s\n", "KIND", "STATE", "STEP", "HELD BY", "WHAT");
        for (const auto& j : found) {
            const std::string step =
                j.totalSteps > 0 ? std::to_string(j.step) + "/" + std::to_string(j.totalSteps)
                                 : "-";
            const std::string what = j.cell.empty() ? j.subject : j.subject + " " + j.cell;
            std::printf("%-10s %-9s %15s %-24s %s\n", engine::jobKindRow(j.kind).name,
                        engine::jobStateName(j.state, j.kind), step.c_str(),
                        j.holder.empty() ? "-" : j.holder.c_str(), what.c_str());
        }
    }
    if (!note.empty())
        std::fprintf(stderr, "%s\n", note.c_str());
    std::fprintf(stderr, "%zu job%s under %zu folder%s\n", found.size(),
                 found.size() == 1 ? "" : "s", folders.size(), folders.size() == 1 ? "" : "s");
    return 0;
}

void addTrainCommands(CLI::App& app, CommandTable& table)
{
#ifndef LENGEN_LIGHT_CLI  // train_command.cpp: lengen-core only
    addTrainCommand(app, table);
#endif
    struct Validate {
        std::string config;
        bool quiet = false;
    };
    auto v = std::make_shared<Validate>();
    auto* validate = app.add_subcommand(
        "validate", "Check a run config and print it fully resolved (as stored in runs)");
    validate->add_option("config", v->config, "Run config (YAML)")->required();
    addQuietFlag(validate, v->quiet);
    table.add(validate, [v](const Session&) { return runValidate(v->config, v->quiet); });

    struct Info {
        std::string run;
        bool parameters = false;
        int pointwise = 0;
    };
    auto i = std::make_shared<Info>();
    auto* info = app.add_subcommand("info", "Summarise a run file");
    info->add_option("run", i->run, "Run folder or run.h5")->required();
    info->add_flag("--parameters,-p", i->parameters, "List every checkpoint tensor and shape");
    info->add_option("--pointwise", i->pointwise,
                     "Print the per-position metric, mean of the last N logged steps")
        ->check(inRange(0, 1e9));
    table.add(info, [i](const Session&) { return runInfo(i->run, i->parameters, i->pointwise); });

    struct Stop {
        std::string run;
        double wait = 120;
    };
    auto st = std::make_shared<Stop>();
    auto* stop = app.add_subcommand(
        "stop",
        "Stop a training that another process runs (a terminal, the studio, a sweep cell): it "
        "finishes its step and writes a checkpoint (exit 0 stopped, 3 nothing trains it, "
        "10 it finished before it saw the request, 124 still training after --wait)");
    stop->add_option("run", st->run, "Run folder or run.h5")->required();
    stop->add_option("--wait", st->wait, "Seconds to wait for the checkpoint (0: ask and return)")
        ->capture_default_str()
        ->check(inRange(0, 86400));
    table.add(stop, [st](const Session&) { return runStop(st->run, st->wait); });

    struct Jobs {
        std::vector<std::string> folders;
        bool json = false;
    };
    auto jb = std::make_shared<Jobs>();
    auto* jobs = app.add_subcommand(
        "jobs",
        "List what runs under folders, from the files alone: trainings whose writer holds the run "
        "(a terminal, the studio, a sweep cell), and the running, queued and requeued cells of "
        "sweeps (with Slurm's state)");
    jobs->add_option("folders", jb->folders,
                     "Folders to search (default: runs/ if it exists, else .)");
    addJsonFlag(jobs, jb->json);
    table.add(jobs, [jb](const Session&) { return runJobs(jb->folders, jb->json); });
}

}  // namespace lengen::cli
