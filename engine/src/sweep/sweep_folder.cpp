// The sweep folder (docs/sweep-format.md): sweep.yaml, index.json, cells/<cell>/{config.yaml,
// cell.json, run.h5, analysis.h5}, logs/<cell>.log. Every file here is written to a temporary
// name and renamed, so a reader (`sweep status`, the studio, another node) never sees half of
// one. The run's own status stays in run.h5 (its writer is the one place that sets it); a cell's
// cell.json only says which stage its process is in and why it failed or stopped.

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "clock_text.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/interventions.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep.h"
#include "sweep/job_record.h"
#include "text_files.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace lengen::engine {

namespace {

constexpr std::uintmax_t kMaxIndexBytes = 64u << 20;

[[noreturn]] void damaged(const std::string& file, const std::string& why)
{
    throw Error(ErrorKind::RunFile, file + ": " + why +
                                        " (is this a LenGen sweep folder? "
                                        "`lengen sweep run` writes it again)");
}

}  // namespace

std::string locateSweep(const std::string& pathOrDir)
{
    fs::path p(pathOrDir);
    if (fs::is_regular_file(p) && p.filename() == "sweep.yaml")
        p = p.parent_path();
    if (!fs::is_regular_file(p / "sweep.yaml"))
        throw Error(ErrorKind::Usage, "no sweep at " + pathOrDir +
                                          " (a sweep folder holds sweep.yaml; "
                                          "create one with `lengen sweep new`)");
    return p.empty() ? std::string(".") : p.string();
}

SweepIndex prepareSweep(const std::string& dir)
{
    const SweepPaths paths{locateSweep(dir)};
    const SweepSpec spec = loadSweepFile(paths.sweepFile());
    SweepIndex index;
    index.cells = expandSweep(spec, &index.skipped);
    index.name = spec.name.empty() ? fs::absolute(paths.root).lexically_normal().filename().string()
                                   : spec.name;
    if (index.name.empty())
        index.name = fs::absolute(paths.root).lexically_normal().parent_path().filename().string();
    index.stages = spec.stages;
    for (const auto& a : spec.axes)
        index.axisKeys.push_back(a.key);
    // A changed cell with a run would mix two configs in one cell: refuse before writing.
    for (const auto& c : index.cells) {
        const fs::path config = fs::path(paths.cellDir(c.name)) / "config.yaml";
        if (fs::exists(paths.runFile(c.name)) && fs::exists(config) &&
            readTextFile(config.string(), 4u << 20) != c.configYaml)
            throw ConfigError({{SourceLocation{paths.sweepFile()}, "",
                                "cell " + c.name + ": its config changed since its run started (" +
                                    config.string() + "); restore sweep.yaml, or remove " +
                                    paths.cellDir(c.name) + " to run it again"}});
    }
    json cells = json::array();
    for (const auto& c : index.cells) {
        fs::create_directories(paths.cellDir(c.name));
        const std::string config = paths.cellDir(c.name) + "/config.yaml";
        if (!fs::exists(config) || readTextFile(config, 4u << 20) != c.configYaml)
            writeFileAtomically(config, c.configYaml);
        json axes = json::object();
        for (const auto& [k, v] : c.axes)
            axes[k] = v;
        cells.push_back({{"index", c.index},
                         {"name", c.name},
                         {"axes", axes},
                         {"task", c.config.task.name},
                         {"pe", c.config.peDisplayName()},
                         {"seed", *c.config.seed},
                         {"run", "cells/" + c.name + "/run.h5"}});
    }
    fs::create_directories(paths.root + "/logs");
    json doc = {{"format", "lengen-sweep-index"},
                {"version", kSweepIndexVersion},
                {"name", index.name},
                {"axes", index.axisKeys},
                {"cells", cells},
                {"written_at", utcNow()}};
    if (!index.skipped.empty()) {
        json skipped = json::array();
        for (const auto& s : index.skipped)
            skipped.push_back({{"axes", s.axes}, {"why", s.why}});
        doc["skipped"] = skipped;
    }
    writeFileAtomically(paths.indexFile(), doc.dump(1) + "\n");
    return index;
}

SweepIndex readSweepIndex(const std::string& dir)
{
    const SweepPaths paths{locateSweep(dir)};
    const std::string file = paths.indexFile();
    if (!fs::exists(file))
        throw Error(ErrorKind::Usage,
                    "the sweep " + paths.root +
                        " has not been prepared yet "
                        "(no index.json): run `lengen sweep run` or `sweep submit`");
    json doc;
    try {
        doc = json::parse(readTextFile(file, kMaxIndexBytes));
    } catch (const json::exception& e) {
        damaged(file, std::string("not valid JSON: ") + e.what());
    }
    SweepIndex index;
    try {
        if (doc.value("format", "") != "lengen-sweep-index")
            damaged(file, "not a sweep index (format is not \"lengen-sweep-index\")");
        if (doc.at("version").get<int>() != kSweepIndexVersion)
            damaged(file, "index version " + doc.at("version").dump() + " is not " +
                              std::to_string(kSweepIndexVersion));
        index.name = doc.at("name").get<std::string>();
        index.axisKeys = doc.at("axes").get<std::vector<std::string>>();
        std::set<std::string> names;
        for (const auto& c : doc.at("cells")) {
            SweepCell cell;
            cell.index = c.at("index").get<int>();
            cell.name = c.at("name").get<std::string>();
            // The name becomes a path: no separators, no "..", nothing hidden.
            if (cell.name.empty() || cell.name.find('/') != std::string::npos ||
                cell.name[0] == '.' || !names.insert(cell.name).second ||
                cell.index != int(index.cells.size()))
                damaged(file,
                        "cell " + std::to_string(index.cells.size()) + " has a bad name or index");
            for (const auto& key : index.axisKeys)
                cell.axes.emplace_back(key, c.at("axes").at(key).get<std::string>());
            cell.config.task.name = c.at("task").get<std::string>();
            cell.config.seed = c.at("seed").get<std::uint64_t>();
            index.cells.push_back(std::move(cell));
        }
        for (const auto& s : doc.value("skipped", json::array()))
            index.skipped.push_back(
                {s.at("axes").get<std::string>(), s.at("why").get<std::string>()});
    } catch (const json::exception& e) {
        damaged(file, std::string("missing or mistyped entry: ") + e.what());
    }
    index.stages = loadSweepFile(paths.sweepFile()).stages;
    return index;
}

void writeSweepTextFile(const std::string& path, const std::string& text)
{
    writeFileAtomically(path, text);
}

void writeCellState(const SweepPaths& paths, const std::string& cell, const CellState& s)
{
    const json doc = {{"stage", s.stage},
                      {"message", s.message},
                      {"exit_code", s.exitCode},
                      {"host", s.host.empty() ? sweep::hostName() : s.host},
                      {"pid", s.pid ? s.pid : std::int64_t(getpid())},
                      {"updated_at", utcNow()}};
    writeFileAtomically(paths.stateFile(cell), doc.dump(1) + "\n");
}

std::optional<CellState> readCellState(const SweepPaths& paths, const std::string& cell)
{
    const std::string file = paths.stateFile(cell);
    if (!fs::exists(file))
        return std::nullopt;
    try {
        const json doc = json::parse(readTextFile(file, 1u << 20));
        CellState s;
        s.stage = doc.at("stage").get<std::string>();
        s.message = doc.value("message", "");
        s.exitCode = doc.value("exit_code", 0);
        s.host = doc.value("host", "");
        s.pid = doc.value("pid", std::int64_t(0));
        s.updatedAt = doc.value("updated_at", "");
        return s;
    } catch (const json::exception& e) {
        CellState s;
        s.stage = "failed";
        s.message = file + " is damaged (" + e.what() + ")";
        return s;
    }
}

namespace {

bool storedAll(const std::vector<std::string>& stored, const std::vector<std::string>& wanted)
{
    std::set<std::string> have(stored.begin(), stored.end());
    for (const auto& w : wanted)
        if (!have.count(w))
            return false;
    return true;
}

// The interventions an eval stage asks of one run, as stored (canonical text; `all`: every
// one that applies to the run's config; none is the plain result).
std::vector<std::string> wantedInterventions(const std::vector<std::string>& texts,
                                             const RunFileInfo& info)
{
    std::vector<std::string> out;
    const auto config = storedRunConfig(info.configYaml, info.path);
    for (const auto& s : expandInterventions(texts, config))
        if (!s.isNone() && interventionRefusal(s, config).empty())  // skipped for this cell, as run
            out.push_back(s.text());
    return out;
}

// The probes a probe stage asks for, by the names the analysis file stores.
std::vector<std::string> wantedProbeNames(const ProbeOptions& po)
{
    std::vector<std::string> probes;
    if (po.attention)
        probes.push_back("attention");
    if (po.duplicated)
        probes.push_back("duplicated");
    if (po.serialPosition)
        probes.push_back("serial_position");
    return probes;
}

// Fills st's progress and stages done from the cell's run file; returns the run's status.
// Error when the run file cannot be read.
std::string readCellRunProgress(CellStatus& st, const std::string& run, const SweepStages& stages)
{
    const auto info = readRunInfo(run);
    // The log runs ahead of the checkpoint while a cell trains.
    st.step = std::max<std::int64_t>({info.checkpointStep, info.lastLoggedStep, 0});
    st.totalSteps = info.totalSteps;
    st.lastLoss = info.lastLoss;
    const auto contents = analysisContents(run);
    const auto& eo = stages.evalOptions;
    st.evalDone = storedAll(contents.evalMethods,
                            eo.methods.empty() ? evalMethodsFor(info.task) : eo.methods);
    if (st.evalDone && !eo.interventions.empty())
        st.evalDone =
            storedAll(contents.interventions, wantedInterventions(eo.interventions, info));
    st.probeDone = storedAll(contents.probes, wantedProbeNames(stages.probeOptions));
    return info.status;
}

// Sets st's state, stage and message from what the files say: the cell's state file (state),
// the run's status and the stages done.
void cellStateFromFiles(CellStatus& st, const SweepPaths& paths, const SweepStages& stages,
                        const std::optional<CellState>& state, const std::string& runStatus,
                        bool working)
{
    st.stage = state ? state->stage : runStatus.empty() ? "" : "train";
    const bool trained = runStatus == "finished";
    const bool allDone =
        trained && (!stages.eval || st.evalDone) && (!stages.probe || st.probeDone);
    if (state && state->stage == "failed") {
        st.state = SweepCellState::Failed;
        st.message = state->message;
    } else if (runStatus == "failed") {
        st.state = SweepCellState::Failed;
        st.message = state && !state->message.empty() ? state->message
                                                      : "training failed (see the cell's log)";
    } else if (runStatus == "running" || working) {
        st.state = SweepCellState::Running;
    } else if (allDone) {
        st.state = SweepCellState::Done;
        st.stage = "done";
    } else if (sweep::cancelMarked(paths, st.cell->name)) {
        st.state = SweepCellState::Cancelled;  // by `sweep cancel`; taken again by the next run
        st.message =
            state && state->stage == "stopped" ? state->message : "cancelled before it started";
    } else if (runStatus == "cancelled" || runStatus == "interrupted" ||
               (state && state->stage == "stopped")) {
        st.state = SweepCellState::Stopped;
        st.message = state ? state->message : "";
    }
}

// One cell's status, as its state file and its run file say it.
CellStatus statusOfCell(const SweepPaths& paths, const SweepIndex& index, const SweepCell& cell)
{
    CellStatus st;
    st.cell = &cell;
    st.state = SweepCellState::Pending;
    st.lastLoss = std::nan("");
    const auto state = readCellState(paths, cell.name);
    // Whether the cell's own process is at work on it (its state file names a live one).
    const bool working =
        state && (state->stage == "eval" || state->stage == "probe" || state->stage == "train") &&
        sweep::processAlive(state->host, state->pid);
    if (working) {  // the cell's own process holds it (sweep_jobs.cpp fills in the rest)
        st.job.emplace();
        st.job->kind = JobKindId::SweepCell;
        st.job->state = JobState::Running;
        st.job->cell = cell.name;
        st.job->holder = state->host + ":" + std::to_string(state->pid);
    }
    const std::string run = paths.runFile(cell.name);
    std::string runStatus;
    if (fs::exists(run)) {
        st.runFile = run;
        try {
            runStatus = readCellRunProgress(st, run, index.stages);
        } catch (const Error& e) {
            // A run file that a live cell process writes may be between states (just
            // created, a writer's lock held past the readers' wait): the cell runs. Only
            // a file nobody works on any more is damaged, and its cell failed.
            st.state = working ? SweepCellState::Running : SweepCellState::Failed;
            st.stage = working ? state->stage : "";
            st.message = (working ? "run file not readable yet: " : "") + std::string(e.what());
            return st;
        }
    }
    cellStateFromFiles(st, paths, index.stages, state, runStatus, working);
    return st;
}

}  // namespace

const char* stateName(SweepCellState state)
{
    switch (state) {
    case SweepCellState::Done: return "done";
    case SweepCellState::Pending: return "pending";
    case SweepCellState::Stopped: return "stopped";
    case SweepCellState::Running: return "running";
    case SweepCellState::Cancelled: return "cancelled";
    case SweepCellState::Requeued: return "requeued";
    case SweepCellState::Failed: return "failed";
    }
    return "?";
}

std::vector<CellStatus> sweepStatus(const std::string& dir, const SweepIndex& index)
{
    const SweepPaths paths{dir};
    std::vector<CellStatus> out;
    for (const auto& cell : index.cells)
        out.push_back(statusOfCell(paths, index, cell));
    return out;
}

}  // namespace lengen::engine
