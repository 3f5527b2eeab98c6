// The job-kind table and the words every front end uses for a job's state and result (jobs.h).

#include <cmath>
#include <cstdio>

#include <algorithm>

#include "lengen/engine/jobs.h"

namespace lengen::engine {

const std::vector<JobKindRow>& jobKindTable()
{
    using K = JobKindId;
    using R = JobRequest;
    constexpr bool Y = true, N = false;
    // A sweep's own job (creating, running, submitting) only starts processes: its cells are
    // the heavy work, each counted as its own job.
    // clang-format off
    static const std::vector<JobKindRow> rows{
    //   kind           name      heavy unit     units      verb        shown as         pausable  one  foreign  counts units
        {K::Training,   "training",   Y, "step",   "steps",   "",         "%1",               Y, Y, R::Stop,   N},
        {K::Evaluation, "evaluation", Y, "method", "methods", "computed", "evaluation of %1", N, N, R::None,   N},
        {K::Probe,      "probes",     Y, "probe",  "probes",  "computed", "probes of %1",     N, N, R::None,   N},
        {K::Export,     "export",     Y, "file",   "files",   "written",  "export of %1",     N, N, R::None,   N},
        {K::Import,     "import",     N, "run",    "runs",    "imported", "import into %1",   N, N, R::None,   N},
        {K::Sweep,      "sweep",      N, "cell",   "cells",   "ended",    "%1",               N, N, R::None,   Y},
        {K::SweepCell,  "sweep cell", Y, "step",   "steps",   "",         "%1",               N, N, R::Cancel, N},
    };
    // clang-format on
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
    const auto& row = jobKindRow(kind);
    const bool stopped = how == JobState::Cancelled;
    std::string text = counted(r.done, row.unit, row.units);
    if (*row.verb)
        text += std::string(" ") + row.verb;
    // "final" only for a run that ended: a stopped run's last logged loss is not final.
    if (std::isfinite(r.finalLoss) && r.done > 0)
        text += (stopped ? ", last logged loss " : ", final loss ") + lossText(r.finalLoss);
    if (r.cancelled > 0)
        text += ", " + std::to_string(r.cancelled) + " cancelled";
    if (r.failed > 0)
        text += ", " + std::to_string(r.failed) + " failed";
    return stopped ? "stopped after " + text : text;
}

std::string jobProgressText(JobKindId kind, const std::string& stageName, int stage, int stages,
                            std::int64_t done, std::int64_t total, const std::string& part)
{
    const auto& row = jobKindRow(kind);
    if (row.countsUnits)
        return std::to_string(done) + " of " + std::to_string(total) + " " + row.units +
               (*row.verb ? std::string(" ") + row.verb : std::string());
    std::string out = stageName;
    if (stages > 1)
        out += " (" + std::string(row.unit) + " " + std::to_string(stage + 1) + " of " +
               std::to_string(stages) + ")";
    // Where in the stage: its part, and its units when it counts more than one.
    std::string within = part;
    if (total > 1)
        within += (within.empty() ? "" : ", ") + std::to_string(std::min(done, total)) + " of " +
                  std::to_string(total);
    return within.empty() ? out : out + ": " + within;
}

}  // namespace lengen::engine
