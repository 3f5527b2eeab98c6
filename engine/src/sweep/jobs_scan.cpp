// `lengen jobs`: trainings and sweep cells found under folders (jobs.h).

#include "lengen/engine/jobs.h"

#include <cmath>
#include <filesystem>
#include <set>

#include "io/h5.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep.h"
#include "lengen/engine/sweep_jobs.h"

namespace fs = std::filesystem;

namespace lengen::engine {

std::vector<FoundJob> findJobs(const std::vector<std::string>& folders, std::string* note)
{
    std::vector<FoundJob> out;
    std::set<std::string> sweeps, runs;
    for (const auto& folder : folders) {
        std::error_code ec;
        if (fs::is_regular_file(folder, ec)) {
            runs.insert(fs::absolute(folder).lexically_normal().string());
            continue;
        }
        for (fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec), end;
             !ec && it != end; it.increment(ec)) {
            const auto name = it->path().filename();
            if (name == "run.h5")
                runs.insert(fs::absolute(it->path()).lexically_normal().string());
            else if (name == "sweep.yaml" && fs::exists(it->path().parent_path() / "index.json"))
                sweeps.insert(fs::absolute(it->path().parent_path()).lexically_normal().string());
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
                FoundJob j;
                j.kind = "sweep cell";
                j.state = stateName(st.state);
                j.subject = root + " " + st.cell->name;
                j.holder = st.jobId;
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
        FoundJob j;
        j.kind = "training";
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
    return out;
}

}  // namespace lengen::engine
