// A sweep folder written from a request (createSweep), the cells a run takes, and where the
// `lengen` executable for cell processes lives. Running one cell in this process
// (runSweepCell) is cell_stages.cpp.

#include <algorithm>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include "file_tree.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep_run.h"
#include "lengen/engine/trainer.h"
#include "sweep/cell_stages.h"
#include "sweep/job_record.h"
#include "sweep/subprocess.h"

namespace fs = std::filesystem;

namespace lengen::engine {

namespace {

std::string selfDir()
{
    char path[4096];
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        return {};
    path[n] = '\0';
    return fs::path(path).parent_path().string();
}

}  // namespace

std::string lengenExecutable()
{
    // An explicit choice is the front end's (SessionSwitches::cellExecutable, LENGEN_CLI).
    const std::string dir = selfDir();
    // The CLI's launcher first (it blocks signals while LibTorch loads), then the real CLI;
    // from the studio (app/gui) the CLI of the same build is in ../cli.
    for (const std::string& candidate :
         {dir + "/lengen", dir + "/lengen-core", dir + "/../cli/lengen"})
        if (!dir.empty() && access(candidate.c_str(), X_OK) == 0)
            return fs::weakly_canonical(candidate).string();
    return sweep::findOnPath("lengen");
}

std::pair<std::string, std::vector<std::string>> parseAxisSetting(const std::string& setting)
{
    const size_t eq = setting.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == setting.size())
        throw Error(ErrorKind::Usage, "axis '" + setting +
                                          "': expected KEY=V1,V2,… (e.g. "
                                          "model.num_hidden_layers=4,6)");
    std::vector<std::string> values;
    const std::string text = setting.substr(eq + 1);
    size_t start = 0;
    while (true) {
        const size_t comma = text.find(',', start);
        values.push_back(
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return {setting.substr(0, eq), values};
}

RunConfig sweepBaseRun(const std::vector<RunConfig>& runs, const std::string& source)
{
    if (runs.size() != 1)
        throw ConfigError(
            {{{source, 0, 0},
              "model.max_length",
              "lists " + std::to_string(runs.size()) +
                  " values; a sweep cell is one run: give one value and add the others "
                  "as an axis (--set model.max_length=A,B, or in sweep.yaml; "
                  "docs/sweep-format.md)"}});
    return runs.front();
}

SweepIndex createSweep(const NewSweep& r)
{
    const fs::path out(r.outDir);
    if (fs::exists(out) && !(fs::is_directory(out) && fs::is_empty(out)))
        throw Error(ErrorKind::Usage, r.outDir +
                                          " already exists and is not an empty folder; choose "
                                          "another one");
    SweepSpec spec;
    spec.name = fs::absolute(out).lexically_normal().filename().string();
    spec.base = "base.yaml";
    if (!r.tasks.empty())
        spec.axes.push_back({"task", r.tasks, {}});
    if (!r.pes.empty())
        spec.axes.push_back({"pe", r.pes, {}});
    for (const auto& [key, values] : r.sets)
        spec.axes.push_back({key, values, {}});
    std::vector<std::string> seeds;
    for (int s = 1; s <= r.seeds; ++s)
        seeds.push_back(std::to_string(s));
    spec.axes.push_back({"seed", seeds, {}});
    spec.stages.eval = r.eval;
    spec.stages.evalOptions.methods = r.evalMethods;
    spec.stages.evalOptions.interventions = r.evalInterventions;
    spec.stages.evalOptions.prompts = r.evalPrompts;
    spec.stages.probe = r.probe;
    spec.skipRefused = r.skipRefused;
    if (r.probe)
        spec.stages.probeOptions = ProbeOptions::all();
    // Written next to the target and renamed once every cell validated: a bad axis leaves nothing.
    const fs::path partial = out.string() + ".partial";
    removeTree(partial.string());
    fs::create_directories(partial);
    try {
        std::ofstream(partial / "base.yaml")
            << "# Base config of this sweep, from " << r.baseSource << " (with its includes).\n"
            << toYaml(r.base, YamlStyle::Draft);
        std::ofstream(partial / "sweep.yaml") << sweepYaml(spec);
        auto index = prepareSweep(partial.string());
        if (fs::exists(out))
            fs::remove(out);
        fs::rename(partial, out);
        return index;
    } catch (const ConfigError& e) {
        // A problem in what this request wrote names the request, not the temporary folder.
        std::vector<ConfigIssue> issues = e.issues();
        const std::string written = (partial / "sweep.yaml").string();
        for (auto& i : issues)
            if (i.where.file == written)
                i.where = SourceLocation{"the new sweep's settings"};
        removeTree(partial.string());
        throw ConfigError(std::move(issues));
    } catch (...) {
        removeTree(partial.string());
        throw;
    }
}

std::vector<std::string> sweepCurriculumWarnings(const SweepIndex& index)
{
    std::vector<std::pair<std::string, std::vector<std::string>>> byText;  // in cell order
    for (const auto& cell : index.cells) {
        const auto text = curriculumShortfall(cell.config);
        if (text.empty())
            continue;
        auto it = std::find_if(byText.begin(), byText.end(),
                               [&](const auto& p) { return p.first == text; });
        if (it == byText.end())
            it = byText.insert(byText.end(), {text, {}});
        it->second.push_back(cell.name);
    }
    std::vector<std::string> out;
    for (const auto& [text, cells] : byText)
        out.push_back(std::to_string(cells.size()) + (cells.size() == 1 ? " cell (" : " cells (") +
                      cellNamesText(cells) + "): training.max_steps: " + text);
    return out;
}

std::string cellNamesText(const std::vector<std::string>& cells, std::size_t most)
{
    std::string names;
    for (std::size_t i = 0; i < cells.size() && i < most; ++i)
        names += (i ? ", " : "") + cells[i];
    return cells.size() > most ? names + ", …" : names;
}

std::vector<const SweepCell*> chooseCells(const std::vector<CellStatus>& statuses, bool retryFailed,
                                          SweepRunSummary& s)
{
    std::vector<const SweepCell*> cells;
    s.cells = int(statuses.size());
    const auto heldElsewhere = [&s](const CellStatus& st) {
        ++s.elsewhere;
        const std::string who = st.holder();
        if (!who.empty() && std::find(s.heldBy.begin(), s.heldBy.end(), who) == s.heldBy.end())
            s.heldBy.push_back(who);
    };
    for (const auto& st : statuses) {
        switch (st.state) {
        case SweepCellState::Done: ++s.done; break;
        case SweepCellState::Running:
        case SweepCellState::Requeued: heldElsewhere(st); break;  // another executor or Slurm
        case SweepCellState::Failed:
            if (retryFailed)
                cells.push_back(st.cell);
            else
                ++s.failedBefore;
            break;
        case SweepCellState::Pending:
            if (st.queued())
                heldElsewhere(st);  // a live `sweep run` or the scheduler will start it
            else
                cells.push_back(st.cell);
            break;
        case SweepCellState::Cancelled:
        case SweepCellState::Stopped: cells.push_back(st.cell); break;
        }
    }
    s.taken = int(cells.size());
    return cells;
}

std::string heldByText(const SweepRunSummary& summary)
{
    std::string out;
    for (const auto& who : summary.heldBy)
        out += (out.empty() ? "held by " : ", ") + who;
    return out;
}

SweepExecutor::SweepExecutor(const std::string& dir)
{
    m_dir = sweep::absoluteRoot(dir);
    m_index = prepareSweep(m_dir);  // validates every cell first
}

std::chrono::system_clock::time_point processStartTime()
{
    // Field 22 of /proc/self/stat: the start in clock ticks after boot; /proc/uptime: seconds
    // since boot, to 10 ms (btime in /proc/stat is whole seconds).
    const auto now = std::chrono::system_clock::now();
    std::ifstream stat("/proc/self/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');  // the command name may hold spaces
    double uptime = -1;
    std::ifstream("/proc/uptime") >> uptime;
    const long ticks = ::sysconf(_SC_CLK_TCK);
    if (close == std::string::npos || uptime < 0 || ticks <= 0)
        return now;
    std::istringstream fields(text.substr(close + 2));
    std::string field;
    for (int i = 3; i <= 22 && (fields >> field); ++i)
        if (i == 22) {
            const double ago =
                uptime - std::stod(field) / double(ticks);  // seconds since it started
            return now - std::chrono::duration_cast<std::chrono::system_clock::duration>(
                             std::chrono::duration<double>(std::max(0.0, ago)));
        }
    return now;
}

}  // namespace lengen::engine
