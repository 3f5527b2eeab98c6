#pragma once
// Signals before main(): loading LibTorch and its libraries takes a few tenths of a second,
// during which SIGINT / SIGTERM used to kill `lengen` with the default action. A handler in
// .preinit_array (run by the loader before any library's initialisers) records such a signal;
// main() calls takeOverSignals() first thing.

namespace lengen::cli {

/// Restores the default actions (commands install their own handlers) and, when SIGINT or
/// SIGTERM arrived while the libraries were loading, returns that signal (else 0): nothing has
/// been done yet, so the caller exits 130 at once. SIGXFSZ stays ignored for the whole run: a
/// file-size limit (`ulimit -f`) then fails the write with EFBIG, which the I/O layer reports
/// like a full disk, instead of killing the process mid-checkpoint.
int takeOverSignals();

}  // namespace lengen::cli
