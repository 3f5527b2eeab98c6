#pragma once
// One writer per run file, across processes (issue 56: it lived in the HDF5 wrapper): an
// open-file-description lock on "<file>.lock" beside the file, which names its holder. The run
// writer, the analysis store, notes edits and the analysis job markers take it; readers only
// ask whether it is held (a run reads "running" while it is, "interrupted" after).

#include <string>

namespace lengen::engine::io {

/// Exclusive advisory lock of one writer per run file (an open-file-description lock on
/// "<path>.lock"); released when the holder closes it or dies. Error(RunFile) if another live
/// process holds it. The lock file names its holder ("<host>:<pid>") and, for a short edit
/// that is not a training, its role ("notes"): a notes edit waits up to `waitSeconds` for
/// another notes edit to end, never for a training.
enum class LockRole { Writer, Notes };
class WriterLock {
public:
    explicit WriterLock(const std::string& runFile, LockRole role = LockRole::Writer,
                        double waitSeconds = 0);
    ~WriterLock();
    WriterLock(const WriterLock&) = delete;
    WriterLock& operator=(const WriterLock&) = delete;

private:
    std::string m_path;
    int m_fd = -1;
};
/// Whether a live process holds the WriterLock of `file` (queried, not taken).
bool writerAlive(const std::string& file);
/// Whether a live process other than this one holds it.
bool writerElsewhere(const std::string& file);
/// "<host>:<pid>" of the process holding it, as it wrote into the lock file ("" when unknown).
std::string writerHolder(const std::string& file);
/// The role the holder wrote (LockRole::Writer when none, or for an old lock file).
LockRole writerRole(const std::string& file);

}  // namespace lengen::engine::io
