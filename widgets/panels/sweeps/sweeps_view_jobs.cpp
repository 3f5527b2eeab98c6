// The Sweeps tab's jobs (sweeps_view.h): creating, running, stopping and submitting a sweep,
// aggregating it over seeds, and asking the scheduler about its cells, each as a job of the
// studio's RunController or off the GUI thread, so nothing of a sweep waits there.

#include "sweeps_view.h"

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QLabel>
#include <QSpinBox>
#include <QtConcurrent/QtConcurrentRun>
#include <map>
#include <set>

#include <utility>

#include "lengen/engine/errors.h"
#include "lengen/engine/jobs.h"
#include "lengen/engine/seed_stats.h"
#include "lengen/engine/sweep_aggregate.h"
#include "lengen/engine/sweep_jobs.h"
#include "lengen/engine/sweep_run.h"
#include "sweep_dialogs.h"

namespace lengen::ui {

void SweepsView::setController(RunController* controller)
{
    m_controller = controller;
    if (!controller)
        return;
    connect(controller, &RunController::stateChanged, this, [this] { refresh(); });
    connect(controller, &RunController::jobChanged, this, [this](const JobInfo& j) {
        if (j.id == shownRunJob() && !j.active() && !j.ended())
            refresh();  // queued: what it waits for changed
    });
}

// The located folder of the sweep shown ("" when none), read once when it was shown: job
// changes ask it, and they come at every progress report.
std::string SweepsView::shownRoot() const { return m_model.root(); }

quint64 SweepsView::shownRunJob() const
{
    const auto root = shownRoot();
    return root.empty() ? 0 : m_model.runHere(root);
}

bool SweepsView::runningHere() const
{
    const quint64 id = shownRunJob();
    const auto j = m_controller && id ? m_controller->job(id) : std::nullopt;
    return j && j->active();
}

QString SweepsView::queuedBehind() const
{
    const quint64 id = shownRunJob();
    const auto j = m_controller && id ? m_controller->job(id) : std::nullopt;
    return j && j->state == JobState::Queued ? QString::fromStdString(j->waitingFor) : QString();
}

// This view's local run of the sweep in `root` ended (whenEnded on its id): the grid shows the
// cells' last states, and a finished run is aggregated — when that sweep is the one shown.
QString SweepsView::summaryText() const { return m_summary->text(); }

void SweepsView::onRunEnded(const JobInfo& job, const std::string& root)
{
    if (job.id != m_model.runHere(root))
        return;
    m_model.setRunHere(root, 0);
    if (root != shownRoot())
        return refresh();  // another sweep is shown: its header says nothing of this run
    // Run here on a sweep others hold takes nothing: say so where it was asked (issue 70,
    // defect 4: the tab showed no answer), naming the holders.
    const QString said = job.result.said.find("held by") != std::string::npos
                             ? tr("Run here: %1").arg(QString::fromStdString(job.result.said))
                             : QString();
    m_model.setLastRun(said);
    if (!said.isEmpty())
        Q_EMIT statusMessage(said);
    refresh();
    if (job.state == JobState::Finished)
        aggregate();
}

// `squeue` may take seconds (20 s limit when the controller is dead): asked off the GUI thread,
// at most every 5 s and one question at a time; refresh() merges the last answer into the
// files' states by the engine's rule (engine::mergeJobStates, as `sweep status`).
void SweepsView::askScheduler(const std::string& root)
{
    if (!m_clock.isValid())
        m_clock.start();
    if (m_askScheduler.busy() || !m_model.schedulerDue(m_clock.elapsed()))
        return;
    if (!QFileInfo::exists(QString::fromStdString(root + "/jobs.json")) &&
        !QFileInfo::exists(QString::fromStdString(root + "/slurm/submitted.json")))
        return;  // never submitted: the files say everything
    m_model.schedulerAsked(m_clock.elapsed());
    m_askScheduler.submit([root] {
        SweepSchedulerView view;
        view.root = root;
        view.states = engine::slurmCellStates(root, &view.note);  // what squeue says, no more
        return view;
    });
}

void SweepsView::schedulerAnswered(SweepSchedulerView view, bool latest)
{
    if (latest && m_model.setSchedulerView(std::move(view), shownRoot()))
        refresh();  // else another sweep is shown now, or a newer question is on its way
}

std::optional<std::string> SweepsView::locateShown(const QString& failure)
{
    try {
        return engine::locateSweep(m_model.dir().toStdString());
    } catch (const std::exception& e) {
        Q_EMIT statusMessage(failure.arg(QString::fromUtf8(e.what())));
        return std::nullopt;
    }
}

engine::AggregateOptions SweepsView::aggregateOptions() const
{
    engine::AggregateOptions o;
    o.band = engine::BandKind(m_band->currentData().toInt());
    return o;
}

void SweepsView::aggregate() { m_aggregating.request(); }

void SweepsView::aggregatePass()
{
    if (m_model.index() && !m_model.aggregateDue()) {  // no job for nothing to read
        Q_EMIT statusMessage(m_model.index()->stages.eval
                                 ? tr("Nothing to aggregate yet: no cell is evaluated")
                                 : tr("Nothing to aggregate: this sweep does not evaluate its "
                                      "cells (stages.eval)"));
        drawFigure();
        return m_aggregating.done();
    }
    const auto located = m_model.index() ? locateShown(tr("Not aggregated: %1")) : std::nullopt;
    if (!located)
        return m_aggregating.done();
    const std::string& root = *located;
    const auto said = [this](const engine::SweepAggregate& a) {
        Q_EMIT statusMessage(a.missing.empty()
                                 ? tr("Aggregated over seeds")
                                 : tr("Aggregated; %n cell(s) without results left out", nullptr,
                                      int(a.missing.size())));
    };
    if (!m_controller) {  // a view on its own (tests): here and now
        try {
            m_model.setAggregate(engine::aggregateSweep(root, aggregateOptions()));
            engine::writeAggregate(engine::aggregateFileFor(root), *m_model.aggregate());
            said(*m_model.aggregate());
        } catch (const std::exception& e) {
            Q_EMIT statusMessage(tr("Not aggregated: %1").arg(QString::fromUtf8(e.what())));
        }
        drawFigure();
        return m_aggregating.done();
    }
    // A job (issue 39: it ran on the GUI thread, reading every cell's analysis file): one at a
    // time per view (m_aggregating), a request meanwhile runs once it ends. Its subject is the
    // aggregate file, so it never waits behind the sweep's own run.
    auto result = std::make_shared<std::optional<engine::SweepAggregate>>();
    const QString dir = m_model.dir();
    const auto options = aggregateOptions();
    const quint64 id = m_controller->enqueue(
        JobKind::Sweep, tr("aggregate %1").arg(QFileInfo(m_model.dir()).fileName()),
        [root, result, options](engine::RunControl&, engine::AnalysisObserver&) {
            auto a = engine::aggregateSweep(root, options);
            engine::writeAggregate(engine::aggregateFileFor(root), a);
            engine::JobResult r;
            // Said as what it did: a sweep whose cells hold no results yet aggregates nothing
            // (it read "finished: 0 cell(s) finished").
            std::set<std::string> cells;
            for (const auto& set : a.sets)
                cells.insert(set.cells.begin(), set.cells.end());
            r.said = a.sets.empty()
                         ? "nothing to aggregate yet (no cell evaluated)"
                         : "aggregated " + std::to_string(a.sets.size()) + " set(s) over " +
                               std::to_string(cells.size()) + " cell(s)";
            *result = std::move(a);
            return r;
        },
        QString::fromStdString(engine::aggregateFileFor(root)));
    m_controller->whenEnded(id, this, [=](const JobInfo& j) {
        if (m_model.dir() == dir) {  // else another sweep is shown now
            if (*result) {
                m_model.setAggregate(std::move(**result));
                said(*m_model.aggregate());
            } else {
                Q_EMIT statusMessage(
                    tr("Not aggregated: %1").arg(QString::fromStdString(j.message)));
            }
            drawFigure();
        }
        m_aggregating.done();
    });
}

namespace {

// An executor's reports as the progress of a controller job: cells ended of those it took, and
// its lines as the job's warnings (the status bar shows the latest).
class JobProgress final : public engine::SweepObserver {
public:
    explicit JobProgress(engine::AnalysisObserver& job) : m_job(job)
    {
        m_job.onStage(0, 1, "cells");
    }
    void onMessage(const std::string& line) override { m_job.onWarning(line); }
    void onCells(int ended, int total, double) override
    {
        m_job.onProgress("cells", ended, std::max(total, 1));
    }

private:
    engine::AnalysisObserver& m_job;
};

engine::JobResult jobResult(const engine::SweepRunSummary& s)
{
    engine::JobResult r;
    r.done = s.finished + s.stopped + s.failed;
    r.cancelled = s.stopped + s.cancelledHere;
    r.failed = s.failed;
    r.said = runHereSaid(s);
    return r;
}

// The cells another process holds (running, or queued by a live executor or the scheduler),
// by holder: "2 cell(s) held by host:1234 (000-rope-s1, 001-nope-s1)". Said when Run here
// starts: it takes only the cells nobody holds.
std::vector<std::string> cellsHeldElsewhere(const std::string& dir)
{
    std::map<std::string, std::vector<std::string>> byHolder;
    const auto index = engine::readSweepIndex(dir);
    for (const auto& st : engine::sweepJobStatus(dir, index))
        if (!st.holder().empty() && st.holder() != engine::thisHolder() &&
            (st.state == engine::SweepCellState::Running ||
             st.state == engine::SweepCellState::Requeued || st.queued()))
            byHolder[st.holder()].push_back(st.cell->name);
    std::vector<std::string> out;
    for (const auto& [holder, cells] : byHolder)
        out.push_back(std::to_string(cells.size()) + " cell(s) held by " + holder + " (" +
                      engine::cellNamesText(cells, 4) + "): left to it");
    return out;
}

}  // namespace

QString SweepsView::proposedFolder() const
{
    return defaultSweepFolder(m_runsFolders ? m_runsFolders() : QStringList(), QDir::currentPath());
}

void SweepsView::newSweep()
{
    const auto given = m_baseConfig ? m_baseConfig() : SweepBase{{}, tr("no config to start from")};
    if (!given.refusal.isEmpty() || given.runs.empty())
        return Q_EMIT statusMessage(tr("Sweep not created: %1").arg(given.refusal));
    const auto& runs = given.runs;
    const std::string source =
        runs.front().sourceFile.empty() ? "the studio's Set up tab" : runs.front().sourceFile;
    engine::RunConfig base;
    try {  // the CLI's rule: one run per sweep cell
        base = engine::sweepBaseRun(runs, source);
    } catch (const std::exception& e) {
        return Q_EMIT statusMessage(tr("Sweep not created: %1").arg(QString::fromUtf8(e.what())));
    }
    // A folder that is free: the last sweep's was proposed, then refused (issue 52). The dialog
    // fills the base in, with the steps its cells train (Set up's, changeable there).
    askNewSweep(this, proposedFolder(), base,
                [this, source](engine::NewSweep request, DialogReply reply) {
                    request.baseSource = source;
                    const quint64 id = createSweep(std::move(request));
                    if (!id)
                        return reply(tr("No job controller: sweeps cannot be created here"));
                    // The dialog stays open, every choice kept, until the sweep is written; a
                    // refusal is shown there, not only in the status bar after it closed.
                    m_controller->whenEnded(id, this, [reply](const JobInfo& j) {
                        reply(j.state == JobState::Finished ? QString()
                              : j.message.empty()           ? tr("The sweep was not created")
                                                            : QString::fromStdString(j.message));
                    });
                });
}

quint64 SweepsView::createSweep(engine::NewSweep request)
{
    if (!m_controller) {
        Q_EMIT statusMessage(tr("No job controller: sweeps cannot be created here"));
        return 0;
    }
    const QString dir = QString::fromStdString(request.outDir);
    const QString label = tr("new sweep %1").arg(QFileInfo(dir).fileName());
    // Every cell is loaded and validated first: seconds for a large grid, on the worker.
    const QString subject = QFileInfo(dir).absoluteFilePath();
    const quint64 id = m_controller->enqueue(
        JobKind::Sweep, label,
        [request = std::move(request)](engine::RunControl&, engine::AnalysisObserver& obs) {
            const auto index = engine::createSweep(request);
            std::string left;  // skip_refused: say what the grid lacks
            if (!index.skipped.empty())
                left = "; left out " + std::to_string(index.skipped.size()) + " combination" +
                       (index.skipped.size() == 1 ? "" : "s") + " the config refuses (" +
                       index.skipped.front().axes + ": " + index.skipped.front().why +
                       (index.skipped.size() > 1 ? "; …)" : ")");
            obs.onWarning("sweep " + index.name + ": " + std::to_string(index.cells.size()) +
                          " cells written to " + request.outDir + left);
            for (const auto& w : engine::sweepCurriculumWarnings(index))  // issue 52
                obs.onWarning("sweep " + index.name + ": " + w);
            engine::JobResult r;
            // What it did: cells written, none run yet ("finished: 2 cell(s)
            // finished" read as if they had run).
            r.said = "created " + std::to_string(index.cells.size()) + " cell(s)" +
                     (index.skipped.empty() ? std::string()
                                            : ", left out " + std::to_string(index.skipped.size()));
            return r;
        },
        subject);
    m_controller->whenEnded(id, this, [this, dir](const JobInfo& j) {
        if (j.state != JobState::Finished)
            return;
        setSweep(dir);  // the new sweep is shown
        // Its runs appear in Runs, Compare and Hyperparameters (issue 70, defect 3: a sweep
        // written outside the Runs list's folders never did).
        if (m_runsFolders && !folderUnder(dir, m_runsFolders()))
            Q_EMIT runsFolderWanted(QFileInfo(dir).absoluteFilePath());
    });
    Q_EMIT statusMessage(tr("Creating the sweep %1…").arg(dir));
    return id;
}

void SweepsView::runHere()
{
    if (m_model.dir().isEmpty())
        return;
    if (!m_controller)
        return Q_EMIT statusMessage(tr("No job controller: sweeps cannot run here"));
    const auto located =
        locateShown(tr("Sweep not run: %1"));  // moved or deleted since it was opened
    if (!located)
        return;
    const std::string& dir = *located;
    if (m_model.runHere(dir))
        return Q_EMIT statusMessage(tr("This sweep is already queued or running here"));
    const int jobs = m_jobs->value(), members = m_members->value();
    const QString label =
        members > 1
            ? tr("sweep %1, members of %2").arg(QFileInfo(m_model.dir()).fileName()).arg(members)
            : tr("sweep %1").arg(QFileInfo(m_model.dir()).fileName());
    // The local executor on the controller's worker: cell processes N at a time, Stop passes
    // each one SIGTERM (it checkpoints) and waits; the GUI thread only reads the cells' files.
    // A lane of its own: the cells are child processes, and never wait behind an evaluation.
    // Its cells take their threads from the cores the studio's jobs share (Concurrent jobs), so
    // a training and an evaluation beside them keep the machine within the limit (issue 53).
    const auto cores = m_controller->cores();
    const std::string exe = m_cellExecutable;
    const quint64 id = m_controller->enqueue(
        JobKind::Sweep, label,
        [dir, jobs, members, cores, exe](engine::RunControl& control,
                                         engine::AnalysisObserver& obs) {
            for (const auto& line : cellsHeldElsewhere(dir))
                obs.onWarning(line);
            engine::LocalSweepOptions o;
            o.jobs = jobs;
            o.members = members;
            o.cores = cores;
            o.executable = exe;
            const auto executor = engine::makeLocalExecutor(dir, o);
            JobProgress progress(obs);
            const auto s = executor->submit(control, progress);
            if (s.failed + s.failedBefore > 0)
                obs.onWarning(std::to_string(s.failed + s.failedBefore) +
                              " cell(s) failed: the grid's tooltips say why");
            return jobResult(s);
        },
        QString::fromStdString(dir));
    m_model.setRunHere(dir, id);
    m_controller->whenEnded(id, this, [this, dir](const JobInfo& j) { onRunEnded(j, dir); });
    refresh();
}

void SweepsView::stopRun()
{
    // The shown sweep's run only (issue 80, defect 2: it stopped whichever sweep ran here).
    if (const quint64 id = shownRunJob(); m_controller && id)
        m_controller->stop(id);  // the executor passes one SIGTERM to each cell
}

void SweepsView::submit()
{
    if (m_model.dir().isEmpty())
        return;
    askSubmit(this, [this](engine::SlurmSweepOptions options) { submitTo(std::move(options)); });
}

void SweepsView::submitTo(engine::SlurmSweepOptions options)
{
    if (m_model.dir().isEmpty() || !m_controller)
        return;
    const auto located = locateShown(tr("Not submitted: %1"));
    if (!located)
        return;
    const std::string& dir = *located;
    if (options.executable.empty())
        options.executable = m_cellExecutable;
    // sbatch has a time limit of its own (a dead controller is a message, not a hang): on the
    // worker either way, never on the GUI thread.
    m_controller->enqueue(
        JobKind::Sweep, tr("submit %1").arg(QFileInfo(m_model.dir()).fileName()),
        [dir, options](engine::RunControl& control, engine::AnalysisObserver& obs) {
            const auto executor = engine::makeSlurmExecutor(dir, options);
            JobProgress progress(obs);
            auto s = executor->submit(control, progress);
            auto r = jobResult(s);
            // Submitted, not run: the scheduler runs them (the grid follows).
            r.said = "submitted " + std::to_string(s.taken) + " cell(s) as Slurm job " + s.jobId +
                     (s.elsewhere > 0 ? "; " + std::to_string(s.elsewhere) + " held elsewhere, left"
                                      : "");
            return r;
        },
        QString::fromStdString(dir));
}

}  // namespace lengen::ui
