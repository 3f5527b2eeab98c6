// Several cells of a sweep in this process, the fresh ones of one config (seed apart) trained
// as members of one batched model, or the stopped ones of one config at one step resumed as
// one (runSweepMembers; `lengen sweep run-cell DIR I J …`, which `sweep run --members K`
// starts; issues 58 and 71; who joins: member_groups.h).

#include <filesystem>
#include <optional>

#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/sweep_run.h"
#include "lengen/engine/trainer.h"
#include "sweep/cell_stages.h"
#include "sweep/member_groups.h"

namespace fs = std::filesystem;

namespace lengen::engine {

namespace {

using sweep::MemberStart;
using sweep::memberStart;
using sweep::oneGroup;

class CellGroup {
public:
    CellGroup(const SweepPaths& paths, const SweepIndex& sweep, const std::vector<int>& indices,
              const std::function<void(const std::string&)>& say)
        : m_paths(paths), m_outcomes(indices.size(), CellOutcome::Failed)
    {
        for (int index : indices)
            m_stages.emplace_back(paths, sweep, sweep::cellAt(sweep, paths.root, index), say);
    }
    void choose();
    void train(const CellRunOptions& options, RunControl& control, TrainObserver& training,
               AnalysisObserver& analysis);
    const std::vector<size_t>& alone() const { return m_alone; }
    sweep::CellStages& stages(size_t k) { return m_stages[k]; }
    std::vector<CellOutcome>& outcomes() { return m_outcomes; }

private:
    std::vector<MemberRun> runs(const CellRunOptions& options, TrainObserver& training);
    std::vector<MemberOutcome> trainOrRead(const std::vector<MemberRun>& runs,
                                           const CellRunOptions& options, RunControl& control);

    const SweepPaths& m_paths;
    std::vector<sweep::CellStages> m_stages;
    std::vector<CellOutcome> m_outcomes;
    std::vector<size_t> m_members, m_alone;
    // How each member starts: its config and seed, and the step a stopped group resumes.
    std::vector<MemberStart> m_starts;
    std::vector<char> m_told;  // per member: its end written already (onLeft)
};

// Who trains as a member: a cell that starts as the first one does (member_groups.h: fresh, or
// stopped at its step). A cell cancelled already stops; the others run alone after them.
void CellGroup::choose()
{
    for (size_t k = 0; k < m_stages.size(); ++k) {
        auto& st = m_stages[k];
        st.set("train");
        if (st.cancelMarked()) {
            m_outcomes[k] = st.stopped("cancelled before it started (sweep cancel)");
            continue;
        }
        auto start = memberStart(m_paths, st.cell().name);
        if (start && (m_starts.empty() || oneGroup(m_starts.front(), *start))) {
            m_members.push_back(k);
            m_starts.push_back(std::move(*start));
        } else {
            m_alone.push_back(k);
        }
    }
    if (m_members.size() == 1) {  // one member is a run alone
        m_alone.insert(m_alone.begin(), m_members.front());
        m_members.clear();
        m_starts.clear();
    }
    // A fresh member's run stopped before its first checkpoint has nothing to keep: it starts
    // over, as a cell alone does (runSweepCell).
    for (size_t i = 0; i < m_members.size() && !m_starts.front().step; ++i)
        fs::remove(m_stages[m_members[i]].runFile());
    m_told.assign(m_members.size(), 0);
}

std::vector<MemberRun> CellGroup::runs(const CellRunOptions& options, TrainObserver& training)
{
    std::vector<MemberRun> out;
    for (size_t i = 0; i < m_members.size(); ++i) {
        const TrainOptions o = m_stages[m_members[i]].trainOptions(options);
        MemberRun run;
        run.seed = *m_starts[i].config.seed;
        run.runDir = o.runDir;
        run.observer = out.empty() ? &training : nullptr;
        run.sweepCell = o.sweepCell;
        run.sweepAxes = o.sweepAxes;
        // A member stopped (`sweep cancel` of its cell) or failed says so at once: the cancel's
        // --wait and the studio see its cell end while the others train on.
        run.onLeft = [this, i](const MemberOutcome& r) {
            auto& st = m_stages[m_members[i]];
            if (!r.error.empty())
                st.set("failed", r.error, exitCodeFor(ErrorKind::Runtime));
            else if (r.summary.outcome == RunOutcome::Cancelled)
                st.stopped("stopped after " + std::to_string(r.summary.stepsDone) +
                           " steps; checkpoint written");
            else
                return;
            m_told[i] = 1;
        };
        out.push_back(std::move(run));
    }
    return out;
}

// The members trained; when the group fails as a whole (its setup, a device fault mid-run), a
// member whose run had ended already keeps that end and the others fail with the error.
std::vector<MemberOutcome> CellGroup::trainOrRead(const std::vector<MemberRun>& runs,
                                                  const CellRunOptions& options,
                                                  RunControl& control)
{
    TrainOptions o = m_stages[m_members.front()].trainOptions(options);
    o.runDir.clear();
    try {
        if (m_starts.front().step) {  // stopped together: resumed together
            std::vector<std::string> files;
            for (size_t k : m_members)
                files.push_back(m_stages[k].runFile());
            return resumeMembers(files, o, control, runs);
        }
        return trainMembers(m_starts.front().config, runs, o, control);
    } catch (const std::exception& e) {
        std::vector<MemberOutcome> out(m_members.size());
        for (size_t i = 0; i < m_members.size(); ++i) {
            std::optional<RunFileInfo> info;
            try {
                info = readRunInfo(m_stages[m_members[i]].runFile());
            } catch (const std::exception&) {
                // no run, or no readable one: it failed with the group
            }
            if (info && info->status == "finished")
                out[i].summary.outcome = RunOutcome::Finished;
            else if (info && info->status == "cancelled")
                out[i].summary.outcome = RunOutcome::Cancelled;
            else
                out[i].error = e.what();
            out[i].summary.stepsDone = info ? info->checkpointStep : 0;
        }
        return out;
    }
}

void CellGroup::train(const CellRunOptions& options, RunControl& control, TrainObserver& training,
                      AnalysisObserver& analysis)
{
    if (m_members.empty())
        return;
    std::string names;
    for (size_t k : m_members)
        names += (names.empty() ? "" : ", ") + m_stages[k].cell().name;
    const auto& step = m_starts.front().step;
    m_stages.front().note(
        "cells " + names +
        (step ? ": resumed from step " + std::to_string(*step) + " as members of one batched model"
              : ": trained as members of one batched model"));
    const auto out = trainOrRead(runs(options, training), options, control);
    for (size_t i = 0; i < m_members.size(); ++i) {
        auto& st = m_stages[m_members[i]];
        auto& outcome = m_outcomes[m_members[i]];
        const auto& r = out[i];
        try {
            if (m_told[i])
                outcome = r.error.empty() ? CellOutcome::Stopped : CellOutcome::Failed;
            else if (!r.error.empty())
                st.set("failed", r.error, exitCodeFor(ErrorKind::Runtime));
            else if (r.summary.outcome == RunOutcome::Cancelled)
                outcome = st.stopped("stopped after " + std::to_string(r.summary.stepsDone) +
                                     " steps; checkpoint written");
            else
                outcome = st.analyse(options, control, analysis);
        } catch (const std::exception& e) {
            st.failed(e);  // this cell's analysis failed; the others go on
        }
    }
}

}  // namespace

std::vector<CellOutcome> runSweepMembers(const std::string& dir, const std::vector<int>& indices,
                                         const CellRunOptions& options, RunControl& control,
                                         TrainObserver& training, AnalysisObserver& analysis,
                                         const std::function<void(const std::string&)>& say)
{
    const SweepPaths paths{locateSweep(dir)};
    const auto sweep = readSweepIndex(paths.root);
    CellGroup group(paths, sweep, indices, say);
    group.choose();
    group.train(options, control, training, analysis);
    for (size_t k : group.alone()) {
        if (control.isCancelRequested()) {
            group.outcomes()[k] = group.stages(k).stopped("stopped before it started");
            continue;
        }
        try {
            group.outcomes()[k] =
                runSweepCell(dir, indices[k], options, control, training, analysis, say);
        } catch (const std::exception&) {
            // Written to its cell.json by runSweepCell; the others go on.
        }
    }
    return group.outcomes();
}

}  // namespace lengen::engine
