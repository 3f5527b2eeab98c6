// The job-kind table and the words every front end uses for a job's state and result (jobs.h).

#include <cmath>
#include <cstdio>

#include "lengen/engine/jobs.h"

namespace lengen::engine {

const std::vector<JobKindRow>& jobKindTable()
{
    static const std::vector<JobKindRow> rows{
        {JobKindId::Training, "training", true, "steps"},
        {JobKindId::Evaluation, "evaluation", true, "methods"},
        {JobKindId::Probe, "probes", true, "probes"},
        {JobKindId::Export, "export", true, "files"},
        {JobKindId::Import, "import", false, "runs"},
        // A sweep's own job (creating, running, submitting) only starts processes: its cells
        // are the heavy work, each counted as its own job.
        {JobKindId::Sweep, "sweep", false, "cells"},
        {JobKindId::SweepCell, "sweep cell", true, "steps"},
    };
    return rows;
}

const JobKindRow& jobKindRow(JobKindId kind)
{
    for (const auto& r : jobKindTable())
        if (r.kind == kind)
            return r;
    return jobKindTable().front();
}

std::optional<JobKindId> jobKindNamed(const std::string& name)
{
    for (const auto& r : jobKindTable())
        if (name == r.name)
            return r.kind;
    return std::nullopt;
}

const char* jobStateName(JobState state, JobKindId kind)
{
    switch (state) {
    case JobState::Queued: return kind == JobKindId::SweepCell ? "pending" : "queued";
    case JobState::Running: return "running";
    case JobState::Paused: return "paused";
    case JobState::Stopping: return "stopping";
    case JobState::Finished: return "finished";
    case JobState::Cancelled: return "stopped";
    case JobState::Failed: return "failed";
    }
    return "?";
}

std::int64_t JobResult::count(JobKindId kind) const
{
    switch (kind) {
    case JobKindId::Training:
    case JobKindId::SweepCell: return steps;
    case JobKindId::Evaluation: return methods;
    case JobKindId::Probe: return probes;
    case JobKindId::Export: return figures;
    case JobKindId::Import: return runsImported;
    case JobKindId::Sweep: return cellsEnded;
    }
    return 0;
}

namespace {

std::string counted(std::int64_t n, const char* one, const char* many)
{
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string lossText(double loss)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", loss);
    return buf;
}

}  // namespace

std::string jobResultText(JobKindId kind, const JobResult& r, JobState how)
{
    if (!r.said.empty())
        return r.said;
    const bool stopped = how == JobState::Cancelled;
    switch (kind) {
    case JobKindId::Training:
    case JobKindId::SweepCell: {
        // "final" only for a run that ended: a stopped run's last logged loss is not final.
        const bool loss = std::isfinite(r.finalLoss) && r.steps > 0;
        if (stopped)
            return "stopped at step " + std::to_string(r.steps) +
                   (loss ? ", last logged loss " + lossText(r.finalLoss) : std::string());
        return counted(r.steps, "step", "steps") +
               (loss ? ", final loss " + lossText(r.finalLoss) : std::string());
    }
    case JobKindId::Evaluation: return counted(r.methods, "method", "methods") + " computed";
    case JobKindId::Probe: return counted(r.probes, "probe", "probes") + " computed";
    case JobKindId::Export: return counted(r.figures, "file", "files") + " written";
    case JobKindId::Import: return counted(r.runsImported, "run", "runs") + " imported";
    case JobKindId::Sweep: {
        std::string s = counted(r.cellsEnded, "cell", "cells") + " ended";
        if (r.cellsCancelled > 0)
            s += ", " + std::to_string(r.cellsCancelled) + " cancelled";
        if (r.cellsFailed > 0)
            s += ", " + std::to_string(r.cellsFailed) + " failed";
        return s;
    }
    }
    return {};
}

}  // namespace lengen::engine
