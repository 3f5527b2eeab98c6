#pragma once
// Small text files the engine writes beside runs (sweep index, cell state, configs): written
// whole to `<path>.partial` and renamed, so a reader never sees half of one; read with a size
// cap, so a foreign multi-gigabyte file is refused instead of loaded.

#include <cstdint>
#include <string>

namespace lengen::engine {

/// Error(Io) naming the file when it cannot be written; the old file stays as it was.
/// `ownTemp`: the temporary file's name is this writer's own (`<path>.partial.<pid>.<n>`), for a
/// file several threads or processes may rewrite at once (a folder's run index: the studio's
/// look on a worker, its look on the GUI thread, `lengen runs`); else `<path>.partial`, which
/// a later run can tell apart as an unfinished write.
void writeFileAtomically(const std::string& path, const std::string& text, bool ownTemp = false);
/// Error(Io) when unreadable, Error(RunFile) when larger than `maxBytes`.
std::string readTextFile(const std::string& path, std::uintmax_t maxBytes);

}  // namespace lengen::engine
