// Jobs as files show them (jobs.h): the job-kind table, the analysis marker, and findJobs, what
// `lengen jobs` and the studio's Jobs panel list.

#include "lengen/engine/jobs.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <set>

#include "io/h5.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_jobs.h"

namespace fs = std::filesystem;

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

std::string thisHolder()
{
    char host[256] = "";
    ::gethostname(host, sizeof host - 1);
    return std::string(host) + ":" + std::to_string(::getpid());
}

std::string JobRecord::key() const
{
    return std::string(jobKindRow(kind).name) + "|" + subject + "|" + cell + "|" + holder;
}

bool JobRecord::heldHere() const { return holder == thisHolder(); }

struct AnalysisJobMarker::Lock {
    std::unique_ptr<io::WriterLock> lock;
};

namespace {
constexpr const char* kMarkerPrefix = ".lengen-job-";  // .lengen-job-<kind>-<pid>-<n>.lock
}  // namespace

AnalysisJobMarker::AnalysisJobMarker(const std::string& runFile, JobKindId kind) : m_lock(std::make_unique<Lock>())
{
    static std::atomic<int> next{0};
    std::string name = jobKindRow(kind).name;
    for (auto& c : name)
        if (c == ' ')
            c = '_';
    try {
        const auto dir = fs::path(locateRunFile(runFile)).parent_path();
        m_lock->lock = std::make_unique<io::WriterLock>(
            (dir / (kMarkerPrefix + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(next++))).string());
    } catch (const std::exception&) {
        // A folder that takes no file: the job runs, unlisted.
    }
}

AnalysisJobMarker::~AnalysisJobMarker() = default;

std::vector<JobRecord> findJobs(const std::vector<std::string>& folders, std::string* note)
{
    std::vector<JobRecord> out;
    std::set<std::string> sweeps, runs, markers;
    for (const auto& folder : folders) {
        std::error_code ec;
        if (fs::is_regular_file(folder, ec)) {
            runs.insert(fs::absolute(folder).lexically_normal().string());
            continue;
        }
        for (fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec), end;
             !ec && it != end; it.increment(ec)) {
            const auto name = it->path().filename().string();
            if (name == "run.h5")
                runs.insert(fs::absolute(it->path()).lexically_normal().string());
            else if (name == "sweep.yaml" && fs::exists(it->path().parent_path() / "index.json"))
                sweeps.insert(fs::absolute(it->path().parent_path()).lexically_normal().string());
            else if (name.rfind(kMarkerPrefix, 0) == 0 && name.size() > 5 && name.compare(name.size() - 5, 5, ".lock") == 0)
                markers.insert(fs::absolute(it->path()).lexically_normal().string());
        }
    }
    // Sweep cells first: a cell's training is listed as its cell, not twice.
    std::set<std::string> cellRuns;
    for (const auto& root : sweeps) {
        try {
            const auto index = readSweepIndex(root);
            std::string said;
            for (const auto& st : sweepJobStatus(root, index, &said)) {
                cellRuns.insert(SweepPaths{root}.runFile(st.cell->name));
                const bool live = st.state == SweepCellState::Running || st.state == SweepCellState::Requeued ||
                                  st.queued;
                if (!live)
                    continue;
                JobRecord j;
                j.kind = JobKindId::SweepCell;
                j.state = stateName(st.state);
                j.subject = root;
                j.cell = st.cell->name;
                j.holder = st.jobId;
                j.schedulerState = st.scheduler;
                j.step = st.step;
                j.totalSteps = st.totalSteps;
                j.lastLoss = st.lastLoss;
                out.push_back(j);
            }
            if (note && !said.empty())
                *note += (note->empty() ? "" : "; ") + said;
        } catch (const std::exception& e) {
            if (note)
                *note += (note->empty() ? "" : "; ") + std::string(e.what());
        }
    }
    for (const auto& run : runs) {
        if (cellRuns.count(run) || !io::writerAlive(run))
            continue;
        JobRecord j;
        j.kind = JobKindId::Training;
        j.state = "running";
        j.subject = run;
        j.holder = io::writerHolder(run);
        try {
            const auto info = readRunInfo(run);
            j.step = std::max<std::int64_t>({info.checkpointStep, info.lastLoggedStep, 0});
            j.totalSteps = info.totalSteps;
            j.lastLoss = info.lastLoss;
        } catch (const std::exception&) {
            j.lastLoss = std::nan("");  // being created: its writer holds the lock already
        }
        out.push_back(j);
    }
    // Evaluations and probes: a live marker beside the run (a dead one is a crashed process's).
    for (const auto& m : markers) {
        const std::string base = m.substr(0, m.size() - 5);  // the lock's own path
        if (!io::writerAlive(base))
            continue;
        const auto name = fs::path(base).filename().string().substr(std::string(kMarkerPrefix).size());
        JobRecord j;
        j.kind = name.rfind("probes", 0) == 0 ? JobKindId::Probe : JobKindId::Evaluation;
        j.state = "running";
        j.subject = (fs::path(m).parent_path() / "run.h5").string();
        j.holder = io::writerHolder(base);
        j.lastLoss = std::nan("");
        out.push_back(j);
    }
    return out;
}

}  // namespace lengen::engine
