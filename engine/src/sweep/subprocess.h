#pragma once
// Runs an external program (sbatch, squeue, scontrol) and collects what it prints, with a time
// limit: a scheduler that does not answer must give a message, not a hang.

#include <sys/types.h>

#include <string>
#include <vector>

namespace lengen::engine::sweep {

struct CommandResult {
    bool started = false;   ///< false: the program was not found or not executable
    bool timedOut = false;  ///< killed after the time limit
    int exitCode = -1;      ///< its exit status (128 + signal when killed)
    std::string output;     ///< stdout and stderr together, as printed
};

/// Runs argv[0] (searched on PATH and in /usr/sbin) with stdin from /dev/null.
CommandResult runCommand(const std::vector<std::string>& argv, double timeoutSeconds);

/// `s` as one word for bash: as it is when it holds only characters no shell reads specially,
/// else single-quoted (paths with spaces or quotes; the Slurm script, `restore`'s undo line).
std::string shellWord(const std::string& s);

/// `name`'s path in the first folder of $PATH that holds it as an executable; "" when none does.
std::string findOnPath(const std::string& name);

/// A child that writes to a log file and is waited for by pid (sweep cells, the MPS control).
struct LoggedChild {
    std::string exe;                    ///< the file run
    std::vector<std::string> argv;      ///< argv[0] as the child sees it, then its arguments
    std::vector<std::string> extraEnv;  ///< "NAME=value" over this process's environment
    std::string stdinFile = "/dev/null";
    std::string logFile;  ///< stdout and stderr, appended
    /// A session of its own (a daemon a terminal's Ctrl-C must not reach), else a process group
    /// of its own (signals come from this process only). Either way no signal is blocked and
    /// SIGINT/SIGTERM act as by default.
    bool newSession = false;
};
/// Starts it with posix_spawn: 0 and its pid, or posix_spawn's error number.
int spawnLogged(const LoggedChild& child, pid_t& pid);

/// The first line of `text` that is not empty, trimmed (for one-line messages).
std::string firstLine(const std::string& text);

}  // namespace lengen::engine::sweep
