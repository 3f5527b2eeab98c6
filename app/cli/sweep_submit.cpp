// `lengen sweep submit`: the sweep's unfinished cells as one Slurm job array, one array task per
// cell running `lengen sweep run-cell DIR INDEX`. The script it writes (slurm/job.sh, printed by
// --dry-run) is the whole contract with the scheduler:
//  * `--signal=B:USR1@S` asks Slurm to signal the batch shell S seconds before the time limit;
//    the shell passes one SIGTERM to the cell (which finishes its step and writes a checkpoint)
//    and requeues its own array task, which then resumes the checkpoint bitwise exactly.
//  * scancel, `scontrol requeue` and preemption send SIGTERM to every process of the task: the
//    cell gets it directly (so the shell must not pass on a second one, which would make the cell
//    leave at once) and writes its checkpoint within KillWait.
// slurm/submitted.json records the job so that `sweep status` can ask squeue about it.

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "lengen/engine/errors.h"
#include "lengen/engine/sweep.h"
#include "subprocess.h"
#include "sweep_commands.h"

namespace fs = std::filesystem;

namespace lengen::cli {

namespace {

// Single-quoted for bash: the sweep folder may hold spaces or quotes.
std::string shellQuote(const std::string& s)
{
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// "0-3" or "0,2,5-7": Slurm's array list of the cell indices (ascending).
std::string arrayList(const std::vector<int>& indices)
{
    std::string out;
    for (size_t i = 0; i < indices.size();) {
        size_t j = i;
        while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1)
            ++j;
        out += (out.empty() ? "" : ",") + std::to_string(indices[i]);
        if (j > i)
            out += "-" + std::to_string(indices[j]);
        i = j + 1;
    }
    return out;
}

std::string nowIso()
{
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

std::string schedulerHint(const CommandResult& r, const std::string& what)
{
    if (!r.started)
        return what + " was not found: is Slurm's client installed and on PATH? (`lengen sweep run` "
                      "runs the sweep on this machine)";
    if (r.timedOut)
        return what + " did not answer within its time limit: is slurmctld running and reachable?";
    const std::string line = firstLine(r.output);
    return what + " failed (exit " + std::to_string(r.exitCode) + ")" + (line.empty() ? "" : ": " + line);
}

}  // namespace

static std::string slurmScript(const SweepSubmitArgs& args, const engine::SweepPaths& paths,
                        const engine::SweepIndex& index, const std::vector<int>& cells)
{
    const int cpus = args.cpusPerJob > 0 ? args.cpusPerJob : 1;
    std::ostringstream s;
    s << "#!/bin/bash\n";
    s << "#SBATCH --job-name=" << "lengen-" << index.name << "\n";
    s << "#SBATCH --array=" << arrayList(cells);
    if (args.maxParallel > 0)
        s << "%" << args.maxParallel;
    s << "\n";
    s << "#SBATCH --cpus-per-task=" << cpus << "\n";
    if (args.gpusPerJob > 0)
        s << "#SBATCH --gpus-per-task=" << args.gpusPerJob << "\n";
    if (!args.partition.empty())
        s << "#SBATCH --partition=" << args.partition << "\n";
    if (!args.time.empty())
        s << "#SBATCH --time=" << args.time << "\n";
    s << "#SBATCH --output=" << paths.root << "/logs/slurm-%A_%a.out\n";
    s << "#SBATCH --open-mode=append\n";
    s << "#SBATCH --requeue\n";
    s << "#SBATCH --signal=B:USR1@" << args.signalSeconds << "\n";
    for (const auto& a : args.sbatchArgs)
        s << "#SBATCH " << a << "\n";
    s << "# Written by `lengen sweep submit` for the sweep " << paths.root << "\n"
      << "# (docs/sweep-format.md). One array task per cell; the task id is the cell's index.\n"
      << "set -u\n"
      << "cells=(";
    for (const auto& c : index.cells)
        s << (c.index ? " " : "") << c.name;
    s << ")\n"
      << "cell=${cells[$SLURM_ARRAY_TASK_ID]}\n"
      << "exec >>" << shellQuote(paths.root + "/logs/") << "\"$cell.log\" 2>&1\n"
      << "echo \"== $(date -u +%FT%TZ) Slurm job ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID} on "
         "$(hostname) (restart ${SLURM_RESTART_COUNT:-0})\"\n"
      << shellQuote(args.lengen) << " sweep run-cell " << shellQuote(paths.root)
      << " \"$SLURM_ARRAY_TASK_ID\" --threads \"${SLURM_CPUS_PER_TASK:-" << cpus << "}\"";
    if (!args.device.empty())
        s << " --device " << shellQuote(args.device);
    s << " &\n"
      << "child=$!\n"
      << "requeue=0\n"
      << "# Near the time limit: one SIGTERM to the cell (it checkpoints), then requeue this task.\n"
      << "trap 'requeue=1; kill -TERM $child' USR1\n"
      << "# scancel / requeue / preemption signal the cell directly: do not send it a second one.\n"
      << "trap ':' TERM\n"
      << "while :; do wait $child; rc=$?; kill -0 $child 2>/dev/null || break; done\n"
      << "if [ $requeue = 1 ]; then\n"
      << "    echo \"== time limit near: requeueing to resume from the checkpoint\"\n"
      << "    scontrol requeue \"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"\n"
      << "fi\n"
      << "exit $rc\n";
    return s.str();
}

int runSweepSubmit(SweepSubmitArgs args)
{
    // Absolute: the job runs in another working directory, maybe on another machine.
    fs::path root = fs::absolute(engine::locateSweep(args.dir)).lexically_normal();
    if (root.filename().empty())
        root = root.parent_path();
    const engine::SweepPaths paths{root.string()};
    const auto index = engine::prepareSweep(paths.root);  // validates every cell first
    if (args.lengen.empty())
        args.lengen = lengenExecutable();
    std::vector<int> cells;
    int done = 0, running = 0;
    for (const auto& st : engine::sweepStatus(paths.root, index)) {
        if (st.state == "done")
            ++done;
        else if (st.state == "running")
            ++running;
        else if (st.state != "failed" || args.retryFailed)
            cells.push_back(st.cell->index);
    }
    if (cells.empty()) {
        std::fprintf(stderr, "sweep %s: nothing to submit (%d done, %d running%s)\n", index.name.c_str(), done,
                     running, args.retryFailed ? "" : "; failed cells need --retry-failed");
        return 0;
    }
    const std::string script = slurmScript(args, paths, index, cells);
    if (args.dryRun) {
        std::fputs(script.c_str(), stdout);
        return 0;
    }
    fs::create_directories(paths.root + "/slurm");
    fs::create_directories(paths.root + "/logs");
    const std::string scriptFile = paths.root + "/slurm/job.sh";
    engine::writeSweepTextFile(scriptFile, script);
    fs::permissions(scriptFile, fs::perms::owner_exec, fs::perm_options::add);
    const auto r = runCommand({"sbatch", "--parsable", "--chdir=" + paths.root, scriptFile}, 60);
    if (!r.started || r.timedOut || r.exitCode != 0)
        throw engine::Error(engine::ErrorKind::Scheduler, schedulerHint(r, "sbatch"), r.output);
    const std::string jobId = firstLine(r.output).substr(0, firstLine(r.output).find(';'));
    if (jobId.empty() || jobId.find_first_not_of("0123456789") != std::string::npos)
        throw engine::Error(engine::ErrorKind::Scheduler, "sbatch printed no job id: " + firstLine(r.output),
                            r.output);
    nlohmann::json record = {{"job_id", jobId}, {"cells", cells}, {"submitted_at", nowIso()},
                             {"script", "slurm/job.sh"}, {"scheduler", "slurm"}};
    // Earlier submissions stay listed: status asks about every job that may still hold a cell.
    nlohmann::json all = nlohmann::json::array();
    try {
        std::ifstream in(paths.root + "/slurm/submitted.json");
        if (in)
            all = nlohmann::json::parse(in);
        if (!all.is_array())
            all = nlohmann::json::array();
    } catch (const std::exception&) {
        all = nlohmann::json::array();
    }
    all.push_back(record);
    engine::writeSweepTextFile(paths.root + "/slurm/submitted.json", all.dump(1) + "\n");
    std::fprintf(stderr, "sweep %s: submitted %zu cell%s as Slurm job array %s (%s); logs in %s/logs; "
                         "watch with: lengen sweep status %s\n",
                 index.name.c_str(), cells.size(), cells.size() == 1 ? "" : "s", jobId.c_str(),
                 arrayList(cells).c_str(), paths.root.c_str(), args.dir.c_str());
    std::printf("%s\n", jobId.c_str());
    return 0;
}

std::map<int, std::string> slurmCellStates(const std::string& root, std::string* note)
{
    std::map<int, std::string> states;
    std::ifstream in(root + "/slurm/submitted.json");
    if (!in)
        return states;
    nlohmann::json all;
    try {
        all = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
        if (note)
            *note = root + "/slurm/submitted.json is damaged (" + e.what() + ")";
        return states;
    }
    std::string ids;
    for (const auto& rec : all)
        if (rec.is_object() && rec.contains("job_id") && rec["job_id"].is_string())
            ids += (ids.empty() ? "" : ",") + rec["job_id"].get<std::string>();
    if (ids.empty())
        return states;
    // %i is "JOB_TASK" for a running task and "JOB_[0-3%2]" for the pending rest of an array.
    const auto r = runCommand({"squeue", "-h", "-r", "-j", ids, "-o", "%i %T"}, 20);
    if (!r.started || r.timedOut || r.exitCode != 0) {
        if (note)
            *note = "scheduler: " + schedulerHint(r, "squeue");
        return states;
    }
    std::istringstream lines(r.output);
    std::string id, state;
    while (lines >> id >> state) {
        const size_t us = id.find('_');
        if (us == std::string::npos)
            continue;
        try {
            states[std::stoi(id.substr(us + 1))] = state;
        } catch (const std::exception&) {
        }
    }
    if (note)
        *note = "Slurm job" + std::string(ids.find(',') == std::string::npos ? " " : "s ") + ids + ": " +
                std::to_string(states.size()) + " task" + (states.size() == 1 ? "" : "s") + " in the queue";
    return states;
}

}  // namespace lengen::cli
