// `lengen archive`, `lengen delete` and `lengen restore` (issue 72): runs moved out of the way
// and back, through engine/run_archive.h. Nothing is unlinked; every move is a rename.

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command_registry.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_archive.h"

namespace lengen::cli {

namespace {

struct RemovalArgs {
    std::vector<std::string> runs;
    bool yes = false;
};

// Asked on a terminal, refused elsewhere: a script says --yes.
bool confirmedRemoval(const engine::RemovalPlan& plan, const char* where, bool yes)
{
    if (yes)
        return true;
    const std::string what = std::to_string(plan.moves.size()) +
                             (plan.moves.size() == 1 ? " run (" : " runs (") + plan.sizeText + ")";
    if (!::isatty(STDIN_FILENO))
        throw engine::Error(engine::ErrorKind::Usage,
                            "this moves " + what + " to " + where + ": confirm with --yes");
    std::fprintf(stderr, "Move %s to %s? [y/N] ", what.c_str(), where);
    std::string answer;
    std::getline(std::cin, answer);
    return answer == "y" || answer == "Y" || answer == "yes";
}

int runRemoval(const RemovalArgs& a, engine::RunRemoval kind)
{
    const bool trash = kind == engine::RunRemoval::Trash;
    const auto plan = engine::planRunRemoval(a.runs, kind);
    if (!confirmedRemoval(plan, trash ? "the trash" : "the archive", a.yes)) {
        std::fprintf(stderr, "nothing moved\n");
        return 0;
    }
    const auto moved = engine::carryOutRemoval(plan);
    for (const auto& m : moved)
        std::printf("%s\n", m.to.c_str());
    std::fprintf(stderr, "moved %zu run%s (%s) to %s; put %s back with: %s\n", moved.size(),
                 moved.size() == 1 ? "" : "s", plan.sizeText.c_str(),
                 trash ? "the trash" : "the archive", moved.size() == 1 ? "it" : "them",
                 engine::restoreCommand(moved, kind).c_str());
    return 0;
}

int runRestore(const std::vector<std::string>& paths)
{
    for (const auto& p : paths)
        for (const auto& m : engine::restoreRuns(p))
            std::printf("%s\n", m.to.c_str());
    return 0;
}

void addRemoval(CLI::App& app, CommandTable& table, engine::RunRemoval kind)
{
    const bool trash = kind == engine::RunRemoval::Trash;
    auto a = std::make_shared<RemovalArgs>();
    auto* cmd = app.add_subcommand(
        trash ? "delete" : "archive",
        trash ? "Move runs to the trash beside them (.lengen-trash/<when>/): nothing is unlinked; "
                "`lengen restore` puts them back. Runs a process trains, evaluates or edits are "
                "refused (exit 3), naming it"
              : "Move runs to the archive beside them (.lengen-archive/), out of the Runs list "
                "and `lengen runs`; `lengen restore` puts them back. Runs a process trains, "
                "evaluates or edits are refused (exit 3), naming it");
    cmd->add_option("runs", a->runs, "Run folders or run.h5 files")->required();
    cmd->add_flag("--yes,-y", a->yes,
                  "Do not ask (without it: asked on a terminal, refused elsewhere)");
    table.add(cmd, [a, kind](const Session&) { return runRemoval(*a, kind); });
}

}  // namespace

void addArchiveCommands(CLI::App& app, CommandTable& table)
{
    addRemoval(app, table, engine::RunRemoval::Archive);
    addRemoval(app, table, engine::RunRemoval::Trash);
    auto paths = std::make_shared<std::vector<std::string>>();
    auto* restore = app.add_subcommand(
        "restore", "Put runs back from the trash or the archive, as they were (the same files)");
    restore
        ->add_option("paths", *paths,
                     "A run folder under .lengen-trash/<when>/ or .lengen-archive/, or a "
                     ".lengen-trash/<when> folder (all its runs)")
        ->required();
    table.add(restore, [paths](const Session&) { return runRestore(*paths); });
}

}  // namespace lengen::cli
