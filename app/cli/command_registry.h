#pragma once
// The table of `lengen` subcommands. Each command file registers its own subcommands beside
// their implementation: it declares the options on the CLI11 app, keeps the values they parse
// in state its callback owns, and adds the callback here (CLI11's subcom_in_files pattern).
// main() keeps only signals, parsing, the setup every command shares (Session: done once, given
// to the run) and the one mapping of errors to exit codes, so adding a command or an option
// touches one file. Option structs hold the engine's own option structs (TrainOptions,
// AggregateOptions, …) and bind the flags to their fields: a default lives in the engine only.

#include <chrono>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "lengen/engine/session.h"

namespace CLI {
class App;
}

namespace lengen::cli {

/// What main() sets up once for whichever command runs (git's run_builtin does its setup from
/// the command's row): the session switches, read from the environment by
/// engine::sessionSwitchesFromEnvironment, with the process-wide policy applied, and the rest
/// of the environment a command needs. A command gives them to every session it starts;
/// nothing else reads the environment (tests/code_rules.sh).
struct Session {
    engine::SessionSwitches switches;
    /// $XDG_RUNTIME_DIR ("" when unset): the export's offscreen Qt warns on every run without
    /// one, so the export makes a private one then.
    std::string runtimeDir;
    /// When the launcher began this command ($LENGEN_LAUNCHED_AT, launcher.cpp), on the clock
    /// file times use; unset when lengen-core was started directly.
    std::optional<std::chrono::system_clock::time_point> launchedAt;
};

/// Runs a parsed subcommand; returns the exit code, throws engine::Error for the mapped codes.
using CommandRun = std::function<int(const Session&)>;

class CommandTable {
public:
    void add(CLI::App* command, CommandRun run) { m_entries.push_back({command, std::move(run)}); }
    /// The callback of the subcommand the command line named (nullptr: none of the table's).
    const CommandRun* parsed() const;

private:
    struct Entry {
        CLI::App* command;
        CommandRun run;
    };
    std::vector<Entry> m_entries;
};

// One registration per command file.
void addTrainCommands(CLI::App& app, CommandTable& table);  ///< train, validate, info, stop, jobs
void addAnalysisCommands(CLI::App& app, CommandTable& table);   ///< eval, probe, import
void addReferenceCommands(CLI::App& app, CommandTable& table);  ///< import-run, export-run
void addSweepCommands(CLI::App& app, CommandTable& table);      ///< sweep new|run|...|status
void addExportCommand(CLI::App& app, CommandTable& table);      ///< export (GUI builds only)
void addListCommand(CLI::App& app, CommandTable& table);  ///< list encodings|interventions|tasks
void addNoteCommand(CLI::App& app, CommandTable& table);  ///< note (a run's notes and tags)
void addRunsCommand(CLI::App& app, CommandTable& table);  ///< runs (the run index)
void addArchiveCommands(CLI::App& app, CommandTable& table);  ///< archive, delete, restore

}  // namespace lengen::cli
