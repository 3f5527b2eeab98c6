// `lengen sweep new`, `run-cell` and `status` (the local executor is sweep_executor.cpp).

#include "sweep_commands.h"

#include <nlohmann/json.hpp>

#include <csignal>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <optional>

#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_aggregate.h"
#include "lengen/engine/trainer.h"
#include "progress.h"
#include "sweep_table.h"

namespace fs = std::filesystem;

namespace lengen::cli {

namespace {

engine::RunControl* g_cellControl = nullptr;
volatile std::sig_atomic_t g_cellSignals = 0;

// As `train`: the first signal finishes the step and writes a checkpoint; a second leaves now.
void onCellSignal(int)
{
    if (++g_cellSignals > 1)
        std::_Exit(130);
    if (g_cellControl)
        g_cellControl->requestCancelFromSignal();
}

std::vector<std::string> splitList(const std::string& text)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = text.find(',', start);
        out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return out;
}

std::string sweepAxesText(const engine::SweepCell& cell)
{
    std::string out;
    for (const auto& [k, v] : cell.axes)
        out += (out.empty() ? "" : " ") + k + "=" + v;
    return out;
}

}  // namespace

int runSweepNew(const SweepNewArgs& args)
{
    const fs::path out(args.outDir);
    if (fs::exists(out) && !(fs::is_directory(out) && fs::is_empty(out)))
        throw engine::Error(engine::ErrorKind::Usage, args.outDir + " already exists and is not an empty "
                                                                    "folder; choose another --out");
    const auto loaded = engine::loadConfigFile(args.config);
    for (const auto& w : loaded.warnings)
        std::fprintf(stderr, "warning: %s\n", w.toString().c_str());
    if (loaded.runs.size() != 1)
        throw engine::ConfigError({{{args.config, 0, 0}, "model.max_length",
                                    "lists " + std::to_string(loaded.runs.size()) +
                                        " values; a sweep cell is one run: give one value and add "
                                        "the others as an axis in sweep.yaml (docs/sweep-format.md)"}});
    engine::SweepSpec spec;
    spec.name = fs::absolute(out).lexically_normal().filename().string();
    spec.base = "base.yaml";
    if (!args.tasks.empty())
        spec.axes.push_back({"task", args.tasks, {}});
    if (!args.pes.empty())
        spec.axes.push_back({"pe", args.pes, {}});
    for (const auto& s : args.sets) {
        const size_t eq = s.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
            throw engine::Error(engine::ErrorKind::Usage, "--set " + s + ": expected KEY=V1,V2,… "
                                                          "(e.g. model.num_hidden_layers=4,6)");
        spec.axes.push_back({s.substr(0, eq), splitList(s.substr(eq + 1)), {}});
    }
    std::vector<std::string> seeds;
    for (int s = 1; s <= args.seeds; ++s)
        seeds.push_back(std::to_string(s));
    spec.axes.push_back({"seed", seeds, {}});
    spec.stages.eval = args.eval;
    spec.stages.evalOptions.methods = args.evalMethods;
    spec.stages.evalOptions.prompts = args.evalPrompts;
    spec.stages.probe = args.probe;
    if (args.probe)
        spec.stages.probeOptions = engine::ProbeOptions::all();
    // Written next to the target and renamed once every cell validated: a bad axis leaves nothing.
    const fs::path partial = out.string() + ".partial";
    fs::remove_all(partial);
    fs::create_directories(partial);
    try {
        std::ofstream(partial / "base.yaml")
            << "# Base config of this sweep, from " << args.config << " (with its includes).\n"
            << engine::toYaml(loaded.runs.front(), engine::YamlStyle::Draft);
        std::ofstream(partial / "sweep.yaml") << engine::sweepYaml(spec);
        const auto index = engine::prepareSweep(partial.string());
        if (fs::exists(out))
            fs::remove(out);
        fs::rename(partial, out);
        if (!args.quiet) {
            std::string shape;
            for (const auto& a : spec.axes)
                shape += (shape.empty() ? "" : " x ") + a.key + " " + std::to_string(a.values.size());
            std::fprintf(stderr, "sweep %s: %zu cells (%s); run it with: lengen sweep run %s\n",
                         spec.name.c_str(), index.cells.size(), shape.c_str(), args.outDir.c_str());
        }
        std::printf("%s\n", args.outDir.c_str());
        return 0;
    } catch (...) {
        std::error_code ec;
        fs::remove_all(partial, ec);
        throw;
    }
}

int runSweepCell(const SweepCellArgs& args)
{
    const engine::SweepPaths paths{engine::locateSweep(args.dir)};
    const auto index = engine::readSweepIndex(paths.root);
    if (args.index < 0 || args.index >= int(index.cells.size()))
        throw engine::Error(engine::ErrorKind::Usage, "cell " + std::to_string(args.index) + " is not in " +
                                                          paths.root + " (cells 0.." +
                                                          std::to_string(index.cells.size() - 1) + ")");
    const auto& cell = index.cells[size_t(args.index)];
    engine::RunControl control;
    g_cellControl = &control;
    std::signal(SIGINT, onCellSignal);
    std::signal(SIGTERM, onCellSignal);
    engine::CellState state;
    auto setStage = [&](const std::string& stage, const std::string& message = {}, int code = 0) {
        state.stage = stage;
        state.message = message;
        state.exitCode = code;
        engine::writeCellState(paths, cell.name, state);
    };
    auto stopped = [&](const std::string& what) {
        setStage("stopped", what, 130);
        std::fprintf(stderr, "cell %s: %s\n", cell.name.c_str(), what.c_str());
        return engine::exitCodeFor(engine::ErrorKind::Interrupted);
    };
    std::fprintf(stderr, "cell %s (%s)\n", cell.name.c_str(), sweepAxesText(cell).c_str());
    try {
        setStage("train");
        const std::string run = paths.runFile(cell.name);
        engine::TrainOptions options;
        options.runDir = paths.cellDir(cell.name);
        options.threads = args.threads;
        options.device = args.device;
        options.sweepName = index.name;
        options.sweepCell = cell.name;
        options.sweepAxes = sweepAxesText(cell);
        ProgressReporter progress(ProgressReporter::detect(args.quiet));
        std::optional<engine::RunSummary> summary;
        const auto info = fs::exists(run) ? std::optional(engine::readRunInfo(run)) : std::nullopt;
        if (info && info->status != "finished" && info->checkpointStep < 0)
            fs::remove(run);  // stopped before its first checkpoint: nothing to keep
        if (info && info->status == "finished") {
            std::fprintf(stderr, "trained already (%lld steps)\n", static_cast<long long>(info->totalSteps));
        } else if (info && info->checkpointStep >= 0) {
            summary = engine::resume(run, options, control, progress);
        } else {
            const auto loaded = engine::loadConfigFile(paths.cellDir(cell.name) + "/config.yaml");
            summary = engine::train(loaded.runs.at(0), options, control, progress);
        }
        progress.finish();
        if (summary && summary->outcome == engine::RunOutcome::Cancelled)
            return stopped("stopped at step " + std::to_string(summary->stepsDone) + "; checkpoint written");
        AnalysisProgress analysis(args.quiet);
        if (index.stages.eval) {
            setStage("eval");
            auto o = index.stages.evalOptions;
            o.common.threads = args.threads;
            o.common.device = args.device;
            if (engine::evaluateRun(run, o, control, analysis).cancelled)
                return stopped("stopped during the evaluation; finished methods are stored");
        }
        if (index.stages.probe) {
            setStage("probe");
            auto o = index.stages.probeOptions;
            o.common.threads = args.threads;
            o.common.device = args.device;
            if (engine::probeRun(run, o, control, analysis).cancelled)
                return stopped("stopped during the probes; finished probes are stored");
        }
        analysis.finish();
        setStage("done");
        std::fprintf(stderr, "cell %s: done\n", cell.name.c_str());
        return 0;
    } catch (const std::exception& e) {
        const engine::Error* known = dynamic_cast<const engine::Error*>(&e);
        const engine::Error error = known ? *known : engine::classifyException(e);
        try {
            setStage("failed", error.what(), engine::exitCodeFor(error.kind()));
        } catch (const std::exception&) {
            // The disk may be what failed: the log and the exit code still say it.
        }
        throw;
    }
}


int runSweepStatus(const std::string& dir, bool json)
{
    const std::string root = engine::locateSweep(dir);
    const auto index = engine::readSweepIndex(root);
    const auto statuses = engine::sweepStatus(root, index);
    std::map<std::string, int> counts;
    nlohmann::json rows = nlohmann::json::array();
    std::string schedulerNote;
    const auto slurm = slurmCellStates(root, &schedulerNote);
    const bool submitted = !schedulerNote.empty();
    auto slurmState = [&](int cell) {
        const auto it = slurm.find(cell);
        return it == slurm.end() ? std::string(submitted ? "-" : "") : it->second;
    };
    if (!json)
        std::printf("%-32s %-8s %-6s %13s %9s %-5s %-5s %s%s\n", "CELL", "STATE", "STAGE", "STEP",
                    "LOSS", "EVAL", "PROBE", submitted ? "SLURM       " : "", "NOTE");
    for (const auto& s : statuses) {
        ++counts[s.state];
        if (json) {
            nlohmann::json axes = nlohmann::json::object();
            for (const auto& [k, v] : s.cell->axes)
                axes[k] = v;
            rows.push_back({{"index", s.cell->index}, {"name", s.cell->name}, {"axes", axes},
                            {"state", s.state}, {"stage", s.stage}, {"step", s.step},
                            {"total_steps", s.totalSteps},
                            {"last_loss", std::isfinite(s.lastLoss) ? nlohmann::json(s.lastLoss) : nlohmann::json()},
                            {"eval_done", s.evalDone}, {"probe_done", s.probeDone},
                            {"message", s.message}, {"run", s.runFile},
                            {"scheduler_state", slurmState(s.cell->index)}});
            continue;
        }
        const std::string step = std::to_string(s.step) + "/" + std::to_string(s.totalSteps);
        const char* eval = !index.stages.eval ? "-" : s.evalDone ? "yes" : "no";
        const char* probe = !index.stages.probe ? "-" : s.probeDone ? "yes" : "no";
        char slurmColumn[32] = "";
        if (submitted)
            std::snprintf(slurmColumn, sizeof slurmColumn, "%-12s", slurmState(s.cell->index).c_str());
        std::printf("%-32s %-8s %-6s %13s %9s %-5s %-5s %s%s\n", s.cell->name.c_str(), s.state.c_str(),
                    s.stage.c_str(), step.c_str(), shortNumber(s.lastLoss, "-").c_str(), eval, probe, slurmColumn,
                    s.message.c_str());
    }
    if (json)
        std::printf("%s\n", rows.dump(1).c_str());
    if (submitted)
        std::fprintf(stderr, "%s\n", schedulerNote.c_str());
    std::fprintf(stderr, "%s: %zu cells: %d done, %d running, %d pending, %d stopped, %d failed\n",
                 root.c_str(), statuses.size(), counts["done"], counts["running"], counts["pending"],
                 counts["stopped"], counts["failed"]);
    if (counts["failed"] > 0)
        return engine::exitCodeFor(engine::ErrorKind::Runtime);
    return counts["done"] == int(statuses.size()) ? 0 : kSweepUnfinished;
}

int runSweepAggregate(const SweepAggregateArgs& args)
{
    const std::string root = engine::locateSweep(args.dir);
    engine::AggregateOptions options;
    options.groupBy = args.by;
    options.bootstrapTrials = args.bootstrapTrials;
    const auto aggregate = engine::aggregateSweep(root, options);
    const auto methods = engine::aggregateMethods(aggregate);
    if (!args.method.empty() && std::find(methods.begin(), methods.end(), args.method) == methods.end() &&
        !methods.empty())
        throw engine::Error(engine::ErrorKind::Usage, "--method " + args.method + ": no cell of " + root +
                                                          " has it evaluated");
    const std::string file = engine::aggregateFileFor(root);
    engine::writeAggregate(file, aggregate);
    if (!args.quiet) {
        for (const auto& m : methods) {
            if (!args.method.empty() && m != args.method)
                continue;
            std::printf("%s (mean [band] over seeds; @ position)\n%s\n", m.c_str(),
                        sweepTable(aggregate, m, TableFormat::Text).c_str());
        }
    }
    size_t sets = 0;
    for (const auto& s : aggregate.sets)
        sets += s.curves.empty() ? 0 : 1;
    std::string grouping;
    for (const auto& k : aggregate.groupBy)
        grouping += (grouping.empty() ? "" : ", ") + k;
    std::fprintf(stderr, "%s: %zu curve sets grouped by %s%s\n", file.c_str(), sets,
                 grouping.empty() ? "nothing (all cells together)" : grouping.c_str(),
                 aggregate.missing.empty() ? "" : "; cells without results yet are left out");
    if (!aggregate.missing.empty()) {
        std::string list;
        for (const auto& c : aggregate.missing)
            list += (list.empty() ? "" : ", ") + c;
        std::fprintf(stderr, "no results yet: %s\n", list.c_str());
        return kSweepUnfinished;
    }
    return 0;
}

}  // namespace lengen::cli
