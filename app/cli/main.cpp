// `lengen`: the headless command line over the engine. Thin: signals, parse, dispatch to the
// command the line names (each command file registers itself: command_registry.h), map errors
// to exit codes (docs/cli.md). Built twice: `lengen-core` with every command, and with
// LENGEN_LIGHT_CLI `lengen-light`, the commands that read or move runs, without LibTorch
// (the launcher, launcher.cpp, picks one by the command line).

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "command_registry.h"
#include "early_signals.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/version.h"

using namespace lengen;

namespace {

std::string exitCodeHelp()
{
    return "Exit codes: 0 ok, 1 internal error, 2 config error, 3 run-file error, 4 I/O error,\n"
           "5 run failed (NaN loss, out of memory), 8 sweep unfinished, 9 scheduler (Slurm) "
           "error,\n"
           "10 stop: the training finished before it saw the request,\n"
           "64 usage error, 124 still running when a wait ended (stop, sweep cancel),\n"
           "130 interrupted (checkpoint written).";
}

// The launcher's "SECONDS.NANOSECONDS" (launcher.cpp); nothing for text it did not write.
std::optional<std::chrono::system_clock::time_point> launchedAt(const char* text)
{
    char* end = nullptr;
    const double seconds = text ? std::strtod(text, &end) : 0;
    if (!text || end == text || *end != '\0' || !(seconds > 0))
        return std::nullopt;
    return std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::duration<double>(seconds)));
}

}  // namespace

namespace lengen::cli {

const CommandRun* CommandTable::parsed() const
{
    for (const auto& entry : m_entries)
        if (entry.command->parsed())
            return &entry.run;
    return nullptr;
}

}  // namespace lengen::cli

namespace {

int runCli(int argc, char** argv)
{
    if (const int sig = cli::takeOverSignals()) {
        std::fprintf(stderr, "lengen: interrupted (signal %d) while starting; nothing was done\n",
                     sig);
        return engine::exitCodeFor(engine::ErrorKind::Interrupted);
    }
    CLI::App app{"lengen - train and inspect in-context function-learning models "
                 "(LenGen Studio command line)"};
    // A callback: only --version asks the GPU driver.
    app.set_version_flag("--version", [] {
#ifdef LENGEN_LIGHT_CLI  // a CPU-only LibTorch's text, known when building (CMakeLists.txt)
        return std::string("lengen ") + engine::versionString() + "\n" + LENGEN_BACKEND_TEXT;
#else
        return std::string("lengen ") + engine::versionString() + "\n" +
               engine::backendDescription();
#endif
    });
    app.footer(exitCodeHelp());
    app.require_subcommand(1);

    // Every command file, in the order --help lists them (git.c's commands[]): each adds its
    // subcommands, their flags and their runs to the one table.
    using AddCommands = void (*)(CLI::App&, cli::CommandTable&);
    // lengen-light holds the files of the commands it runs (the launcher's kLight).
    static constexpr AddCommands kCommandFiles[] = {
        cli::addTrainCommands,
#ifndef LENGEN_LIGHT_CLI
        cli::addAnalysisCommands,
#ifdef LENGEN_WITH_EXPORT
        cli::addExportCommand,
#endif
        cli::addReferenceCommands,
#endif
        cli::addSweepCommands,     cli::addListCommand,     cli::addNoteCommand,
        cli::addRunsCommand,       cli::addArchiveCommands,
    };
    cli::CommandTable commands;
    for (const AddCommands add : kCommandFiles)
        add(app, commands);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : engine::exitCodeFor(engine::ErrorKind::Usage);
    }

    // The environment is read here and nowhere else; process-wide settings once.
    const char* runtimeDir = std::getenv("XDG_RUNTIME_DIR");
    const cli::Session session{engine::sessionSwitchesFromEnvironment(),
                               runtimeDir ? runtimeDir : "",
                               launchedAt(std::getenv("LENGEN_LAUNCHED_AT"))};
#ifndef LENGEN_LIGHT_CLI  // threads and the allocator for tensor work
    engine::applyProcessPolicy(session.switches);
#endif
    try {
        if (const auto* run = commands.parsed())
            return (*run)(session);
    } catch (const engine::Error& e) {
        std::fprintf(stderr, "lengen: error: %s\n", e.what());
        if (!e.detail().empty())
            std::fprintf(stderr, "  (%s)\n", e.detail().c_str());
        return engine::exitCodeFor(e.kind());
    } catch (const std::exception& e) {
        const auto error = engine::classifyException(e);
        if (error.kind() == engine::ErrorKind::Internal) {
            std::fprintf(stderr, "lengen: internal error: %s\n", e.what());
            return engine::exitCodeFor(engine::ErrorKind::Internal);
        }
        std::fprintf(stderr, "lengen: error: %s\n  (%s)\n", error.what(), error.detail().c_str());
        return engine::exitCodeFor(error.kind());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    const int code = runCli(argc, argv);
    // Every file a command wrote is closed by now (RAII in the command). Leave without the
    // libraries' exit handlers: HDF5 1.10's closes a file whose flush failed (a full disk) again
    // and crashed there (SIGSEGV in H5F__close_cb) after the documented exit 4 was decided.
    std::fflush(nullptr);
    std::_Exit(code);
}
