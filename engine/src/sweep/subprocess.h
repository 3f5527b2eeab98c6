#pragma once
// Runs an external program (sbatch, squeue, scontrol) and collects what it prints, with a time
// limit: a scheduler that does not answer must give a message, not a hang.

#include <string>
#include <vector>

namespace lengen::engine::sweep {

struct CommandResult {
    bool started = false;                ///< false: the program was not found or not executable
    bool timedOut = false;               ///< killed after the time limit
    int exitCode = -1;                   ///< its exit status (128 + signal when killed)
    std::string output;                  ///< stdout and stderr together, as printed
};

/// Runs argv[0] (searched on PATH and in /usr/sbin) with stdin from /dev/null.
CommandResult runCommand(const std::vector<std::string>& argv, double timeoutSeconds);

/// `name`'s path in the first folder of $PATH that holds it as an executable; "" when none does.
std::string findOnPath(const std::string& name);

/// This process's environment with `extra` ("NAME=value" each) set over it, for a child's envp
/// (posix_spawn): a child gets variables without this process changing its own (setenv is
/// not thread-safe, and a user's own values must survive).
std::vector<std::string> environmentWith(const std::vector<std::string>& extra);

/// The first line of `text` that is not empty, trimmed (for one-line messages).
std::string firstLine(const std::string& text);

}  // namespace lengen::engine::sweep
