#pragma once
// Reading run files (run.h5). The format is documented in docs/run-format.md. Safe to call
// while another process is writing the run (the file is opened read-only in SWMR mode).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace lengen::engine {

constexpr int kRunFormatVersion = 1;

struct TensorInfo {
    std::string name;  ///< state-dict key
    std::vector<std::int64_t> shape;
};

/// The curriculum a run reached (issue 52): dims and points of the last step it trained, the
/// training length that `lengen info`, the Runs list, Compare and every figure's marker show.
/// Less than the config's dims.end / points.end when max_steps ends before the curriculum does
/// (RunConfig::curriculumShortfall) or the run was stopped early.
struct ReachedCurriculum {
    std::int64_t stepsDone = 0;  ///< steps trained when it was taken; 0 = nothing trained yet
    int dims = 0;                ///< d_t of the last step (0 when nothing was trained)
    int points = 0;              ///< N of the last step (0 when nothing was trained)
    /// "recorded" (/curriculum_reached), "log" (its last row: runs written before the record),
    /// "config" (the config at the checkpoint's step, where the log ends earlier), or "" for a
    /// run that trained nothing.
    std::string source;
};

struct RunFileInfo {
    std::string path;
    int formatVersion = 0;
    std::string engineVersion;
    std::string runId;
    std::string createdAt;  ///< ISO 8601, UTC
    std::uint64_t seed = 0;
    /// running | finished | cancelled | failed | imported, or interrupted: the file says
    /// running but no process holds its writer lock (the writer died; resume it)
    std::string status;
    /// "<host>:<pid>" of the process that trains it while status is running ("" otherwise, or
    /// when its lock file names none): the studio says who trains a run it did not start.
    std::string writer;
    std::string configYaml;  ///< resolved config
    std::string task;
    std::string positionEncoding;
    std::string backbone;
    std::string device;
    std::string host;  ///< the machine that wrote the file ("" in runs written before it)
    std::string precision = "fp32";  ///< of the last session that trained it: fp32 | tf32 | bf16
    std::string importedFrom;  ///< reference run folder it was imported from ("" if trained here)
    std::string sweepName;     ///< the sweep this run is a cell of ("" if none)
    std::string sweepCell;     ///< its cell name, e.g. "007-alibi-s2"
    std::string sweepAxes;     ///< its axis values, "pe=alibi seed=2"
    std::string notes;         ///< free text a researcher wrote about the run ("" if none)
    std::vector<std::string> tags;  ///< its tags, in the order given
    std::int64_t totalSteps = 0;
    std::int64_t checkpointStep = -1;  ///< completed steps in the latest checkpoint; -1 = none
    std::int64_t logRows = 0;
    double lastLoss = 0;  ///< loss of the last log row (NaN if none)
    /// The log as a whole (NaN if nothing logged): the least loss, the mean steps/s of the rows
    /// that timed their steps, the last wall clock (seconds of training).
    double minLoss = 0, meanStepsPerSecond = 0, lastWallSeconds = 0;
    std::int64_t lastLoggedStep = -1;  ///< step of the last log row (-1 if none)
    std::int64_t parameterCount = 0;
    ReachedCurriculum reached;
    std::vector<TensorInfo> parameters;
    /// Derived PE constants (ALiBi slopes, RoPE inv_freq, ...), by name.
    std::map<std::string, std::vector<double>> positionConstants;
};

/// One value of RunFileInfo that a run's listing keeps (issue 82 §2): the one list of them,
/// which the reader reads the root attributes through and the run index (run_index.h) stores
/// and restores whole. A new field goes here (run_info_fields.cpp), in the writer
/// (run_writer.cpp) and in docs/run-format.md; the index needs no change (an index written
/// without it is read again).
struct RunInfoField {
    const char* key;  ///< the root attribute's name (Summary: the index's key)
    std::variant<std::string RunFileInfo::*, std::int64_t RunFileInfo::*,
                 std::uint64_t RunFileInfo::*, int RunFileInfo::*, double RunFileInfo::*,
                 std::vector<std::string> RunFileInfo::*, ReachedCurriculum RunFileInfo::*>
        member;
    /// Required: a root attribute every run has; Optional: one added later, or only some runs
    /// have (absent: the member's default); Summary: what the reader works out from the log,
    /// the checkpoint and the writer lock.
    enum Source { Required, Optional, Summary } source;
};
/// Every field in the order the reader reads them. Not in it: path (the entry's own),
/// configYaml (the index keeps the flattened config), parameters and positionConstants.
const std::vector<RunInfoField>& runInfoFields();

struct RunConfig;
/// One line on what the run reached against its curriculum, as `lengen info` and the studio
/// say it: "7 points, 3 dims: max_steps (1500) ends before the curriculum's 9 points, 4 dims
/// (step 1600)", "9 points, 4 dims (the curriculum's end)", or "nothing yet".
std::string reachedText(const ReachedCurriculum& reached, const RunConfig& config);

/// The training log columns (one entry per logged step).
struct TrainLog {
    std::vector<std::int64_t> step;
    std::vector<double> loss, excessLoss, learningRate, wallSeconds, stepsPerSecond;
    std::vector<double> gradNorm;  ///< before clipping; NaN where not measured (docs/run-format.md)
    std::vector<int> nPoints, nDims;
    int pointwiseWidth = 0;         ///< columns of `pointwise` (= curriculum points.end)
    std::vector<double> pointwise;  ///< row-major [rows, pointwiseWidth], NaN past n_points
};

/// Throws Error(RunFile) naming the path for a missing, damaged or foreign file.
RunFileInfo readRunInfo(const std::string& path);
TrainLog readTrainLog(const std::string& path);

/// Accepts a run folder or a run.h5 path; returns the run.h5 path (Error(RunFile) if absent).
std::string locateRunFile(const std::string& pathOrDir);
/// What a file named as a run turns out to be, read without blocking (a FIFO or device is
/// never opened) and without throwing: what `delete`, `archive` and `restore` check before
/// anything moves (issue 81).
enum class RunFileProbe {
    Run,         ///< opens as a LenGen run, as `lengen info` opens it
    Damaged,     ///< HDF5 (its signature) that does not open: truncated, killed while created
    Foreign,     ///< HDF5 that opens, without LenGen's run format attribute
    NotHdf5,     ///< a regular file without HDF5's signature (text, zeros)
    NotRegular,  ///< a folder, FIFO, device or socket
    Missing,     ///< nothing there
};
RunFileProbe probeRunFile(const std::string& path);
/// "<runFile>.stop": another process's request that the training stop (run_control.h), which
/// the run's writer clears as it takes its lock.
std::string stopRequestPath(const std::string& runFile);
/// A run's status as every front end names it: "stopped" for the file's "cancelled" (a user's
/// Stop or Ctrl-C, a checkpoint written), every other status as stored.
std::string statusLabel(const std::string& status);
/// A fresh run id: 8 random hex digits (new runs and imported ones).
std::string newRunId();

/// The most bytes of notes a run keeps (a root attribute; checkedRunNotes refuses more).
inline constexpr std::size_t kMaxRunNotesBytes = 16 * 1024;

/// What a researcher writes about a run after the fact (issue 41): free text and tags.
struct RunNotes {
    std::string text;
    std::vector<std::string> tags;
};
/// The notes as stored: text and tags trimmed, empty and repeated tags dropped. Error(Usage)
/// for a tag holding a comma or line break or over 40 bytes, over 32 tags, or notes over 16 KiB.
RunNotes checkedRunNotes(const std::string& text, const std::vector<std::string>& tags);
/// "a, b,,c" -> {"a", "b", "c"}: how tags are typed (and stored, joined by commas).
std::vector<std::string> splitTags(const std::string& joined);
/// `add` appended where missing, then `remove` taken out (each entry as typed: "a, b" is two
/// tags): what `lengen note --add-tag/--remove-tag` and the studio's tags of several runs do.
void editTags(RunNotes& notes, const std::vector<std::string>& add,
              const std::vector<std::string>& remove);
/// Replaces a run's notes and tags: root attributes `notes` and `tags` of run.h5, the training
/// records untouched, so they survive resumes. Error(RunFile) while a process trains the run
/// (a file in SWMR-write mode takes no new attributes; docs/run-format.md), or for a file that
/// is not a readable run; Error(Usage) as checkedRunNotes.
void writeRunNotes(const std::string& pathOrDir, const RunNotes& notes);
/// Reads the run's notes and tags under its writer lock, lets `edit` change them (or throw to
/// refuse) and writes them back, so that edits from two processes do not overwrite each other.
/// Returns what it stored: a read after the lock is gone can meet the next edit's open for
/// writing ("unable to lock file").
RunNotes updateRunNotes(const std::string& pathOrDir, const std::function<void(RunNotes&)>& edit);

}  // namespace lengen::engine
