#pragma once
// The switches several commands share, each defined here once with one help text (issue 73:
// --device was defined 5 times, --threads 3 and --quiet 10, with differing texts). Every
// command takes them from here; tst_cli::sharedSwitchesSayTheSame checks that `--help` of
// every command says the same for each.

#include <CLI/CLI.hpp>

#include <string>

#include "option_ranges.h"

namespace lengen::cli {

/// --device: where one process computes.
inline CLI::Option* addDeviceOption(CLI::App* cmd, std::string& device)
{
    return cmd->add_option("--device", device,
                           "cpu, cuda or cuda:N (default: cuda where LibTorch sees a GPU, "
                           "else cpu)");
}

/// --device of `sweep run`: the devices its cells share (a list).
inline CLI::Option* addSharedDevicesOption(CLI::App* cmd, std::string& devices)
{
    return cmd->add_option("--device", devices,
                           "The devices the cells share: cpu, cuda (every GPU, each cell on the "
                           "least busy) or a list cuda:0,cuda:2 (default: every GPU, or the CPU "
                           "where there is none)");
}

/// --threads: CPU threads of one process.
inline CLI::Option* addThreadsOption(CLI::App* cmd, int& threads)
{
    return cmd
        ->add_option("--threads", threads,
                     "CPU threads (default: all cores; BLAS takes 1 for a model narrower than "
                     "128)")
        ->check(threadRange());
}

/// --quiet, -q: no progress or notes; what each command still prints is in docs/cli.md.
inline CLI::Option* addQuietFlag(CLI::App* cmd, bool& quiet)
{
    return cmd->add_flag("--quiet,-q", quiet,
                         "No progress or notes (what each command still prints: docs/cli.md, "
                         "\"Quiet\")");
}

/// --json: a machine-readable answer.
inline CLI::Option* addJsonFlag(CLI::App* cmd, bool& json)
{
    return cmd->add_flag("--json", json, "JSON instead of the table (docs/cli.md)");
}

}  // namespace lengen::cli
