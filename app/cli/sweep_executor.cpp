// `lengen sweep run`, `run-cell` and `submit`: the engine's executors (sweep_run.h) with lines
// on stderr; lengen-core only (run-cell trains). `run` runs the unfinished cells here N at a time;
// Ctrl-C reaches only this process (cells have their own process groups), which passes one SIGTERM
// per Ctrl-C to every running cell: the first stops each with its checkpoint (exit 130), a second
// makes them leave at once. `submit` writes the Slurm job array and prints its job id.

#include <cmath>
#include <csignal>
#include <cstdio>

#include "command_registry.h"
#include "early_signals.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/sweep_run.h"
#include "progress.h"
#include "sweep_commands.h"

namespace lengen::cli {

namespace {

volatile std::sig_atomic_t g_stops = 0;

void onStop(int) { g_stops = countStop(); }

// The executor's lines, as the terminal shows them.
class Lines final : public engine::SweepObserver {
public:
    explicit Lines(bool quiet) : m_quiet(quiet) {}
    void onMessage(const std::string& line) override
    {
        // Quiet: only a cell that failed or stopped ("NAME failed (exit 5): …", "NAME stopped;
        // …") and the stop itself, not the counts of the opening line ("0 failed before").
        const auto space = line.find(' ');
        const bool cellEnd =
            space != std::string::npos &&
            (line.compare(space, 8, " failed ") == 0 || line.compare(space, 9, " stopped;") == 0);
        if (!m_quiet || cellEnd || line.rfind("stopping:", 0) == 0)
            std::fprintf(stderr, "%s\n", line.c_str());
    }
    void onRunning(const std::string& line) override
    {
        if (!m_quiet)
            std::fprintf(stderr, "running:%s; %d of %d cells ended, ETA %s\n", line.c_str(),
                         m_ended, m_total, formatDuration(m_eta).c_str());
    }
    void onCells(int ended, int total, double eta) override
    {
        m_ended = ended;
        m_total = total;
        m_eta = eta >= 0 ? eta : NAN;
    }

private:
    bool m_quiet;
    int m_ended = 0, m_total = 0;
    double m_eta = NAN;
};

}  // namespace

int runSweepCell(const SweepCellArgs& args, const Session& session)
{
    engine::RunControl control;
    // As `train`: the first stop finishes the step and writes a checkpoint; a second leaves now.
    interruptsStop(control, true);
    ProgressReporter progress(ProgressReporter::detect(args.quiet));
    AnalysisProgress analysis(args.quiet);
    auto options = args.options;
    options.switches = session.switches;
    const auto say = [&](const std::string& line) {
        progress.finish();
        std::fprintf(stderr, "%s\n", line.c_str());
    };
    std::vector<engine::CellOutcome> outcomes;
    if (args.indices.size() == 1)
        outcomes.push_back(engine::runSweepCell(args.dir, args.indices.front(), options, control,
                                                progress, analysis, say));
    else
        outcomes = engine::runSweepMembers(args.dir, args.indices, options, control, progress,
                                           analysis, say);
    progress.finish();
    analysis.finish();
    // Several cells: each one's cell.json says how it ended; the exit code is the worst.
    int code = 0;
    for (const auto o : outcomes)
        if (o == engine::CellOutcome::Failed)
            code = engine::exitCodeFor(engine::ErrorKind::Runtime);
        else if (o == engine::CellOutcome::Stopped && code == 0)
            code = engine::exitCodeFor(engine::ErrorKind::Interrupted);
    return code;
}

int runSweepRun(const SweepRunArgs& args, const Session& session)
{
    engine::LocalSweepOptions options = args.options;
    if (options.executable.empty())
        options.executable = session.switches.cellExecutable;
    // A cancel typed while this loads holds: the launcher's start is exact, /proc's to 10 ms.
    options.clearMarksBefore = session.launchedAt.value_or(engine::processStartTime());
    options.stopCount = &g_stops;
    const auto executor =
        engine::makeLocalExecutor(args.dir, options);  // validates every cell first
    struct sigaction sa = {};
    sa.sa_handler = onStop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    engine::RunControl control;
    Lines lines(args.quiet);
    const auto s = executor->submit(control, lines);
    const int failed = s.failed + s.failedBefore;
    if (!args.quiet || failed || s.stopped || s.cancelledHere)
        std::fprintf(
            stderr, "sweep %s: %d cell%s finished now, %d stopped, %d cancelled, %d failed%s\n",
            executor->index().name.c_str(), s.finished, s.finished == 1 ? "" : "s", s.stopped,
            s.cancelledHere, failed, failed ? " (`lengen sweep status` says why)" : "");
    if (g_stops)
        return engine::exitCodeFor(engine::ErrorKind::Interrupted);
    if (failed > 0)
        return engine::exitCodeFor(engine::ErrorKind::Runtime);
    return s.elsewhere > 0 || s.cancelledHere > 0 ? kSweepUnfinished : 0;
}

int runSweepSubmit(SweepSubmitArgs args, const Session& session)
{
    engine::SlurmSweepOptions o = args.options;
    if (o.executable.empty())
        o.executable = session.switches.cellExecutable;
    if (args.dryRun) {
        const std::string script = engine::slurmJobScript(args.dir, o);
        if (script.empty())
            std::fprintf(stderr,
                         "sweep %s: nothing to submit (every cell is done, running or failed)\n",
                         args.dir.c_str());
        std::fputs(script.c_str(), stdout);
        return 0;
    }
    const auto executor = engine::makeSlurmExecutor(args.dir, o);
    engine::RunControl control;
    Lines lines(false);
    const auto s = executor->submit(control, lines);
    if (!s.jobId.empty()) {
        std::fprintf(stderr, "watch with: lengen sweep status %s\n", args.dir.c_str());
        std::printf("%s\n", s.jobId.c_str());
    }
    return 0;
}

}  // namespace lengen::cli
