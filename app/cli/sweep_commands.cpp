// `lengen sweep new`, `status`, `table`, `cancel` and `aggregate`: arguments in, the engine's
// sweep library (lengen/engine/sweep_run.h) does the work, lines out. No training: lengen-light
// holds them too. `run`, `run-cell` and `submit` are sweep_executor.cpp (lengen-core only).

#include "sweep_commands.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "early_signals.h"
#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/run_index.h"
#include "lengen/engine/run_table.h"
#include "lengen/engine/seed_stats.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_aggregate.h"
#include "lengen/engine/sweep_jobs.h"
#include "lengen/engine/sweep_run.h"
#include "progress.h"
#include "sweep_table.h"

namespace fs = std::filesystem;

namespace lengen::cli {

namespace {

void printSkipped(const engine::SweepIndex& index)
{
    std::fprintf(
        stderr,
        "left out %zu combination%s the config refuses (skip_refused; index.json lists them):\n",
        index.skipped.size(), index.skipped.size() == 1 ? "" : "s");
    for (size_t i = 0; i < index.skipped.size() && i < 8; ++i)
        std::fprintf(stderr, "  %s: %s\n", index.skipped[i].axes.c_str(),
                     index.skipped[i].why.c_str());
    if (index.skipped.size() > 8)
        std::fprintf(stderr, "  … and %zu more\n", index.skipped.size() - 8);
}

}  // namespace

int runSweepNew(const SweepNewArgs& args)
{
    const auto loaded = engine::loadConfigFile(args.config);
    for (const auto& w : loaded.warnings)
        std::fprintf(stderr, "warning: %s\n", w.toString().c_str());
    engine::NewSweep request = args.request;
    request.base = engine::sweepBaseRun(loaded.runs, args.config);
    request.baseSource = args.config;
    for (const auto& s : args.sets) {
        try {
            request.sets.push_back(engine::parseAxisSetting(s));
        } catch (const engine::Error& e) {
            throw engine::Error(engine::ErrorKind::Usage, std::string("--set: ") + e.what());
        }
    }
    const auto index = engine::createSweep(request);
    for (const auto& w :
         engine::sweepCurriculumWarnings(index))  // even with -q: it changes the science
        std::fprintf(stderr, "warning: %s\n", w.c_str());
    if (!args.quiet) {
        std::string shape;  // "pe 4 x seed 3"
        for (const auto& k : index.axisKeys) {
            std::set<std::string> values;
            for (const auto& c : index.cells)
                for (const auto& [key, v] : c.axes)
                    if (key == k)
                        values.insert(v);
            shape += (shape.empty() ? "" : " x ") + k + " " + std::to_string(values.size());
        }
        std::fprintf(stderr, "sweep %s: %zu cells (%s); run it with: lengen sweep run %s\n",
                     index.name.c_str(), index.cells.size(), shape.c_str(), request.outDir.c_str());
    }
    if (!index.skipped.empty())  // even with -q: the grid is not the one asked for
        printSkipped(index);
    std::printf("%s\n", request.outDir.c_str());
    return 0;
}

int runSweepTable(const std::string& dir, const std::vector<std::string>& columns,
                  const std::string& format)
{
    const auto keys = tableColumns(columns);
    const std::string root = engine::locateSweep(dir);
    const auto index = engine::readSweepIndex(root);
    // The cells' runs through the index beside them (the studio's and `lengen runs`' cache).
    std::map<std::string, engine::RunIndexEntry> byFile;
    for (auto& e : engine::indexRuns(root))
        byFile[fs::weakly_canonical(e.path).string()] = std::move(e);
    std::vector<engine::RunIndexEntry> rows;
    std::vector<std::string> labels;
    for (const auto& s : engine::sweepStatus(root, index)) {
        engine::RunIndexEntry e;
        const auto found = s.runFile.empty()
                               ? byFile.end()
                               : byFile.find(fs::weakly_canonical(s.runFile).string());
        if (found != byFile.end()) {
            e = found->second;
        } else {  // not started: its config and state, no results
            e.config = engine::flattenedConfig(s.cell->config);
            e.info.status = engine::stateName(s.state);
        }
        // The cell's axes in the sweep's own words (pe=rope, not RoPE), started or not.
        for (const auto& [k, v] : s.cell->axes)
            (k == "pe" ? e.info.positionEncoding : k == "task" ? e.info.task : e.config[k]) = v;
        rows.push_back(std::move(e));
        labels.push_back(s.cell->name);
    }
    const auto table = engine::runTable(rows, labels, keys.empty() ? index.axisKeys : keys, "cell");
    std::fputs(engine::formatRunTable(table, tableFormat(format)).c_str(), stdout);
    return 0;
}

// Issue 71: which stopped cells `sweep run --members` resumes together, and which alone (members
// take every step together: cells stopped at different steps cannot share one).
static void sayStoppedMembers(const std::string& root, const std::vector<engine::CellStatus>& all)
{
    for (const auto& line : engine::stoppedMembersPlan(root, all))
        std::fprintf(stderr, "sweep run --members resumes %s\n", line.c_str());
}

int runSweepStatus(const std::string& dir, bool json)
{
    const std::string root = engine::locateSweep(dir);
    const auto index = engine::readSweepIndex(root);
    // The same merged states as the executors and the studio read (sweep_jobs.h).
    std::string schedulerNote;
    const auto statuses = engine::sweepJobStatus(root, index, &schedulerNote);
    std::map<std::string, int> counts;
    nlohmann::json rows = nlohmann::json::array();
    auto bySlurm = [](const engine::CellStatus& s) { return s.job && s.job->scheduled; };
    const bool submitted = std::any_of(statuses.begin(), statuses.end(), bySlurm);
    auto slurmState = [&](const engine::CellStatus& s) {
        return !bySlurm(s)                     ? std::string(submitted ? "-" : "")
               : s.job->schedulerState.empty() ? "-"
                                               : s.job->schedulerState;
    };
    if (!json)
        std::printf("%-32s %-9s %-7s %13s %9s %-5s %-5s %s%s\n", "CELL", "STATE", "STAGE", "STEP",
                    "LOSS", "EVAL", "PROBE", submitted ? "SLURM       " : "", "NOTE");
    for (const auto& s : statuses) {
        ++counts[engine::stateName(s.state)];
        if (json) {
            nlohmann::json axes = nlohmann::json::object();
            for (const auto& [k, v] : s.cell->axes)
                axes[k] = v;
            rows.push_back({{"index", s.cell->index},
                            {"name", s.cell->name},
                            {"axes", axes},
                            {"state", engine::stateName(s.state)},
                            {"stage", s.stage},
                            {"step", s.step},
                            {"total_steps", s.totalSteps},
                            {"last_loss", std::isfinite(s.lastLoss) ? nlohmann::json(s.lastLoss)
                                                                    : nlohmann::json()},
                            {"eval_done", s.evalDone},
                            {"probe_done", s.probeDone},
                            {"message", s.message},
                            {"run", s.runFile},
                            {"scheduler_state", slurmState(s)},
                            {"executor", !s.job       ? ""
                                         : bySlurm(s) ? "slurm"
                                                      : "local"},
                            {"job_id", s.holder()}});
            continue;
        }
        const std::string step = std::to_string(s.step) + "/" + std::to_string(s.totalSteps);
        const char* eval = !index.stages.eval ? "-" : s.evalDone ? "yes" : "no";
        const char* probe = !index.stages.probe ? "-" : s.probeDone ? "yes" : "no";
        char slurmColumn[32] = "";
        if (submitted)
            std::snprintf(slurmColumn, sizeof slurmColumn, "%-12s", slurmState(s).c_str());
        std::printf("%-32s %-9s %-7s %13s %9s %-5s %-5s %s%s\n", s.cell->name.c_str(),
                    engine::stateName(s.state), s.stage.c_str(), step.c_str(),
                    shortNumber(s.lastLoss, "-").c_str(), eval, probe, slurmColumn,
                    s.message.c_str());
    }
    if (json)
        std::printf("%s\n", rows.dump(1).c_str());
    if (!schedulerNote.empty())
        std::fprintf(stderr, "%s\n", schedulerNote.c_str());
    std::string extra;  // states only some sweeps reach
    for (const char* k : {"requeued", "cancelled"})
        if (counts[k])
            extra += ", " + std::to_string(counts[k]) + " " + k;
    if (!index.skipped.empty())
        extra += "; " + std::to_string(index.skipped.size()) + " combination" +
                 (index.skipped.size() == 1 ? "" : "s") + " left out (the config refuses them)";
    std::fprintf(stderr,
                 "%s: %zu cells: %d done, %d running, %d pending, %d stopped, %d failed%s\n",
                 root.c_str(), statuses.size(), counts["done"], counts["running"],
                 counts["pending"], counts["stopped"], counts["failed"], extra.c_str());
    sayStoppedMembers(root, statuses);
    if (counts["failed"] > 0)
        return engine::exitCodeFor(engine::ErrorKind::Runtime);
    return counts["done"] == int(statuses.size()) ? 0 : kSweepUnfinished;
}

int runSweepCancel(const std::string& dir, const std::vector<std::string>& cells, double wait)
{
    const auto report = engine::cancelSweepCells(dir, cells);
    auto list = [](const std::vector<std::string>& v) {
        std::string out;
        for (const auto& x : v)
            out += (out.empty() ? "" : ", ") + x;
        return out;
    };
    if (!report.scancelled.empty())
        std::fprintf(stderr, "scancel %s\n", list(report.scancelled).c_str());
    if (!report.signalled.empty())
        std::fprintf(stderr, "asked to stop with a checkpoint: %s\n",
                     list(report.signalled).c_str());
    if (!report.ended.empty())
        std::fprintf(stderr, "already ended (left alone): %s\n", list(report.ended).c_str());
    std::fprintf(stderr,
                 "cancelled %zu cell%s%s; `lengen sweep run` or `submit` takes them again\n",
                 report.cancelled.size(), report.cancelled.size() == 1 ? "" : "s",
                 report.cancelled.empty() ? "" : (": " + list(report.cancelled)).c_str());
    if (wait > 0 && !report.cancelled.empty()) {
        if (!engine::waitForSweepCells(dir, report.cancelled, wait)) {
            std::fprintf(stderr,
                         "some cells still run after %.0f s (`lengen sweep status` shows them)\n",
                         wait);
            return 124;
        }
        std::fprintf(stderr, "every cancelled cell has ended\n");
    }
    return 0;
}

int runSweepAggregate(const SweepAggregateArgs& args)
{
    const std::string root = engine::locateSweep(args.dir);
    engine::AggregateOptions options = args.options;
    if (!args.band.empty())
        options.band = engine::bandKindFromName(args.band).value_or(options.band);
    const auto aggregate = engine::aggregateSweep(root, options);
    const auto methods = engine::aggregateMethods(aggregate);
    if (!args.method.empty() &&
        std::find(methods.begin(), methods.end(), args.method) == methods.end() && !methods.empty())
        throw engine::Error(engine::ErrorKind::Usage, "--method " + args.method + ": no cell of " +
                                                          root + " has it evaluated");
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
    // Named, not hidden: axes left out of --by (the seed aside) are mixed inside each group.
    std::string mixed;
    for (const auto& k : engine::readSweepIndex(root).axisKeys)
        if (k != "seed" && std::find(aggregate.groupBy.begin(), aggregate.groupBy.end(), k) ==
                               aggregate.groupBy.end())
            mixed += (mixed.empty() ? "" : ", ") + k;
    if (!mixed.empty())
        std::fprintf(stderr, "each group mixes the cells' values of %s (not in --by)\n",
                     mixed.c_str());
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
