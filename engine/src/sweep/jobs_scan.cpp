// Jobs as files show them (jobs.h): the analysis marker, and findJobs, what `lengen jobs` and
// the studio's Jobs panel list.

#include "lengen/engine/jobs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>

#include "io/h5.h"
#include "io/writer_lock.h"
#include "job_record.h"
#include "lengen/engine/run_control.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/run_index.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_jobs.h"

namespace fs = std::filesystem;

namespace lengen::engine {

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

AnalysisJobMarker::AnalysisJobMarker(const std::string& runFile, JobKindId kind)
    : m_lock(std::make_unique<Lock>())
{
    static std::atomic<int> next{0};
    std::string name = jobKindRow(kind).name;
    for (auto& c : name)
        if (c == ' ')
            c = '_';
    try {
        const auto dir = fs::path(locateRunFile(runFile)).parent_path();
        m_lock->lock = std::make_unique<io::WriterLock>(
            (dir / (kMarkerPrefix + name + "-" + std::to_string(::getpid()) + "-" +
                    std::to_string(next++)))
                .string());
    } catch (const std::exception&) {
        // A folder that takes no file: the job runs, unlisted.
    }
}

AnalysisJobMarker::~AnalysisJobMarker() = default;

namespace {
// When a job found on disk began: its lock file's modification time (the holder writes its
// name into it as it takes the lock), epoch ms; 0 when unknown.
std::int64_t startedMs(const std::string& lockFile)
{
    struct stat st = {};
    if (::stat(lockFile.c_str(), &st) != 0)
        return 0;
    return std::int64_t(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
}

// A live cell of sweep `root` as a job (its CellStatus holds it, sweep.h): running, stopping
// once `sweep cancel` marked it, or waiting (for the scheduler, or for a slot in `sweep run`).
JobRecord cellJob(const CellStatus& st)
{
    JobRecord j = *st.job;
    if (j.state == JobState::Running) {
        const SweepPaths paths{j.subject};
        j.startedAtMs = startedMs(paths.runFile(st.cell->name) + ".lock");
        if (sweep::cancelMarked(paths, st.cell->name))
            j.state = JobState::Stopping;  // cancelled: it stops at its next step
    }
    return j;
}

// Adds one thing said to findJobs' note (none asked: nothing).
void addJobNote(std::string* note, const std::string& said)
{
    if (note)
        *note += (note->empty() ? "" : "; ") + said;
}

// What findJobs looks at, as absolute normal paths: run files, sweep folders, job markers.
struct JobFolderScan {
    std::set<std::string> sweeps, runs, markers;
};

// The walk the Runs list makes too (run_index.h), over every folder; a folder that cannot be
// walked is said in the note.
JobFolderScan scanJobFolders(const std::vector<std::string>& folders, std::string* note)
{
    JobFolderScan out;
    const auto normal = [](const std::string& p) {
        return fs::absolute(p).lexically_normal().string();
    };
    for (const auto& folder : folders) {
        try {
            const auto scan = scanFolder(folder);
            for (const auto& f : scan.runFiles)
                out.runs.insert(normal(f));
            for (const auto& f : scan.sweeps)
                out.sweeps.insert(normal(f));
            for (const auto& f : scan.jobMarkers)
                out.markers.insert(normal(f));
        } catch (const std::exception& e) {  // a folder that changed under the walk twice
            addJobNote(note, e.what());
        }
    }
    return out;
}

// The live cells of sweep `root` as jobs, appended to out; every cell's run file goes into
// cellRuns, a live one's into liveCellRuns too.
void collectSweepCellJobs(const std::string& root, std::string* note, std::vector<JobRecord>& out,
                          std::set<std::string>& cellRuns, std::set<std::string>& liveCellRuns)
{
    try {
        const auto index = readSweepIndex(root);
        std::string said;
        for (const auto& st : sweepJobStatus(root, index, &said)) {
            cellRuns.insert(SweepPaths{root}.runFile(st.cell->name));
            // Live: running, requeued or queued (a cell's job is settled: sweep_jobs.h).
            if (!st.job || jobEnded(st.job->state))
                continue;
            liveCellRuns.insert(SweepPaths{root}.runFile(st.cell->name));
            out.push_back(cellJob(st));
        }
        if (!said.empty())
            addJobNote(note, said);
    } catch (const std::exception& e) {
        addJobNote(note, e.what());
    }
}

// A run file whose writer is alive, outside any sweep, as a training job.
JobRecord trainingJobOf(const std::string& run)
{
    JobRecord j;
    j.kind = JobKindId::Training;
    // Asked to stop (`lengen stop`, another studio's Stop): it stops at its next step.
    std::error_code ec;
    j.state = fs::exists(stopRequestPath(run), ec) ? JobState::Stopping : JobState::Running;
    j.subject = run;
    j.holder = io::writerHolder(run);
    j.startedAtMs = startedMs(run + ".lock");
    try {
        const auto info = readRunInfo(run);
        j.step = std::max<std::int64_t>({info.checkpointStep, info.lastLoggedStep, 0});
        j.totalSteps = info.totalSteps;
        j.lastLoss = info.lastLoss;
    } catch (const std::exception&) {
        j.lastLoss = std::nan("");  // being created: its writer holds the lock already
    }
    return j;
}

// The evaluation or probe job that marker file m stands for; none when its holder is gone,
// its kind unknown, or it works on a live cell's run.
std::optional<JobRecord> markerJobOf(const std::string& m,
                                     const std::set<std::string>& liveCellRuns)
{
    const std::string base = m.substr(0, m.size() - 5);  // the lock's own path
    if (!io::writerAlive(base))
        return std::nullopt;
    const auto name = fs::path(base).filename().string().substr(std::string(kMarkerPrefix).size());
    std::string kindName = name.substr(0, name.find('-'));  // "<kind>-<pid>-<n>"
    std::replace(kindName.begin(), kindName.end(), '_', ' ');
    const auto kind = jobKindNamed(kindName);
    if (!kind)
        return std::nullopt;
    JobRecord j;
    j.kind = *kind;
    j.state = JobState::Running;
    j.subject = (fs::path(m).parent_path() / "run.h5").string();
    if (liveCellRuns.count(j.subject))
        return std::nullopt;  // a live cell's own evaluation or probes: the cell's row is the job
    j.holder = io::writerHolder(base);
    j.startedAtMs = startedMs(m);
    j.lastLoss = std::nan("");
    return j;
}
}  // namespace

std::vector<JobRecord> findJobs(const std::vector<std::string>& folders, std::string* note)
{
    std::vector<JobRecord> out;
    const JobFolderScan scan = scanJobFolders(folders, note);
    // Sweep cells first: a cell's training is listed as its cell, not twice.
    std::set<std::string> cellRuns, liveCellRuns;
    for (const auto& root : scan.sweeps)
        collectSweepCellJobs(root, note, out, cellRuns, liveCellRuns);
    for (const auto& run : scan.runs) {
        if (cellRuns.count(run) || !io::writerAlive(run) ||
            io::writerRole(run) == io::LockRole::Notes)
            continue;  // a notes edit holds the lock for milliseconds: no job
        out.push_back(trainingJobOf(run));
    }
    // Evaluations and probes: a live marker beside the run (a dead one is a crashed process's).
    for (const auto& m : scan.markers)
        if (auto j = markerJobOf(m, liveCellRuns))
            out.push_back(std::move(*j));
    // What a training has done, as the studio's own jobs say it.
    for (auto& j : out)
        if (j.totalSteps > 0) {
            j.fraction = std::clamp(double(j.step) / double(j.totalSteps), 0.0, 1.0);
            j.progress = std::to_string(j.step) + "/" + std::to_string(j.totalSteps) + " steps";
        }
    return out;
}

}  // namespace lengen::engine
