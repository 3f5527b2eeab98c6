// The Slurm executor: the sweep's unfinished cells as one Slurm job array, one array task per
// cell running `lengen sweep run-cell DIR INDEX`. The script it writes (slurm/job.sh, printed by
// `lengen sweep submit --dry-run`) is the whole contract with the scheduler:
//  * `--signal=B:USR1@S` asks Slurm to signal the batch shell S seconds before the time limit;
//    the shell passes one SIGTERM to the cell (which finishes its step and writes a checkpoint)
//    and requeues its own array task, which then resumes the checkpoint bitwise exactly.
//  * scancel, `scontrol requeue` and preemption send SIGTERM to every process of the task: the
//    cell gets it directly (so the shell must not pass on a second one, which would make the cell
//    leave at once) and writes its checkpoint within KillWait.
// jobs.json records the job (job_record.h) so that states and `sweep status` can ask squeue about
// it. Every scheduler call has a time limit (subprocess.h): a dead controller is Error(Scheduler).

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "lengen/engine/errors.h"
#include "lengen/engine/sweep_run.h"
#include "sweep/job_record.h"
#include "sweep/subprocess.h"

namespace fs = std::filesystem;

namespace lengen::engine {

using sweep::CommandResult;
using sweep::firstLine;
using sweep::runCommand;

namespace {

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

std::string schedulerHint(const CommandResult& r, const std::string& what)
{
    if (!r.started)
        return what +
               " was not found: is Slurm's client installed and on PATH? (`lengen sweep run` "
               "runs the sweep on this machine)";
    if (r.timedOut)
        return what + " did not answer within its time limit: is slurmctld running and reachable?";
    const std::string line = firstLine(r.output);
    return what + " failed (exit " + std::to_string(r.exitCode) + ")" +
           (line.empty() ? "" : ": " + line);
}

std::string slurmScript(const SlurmSweepOptions& args, const SweepPaths& paths,
                        const SweepIndex& index, const std::vector<int>& cells)
{
    const int cpus = args.cpusPerJob > 0 ? args.cpusPerJob : 1;
    std::ostringstream s;
    s << "#!/bin/bash\n";
    s << "#SBATCH --job-name="
      << "lengen-" << index.name << "\n";
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
      << "exec >>" << sweep::shellWord(paths.root + "/logs/") << "\"$cell.log\" 2>&1\n"
      << "echo \"== $(date -u +%FT%TZ) Slurm job ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID} on "
         "$(hostname) (restart ${SLURM_RESTART_COUNT:-0})\"\n"
      << sweep::shellWord(args.executable) << " sweep run-cell " << sweep::shellWord(paths.root)
      << " \"$SLURM_ARRAY_TASK_ID\" --threads \"${SLURM_CPUS_PER_TASK:-" << cpus << "}\"";
    if (!args.device.empty())
        s << " --device " << sweep::shellWord(args.device);
    s << " &\n"
      << "child=$!\n"
      << "requeue=0\n"
      << "# Near the time limit: one SIGTERM to the cell (it checkpoints), then requeue this "
         "task.\n"
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

std::vector<int> indices(const std::vector<const SweepCell*>& cells)
{
    std::vector<int> out;
    for (const auto* c : cells)
        out.push_back(c->index);
    return out;
}

class SlurmExecutor final : public SweepExecutor {
public:
    SlurmExecutor(const std::string& dir, SlurmSweepOptions options)
        : SweepExecutor(dir), m_options(std::move(options))
    {
        if (m_options.executable.empty())
            m_options.executable = lengenExecutable();
        if (m_options.executable.empty())  // every task would run '' and look pending forever
            throw Error(ErrorKind::Io, "cannot find the lengen executable for the cells to run");
    }

    std::string script(std::vector<int>* taken = nullptr)
    {
        SweepRunSummary s;
        const auto cells = indices(chooseCells(states(), m_options.retryFailed, s));
        if (taken)
            *taken = cells;
        return cells.empty() ? std::string()
                             : slurmScript(m_options, SweepPaths{m_dir}, m_index, cells);
    }

    SweepRunSummary submit(RunControl& control, SweepObserver& obs) override
    {
        const SweepPaths paths{m_dir};
        SweepRunSummary summary;
        const auto takenAt = std::chrono::system_clock::now();  // marks older than this are cleared
        const auto cells = indices(chooseCells(states(), m_options.retryFailed, summary));
        if (cells.empty()) {
            obs.onMessage(
                "sweep " + m_index.name + ": nothing to submit (" + std::to_string(summary.done) +
                " done, " + std::to_string(summary.elsewhere) + " running" +
                (summary.heldBy.empty() ? "" : " (" + heldByText(summary) + ")") +
                (m_options.retryFailed ? "" : "; failed cells need --retry-failed") + ")");
            return summary;
        }
        if (!control.shouldContinue()) {
            summary.cancelled = true;
            return summary;
        }
        const std::string text = slurmScript(m_options, paths, m_index, cells);
        fs::create_directories(paths.root + "/slurm");
        fs::create_directories(paths.root + "/logs");
        const std::string scriptFile = paths.root + "/slurm/job.sh";
        writeSweepTextFile(scriptFile, text);
        fs::permissions(scriptFile, fs::perms::owner_exec, fs::perm_options::add);
        const auto r =
            runCommand({"sbatch", "--parsable", "--chdir=" + paths.root, scriptFile}, 60);
        if (!r.started || r.timedOut || r.exitCode != 0)
            throw Error(ErrorKind::Scheduler, schedulerHint(r, "sbatch"), r.output);
        const std::string jobId = firstLine(r.output).substr(0, firstLine(r.output).find(';'));
        if (jobId.empty() || jobId.find_first_not_of("0123456789") != std::string::npos)
            throw Error(ErrorKind::Scheduler, "sbatch printed no job id: " + firstLine(r.output),
                        r.output);
        // Earlier submissions stay listed: states ask about every job that may still hold a cell.
        sweep::Submission record;
        record.executor = "slurm";
        record.jobId = jobId;
        record.cells = cells;
        sweep::recordSubmission(paths.root, record);
        for (int c : cells) {
            sweep::clearCancelMark(paths, m_index.cells[size_t(c)].name, takenAt);
        }
        summary.jobId = jobId;
        obs.onMessage("sweep " + m_index.name + ": submitted " + std::to_string(cells.size()) +
                      " cell" + (cells.size() == 1 ? "" : "s") + " as Slurm job array " + jobId +
                      " (" + arrayList(cells) + "); logs in " + paths.root + "/logs");
        return summary;
    }

private:
    SlurmSweepOptions m_options;
};

}  // namespace

std::unique_ptr<SweepExecutor> makeSlurmExecutor(const std::string& dir, SlurmSweepOptions options)
{
    return std::make_unique<SlurmExecutor>(dir, std::move(options));
}

std::string slurmJobScript(const std::string& dir, SlurmSweepOptions options)
{
    return SlurmExecutor(dir, std::move(options)).script();
}

std::map<int, std::string> slurmCellStates(const std::string& root, std::string* note)
{
    std::map<int, std::string> states;
    std::string ids;
    for (const auto& rec : sweep::readSubmissions(root, note))
        if (rec.executor == "slurm")
            ids += (ids.empty() ? "" : ",") + rec.jobId;
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
        *note = "Slurm job" + std::string(ids.find(',') == std::string::npos ? " " : "s ") + ids +
                ": " + std::to_string(states.size()) + " task" + (states.size() == 1 ? "" : "s") +
                " in the queue";
    return states;
}

}  // namespace lengen::engine
