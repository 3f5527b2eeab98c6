#pragma once
// Signals before main(): loading LibTorch and its libraries takes a few tenths of a second,
// during which SIGINT / SIGTERM used to kill `lengen` with the default action. The launcher
// (`lengen`, launcher.cpp) blocks them before it executes `lengen-core`; a function in
// .preinit_array (run after the libraries are mapped, before any of their initialisers)
// installs a handler that records such a signal and unblocks them; main() calls
// takeOverSignals() first thing.

namespace lengen::engine {
class RunControl;
}

namespace lengen::cli {

/// From now until a command installs its own handlers, SIGINT and SIGTERM exit 130 at once (the
/// default action would end the process by the signal). When one arrived while the libraries
/// were loading, returns that signal (else 0): nothing has been done yet, so the caller exits
/// 130 at once. SIGXFSZ stays ignored for the whole run: a
/// file-size limit (`ulimit -f`) then fails the write with EFBIG, which the I/O layer reports
/// like a full disk, instead of killing the process mid-checkpoint.
int takeOverSignals();

/// For signal handlers: counts this signal as a stop and returns the stops so far. A signal
/// within a second of the previous one is the same stop delivered twice (`timeout -s INT`
/// signals the command and then its process group) and is not counted again.
int countStop();

/// A command's handlers: SIGINT and SIGTERM ask `control` to stop (the command finishes its step
/// or chunk and saves what is done). With `secondLeaves`, a second signal more than a second
/// after the first exits 130 at once (training: the previous checkpoint stays intact); one
/// sooner is the same stop delivered twice (`timeout -s INT` does that).
void interruptsStop(engine::RunControl& control, bool secondLeaves);

}  // namespace lengen::cli
