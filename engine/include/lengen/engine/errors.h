#pragma once
// One error hierarchy for the engine. Each kind maps to a distinct process exit code so that
// scripts (and the GUI) can tell bad input from a damaged run file from a failed run.

#include <stdexcept>
#include <string>
#include <vector>

namespace lengen::engine {

/// Exit codes of the `lengen` CLI (documented in docs/cli.md).
enum class ErrorKind {
    Internal = 1,   ///< a bug: anything not classified below
    Config = 2,     ///< bad YAML, unknown task/PE/family, impossible sizes
    RunFile = 3,    ///< run file missing, damaged, foreign or of an unknown format version
    Io = 4,         ///< cannot create or write an output file or folder
    Runtime = 5,    ///< the run itself failed: NaN loss, out of memory (a missing GPU is Config)
    Scheduler = 9,  ///< Slurm is missing, does not answer, or refused the job (sweep submit)
    Usage = 64,     ///< wrong command-line usage (EX_USAGE)
    Interrupted = 130,  ///< stopped by Ctrl-C after writing a checkpoint
};

int exitCodeFor(ErrorKind kind);

/// Base of every exception the engine throws on purpose. `what()` is one readable sentence;
/// `detail()` holds technical context (library messages, paths) for a "details" box.
class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, const std::string& message, std::string detail = {});
    ErrorKind kind() const { return m_kind; }
    const std::string& detail() const { return m_detail; }

private:
    ErrorKind m_kind;
    std::string m_detail;
};

/// An exception from a library (LibTorch, the C++ runtime) as the Error it means: running out
/// of memory (std::bad_alloc, LibTorch's "can't allocate memory" / "out of memory") is
/// Error(Runtime), exit 5, with one sentence; anything else is Error(Internal) with its text.
/// Callers that catch std::exception at the top (CLI, studio workers) pass it through this.
Error classifyException(const std::exception& e);

/// Where in which file a config value came from. Lines and columns are 1-based; 0 = unknown.
struct SourceLocation {
    std::string file;
    int line = 0;
    int column = 0;
    std::string toString() const;  ///< "file:line:col"
};

/// One problem (or warning) found while loading a config.
struct ConfigIssue {
    SourceLocation where;
    std::string keyPath;  ///< dotted, e.g. "task.curriculum.dims.start"
    std::string message;
    std::string toString() const;  ///< "file:line:col: key.path: message"
};

/// Thrown by the config loader with *every* issue it found, not just the first.
class ConfigError : public Error {
public:
    explicit ConfigError(std::vector<ConfigIssue> issues);
    const std::vector<ConfigIssue>& issues() const { return m_issues; }

private:
    std::vector<ConfigIssue> m_issues;
};

}  // namespace lengen::engine
