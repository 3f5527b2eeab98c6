#pragma once
// Moving runs out of the way without losing them (issue 72): `lengen archive`, `lengen delete`
// and `lengen restore`, and the studio's run menu. Nothing is unlinked. A deleted run goes to
// the trash beside it, `<parent>/.lengen-trash/<when>/<run folder>`; an archived one to
// `<parent>/.lengen-archive/<run folder>`. Both are renames on one file system, so a run
// restored from either is the same bytes (run.h5, analysis.h5, everything in its folder), and
// the folder walk (scanFolder) lists neither: the Runs list and `lengen runs` no longer show
// them. Runs that a process trains, evaluates, probes or edits are refused, naming it.

#include <cstdint>
#include <string>
#include <vector>

namespace lengen::engine {

enum class RunRemoval { Archive, Trash };

/// The folders beside runs that removed runs move into; scanFolder walks into neither.
inline constexpr const char* kTrashFolder = ".lengen-trash";
inline constexpr const char* kArchiveFolder = ".lengen-archive";

/// One run folder to move, and where it goes.
struct RunMove {
    std::string from;         ///< the run's folder
    std::string to;           ///< its place in the archive or the trash (or back, for a restore)
    std::uint64_t bytes = 0;  ///< its folder's size (a removal's plan; 0 for a restore)
};

struct RemovalPlan {
    RunRemoval kind = RunRemoval::Trash;
    std::vector<RunMove> moves;
    std::uint64_t bytes = 0;  ///< the runs' folders together
    std::string sizeText;     ///< `bytes` as the confirmations say it ("9.8 MB")
};

/// Checks every run before anything moves: a run folder or its run.h5, named once, held by no
/// live process (a training, an evaluation or probe, a notes edit: the lock files in its
/// folder), not a sweep's cell (the sweep's folder is what moves). Error(RunFile) naming the
/// first run that is not one, that a process holds ("<run>: trained by <host>:<pid>") or that
/// is a cell; Error(Usage) for a run named twice.
RemovalPlan planRunRemoval(const std::vector<std::string>& runs, RunRemoval kind);

/// Renames each run folder into place, checking again just before (a process may have taken a
/// run since the plan); returns the moves made. A failure leaves the runs not yet moved where
/// they were and throws Error(Io) naming the run (the moves made so far are in the message).
std::vector<RunMove> carryOutRemoval(const RemovalPlan& plan);

/// The command that undoes a whole removal (issue 81: a three-run archive named the first run
/// only): `lengen restore` with each trash batch folder once (runs of several parents make one
/// batch folder per parent) or each archived run, every path one shell word.
std::string restoreCommand(const std::vector<RunMove>& moved, RunRemoval kind);

/// Puts runs back from the trash or the archive: `path` is a run folder inside
/// `.lengen-trash/<when>/` or `.lengen-archive/`, or a `.lengen-trash/<when>` folder (all its
/// runs). Error(Usage) for a path that is neither; Error(Io) when a run's old place is taken.
std::vector<RunMove> restoreRuns(const std::string& path);

}  // namespace lengen::engine
