// Which cells of a sweep train together as members (member_groups.h).

#include "sweep/member_groups.h"

#include <algorithm>
#include <filesystem>

#include "io/writer_lock.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep_run.h"
#include "lengen/engine/trainer.h"

namespace fs = std::filesystem;

namespace lengen::engine::sweep {

std::optional<MemberStart> memberStart(const SweepPaths& paths, const std::string& name)
{
    const std::string run = paths.runFile(name);
    MemberStart start;
    try {
        const auto info = fs::exists(run) ? std::optional(readRunInfo(run)) : std::nullopt;
        if (info && info->checkpointStep >= 0) {
            // Only a run a user or a signal stopped resumes as a member: a finished one is
            // done, a failed one (NaN, a full disk) is retried alone, where its message shows.
            if ((info->status != "cancelled" && info->status != "interrupted") ||
                io::writerAlive(run))
                return std::nullopt;
            start.config = storedRunConfig(info->configYaml, run);
            start.config.seed = info->seed;
            start.step = info->checkpointStep;
            start.precision = info->precision;
        } else if (info && info->status == "finished") {
            return std::nullopt;
        } else {
            start.config = loadConfigFile(paths.cellDir(name) + "/config.yaml").runs.at(0);
        }
    } catch (const std::exception&) {
        return std::nullopt;  // alone: its own process says what is wrong with it
    }
    if (!start.config.seed || !membersRefusal(start.config).empty())
        return std::nullopt;
    return start;
}

bool oneGroup(const MemberStart& a, const MemberStart& b)
{
    return a.step == b.step && a.precision == b.precision && sameRunButSeed(a.config, b.config);
}

}  // namespace lengen::engine::sweep

namespace lengen::engine {

using sweep::MemberStart;

std::vector<std::string> stoppedMembersPlan(const std::string& dir,
                                            const std::vector<std::string>& stoppedCells)
{
    const SweepPaths paths{locateSweep(dir)};
    struct Group {
        MemberStart start;
        std::vector<std::string> cells;
    };
    std::vector<Group> groups;
    for (const auto& name : stoppedCells) {
        auto start = sweep::memberStart(paths, name);
        if (!start || !start->step)
            continue;  // resumes alone for a reason of its own, or starts over
        auto g = std::find_if(groups.begin(), groups.end(),
                              [&](const Group& x) { return sweep::oneGroup(x.start, *start); });
        if (g == groups.end())
            groups.push_back({std::move(*start), {name}});
        else
            g->cells.push_back(name);
    }
    std::vector<std::string> lines;
    for (const auto& g : groups) {
        const std::string step = std::to_string(*g.start.step);
        if (g.cells.size() > 1) {
            lines.push_back(cellNamesText(g.cells, g.cells.size()) + " together from step " + step);
            continue;
        }
        // Alone: say which stopped cells of its config stopped elsewhere.
        std::string others;
        for (const auto& h : groups)
            if (&h != &g && sameRunButSeed(h.start.config, g.start.config))
                others += (others.empty() ? "" : ", ") + std::to_string(*h.start.step);
        lines.push_back(g.cells.front() + " alone from step " + step +
                        (others.empty() ? " (no other stopped cell of its config)"
                                        : " (the other stopped cells of its config stopped at "
                                          "step " +
                                              others + "; members take every step together)"));
    }
    return lines;
}

std::vector<std::string> stoppedMembersPlan(const std::string& dir,
                                            const std::vector<CellStatus>& cells)
{
    // Cancelled cells resume as stopped ones do (issue 81: `sweep status` said no plan for the
    // group a `sweep cancel` stopped, which sweep-format.md promises).
    std::vector<std::string> stopped;
    for (const auto& c : cells)
        if (c.cell && (c.state == SweepCellState::Stopped || c.state == SweepCellState::Cancelled))
            stopped.push_back(c.cell->name);
    return stoppedMembersPlan(dir, stopped);
}

}  // namespace lengen::engine
