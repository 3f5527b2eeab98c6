#pragma once
// The runs under a folder at research scale (issue 42): one row per run.h5 with what the Runs
// list and `lengen runs` show, sort and filter by, the run's resolved config flattened (filter
// by any key), read from an index beside the runs (<folder>/.lengen-index.json) wherever a
// run's files are unchanged (size and modification time of run.h5 and analysis.h5), and read
// from the run files otherwise. The index is a cache: deleting it loses nothing (the next look
// rebuilds it), a damaged or foreign one is ignored and rewritten, a read-only folder is listed
// without one. Runs that a process writes ("running") are always read afresh.

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lengen/engine/run_file.h"

namespace lengen::engine {

/// A number a run does not have (nothing logged, no evaluation): NaN, shown as an empty cell.
inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

/// What tells a changed run from the same one: run.h5's and analysis.h5's size and
/// modification time (analysisSize -1: no analysis file).
struct RunStamp {
    std::int64_t runSize = -1, runMtimeNs = 0, analysisSize = -1, analysisMtimeNs = 0;
    bool operator==(const RunStamp& o) const
    {
        return runSize == o.runSize && runMtimeNs == o.runMtimeNs &&
               analysisSize == o.analysisSize && analysisMtimeNs == o.analysisMtimeNs;
    }
    bool operator!=(const RunStamp& o) const { return !(*this == o); }
};
/// Two stat calls; runSize -1 when run.h5 cannot be stat'ed.
RunStamp runStamp(const std::string& runFile);

/// A stored evaluation as two numbers (issue 55): the trained model's mean error (accuracy for
/// a boolean task) at the training length and at the longest evaluated length.
struct MethodResult {
    std::string name;  ///< "ood_length"; "ood_length+yarn:factor=8" under an intervention
    int trainPosition = 0, lastPosition = 0;       ///< 0-based positions (trainingPosition())
    double atTrain = kNoValue, atLast = kNoValue;  ///< NaN where the curve has no finite value
};

/// One run as the lists know it: its file's info (RunFileInfo, as readRunInfo reads it, without
/// the config text, parameter shapes and PE constants) and what is worked out from it and from
/// analysis.h5. The index stores `info` whole through runInfoFields(), so a new run field needs
/// no change here (docs/architecture.md: where a new run field goes).
struct RunIndexEntry {
    std::string path;  ///< run.h5
    RunStamp stamp;
    /// task, position encoding, backbone, status, run id, sweep, notes, tags, steps, losses.
    /// A damaged run's has its status ("damaged") and, as its task, its folder's name.
    RunFileInfo info;
    std::string error;       ///< why the run could not be read ("damaged"), or why its analysis not
    std::int64_t seed = -1;  ///< info.seed; -1 for a run of the Python code (it seeds nothing)
    /// dims and points the run last trained on (issue 52: RunFileInfo::reached), the
    /// curriculum's end for a run that trained nothing; endDims / endPoints: the curriculum's end.
    int dims = 0, points = 0, endDims = 0, endPoints = 0;
    int hidden = 0, layers = 0, heads = 0;
    std::string reached;  ///< reachedText: what it reached against the curriculum
    /// Steps as they land: the last logged step + 1 while a run trains (its checkpoint lags),
    /// at most info.totalSteps.
    std::int64_t steps = 0;
    std::vector<MethodResult> results;  ///< one per stored evaluation, in the file's order
    std::vector<std::string> evalMethods, probes;
    std::map<std::string, std::string> config;  ///< flattenedConfig of the stored config
};

/// When the run was created as the lists show it: "2026-12-06 09:30:00" (info.createdAt
/// without ISO 8601's T and Z).
std::string createdText(const RunIndexEntry& run);

/// The status of a run whose file could not be read (RunIndexEntry::error says why): it has its
/// path and status, and no other value (no term but status matches it; listed with empty fields).
inline constexpr const char* kDamagedStatus = "damaged";
inline bool isDamaged(const RunIndexEntry& run) { return run.info.status == kDamagedStatus; }

struct RunIndexStats {
    std::size_t runs = 0, fromIndex = 0, read = 0;
    bool indexWritten = false;
};

/// What one walk of a folder finds, for every reader of runs and jobs: the Runs list and
/// `lengen runs` (run files), `lengen jobs` and the Jobs panel (also sweep folders and analysis
/// job markers). Paths as walked under `folder`, each list sorted.
struct FolderScan {
    std::vector<std::string> runFiles;    ///< every run.h5 (a run.h5 given as the folder: itself)
    std::vector<std::string> sweeps;      ///< folders holding sweep.yaml and index.json
    std::vector<std::string> jobMarkers;  ///< .lengen-job-*.lock files (jobs.h)
    /// Folders of the Python code's runs not imported in place: config.yaml and state.pt, no
    /// run.h5 (reference_runs.h, findReferenceRuns)
    std::vector<std::string> referenceRuns;
};
/// Walks `folder` at any depth (not into the .lengen-trash and .lengen-archive folders below it:
/// runs moved there are out of every list, run_archive.h). An entry that cannot be stat'ed (a
/// dangling link) is skipped; a walk that fails part way (a folder renamed under it) is tried again
/// once, then Error(Io): a shortened list must not pass for the folder's contents.
FolderScan scanFolder(const std::string& folder);

/// Every run.h5 under `folder` (at any depth; a run.h5 path is itself), in path order.
std::vector<RunIndexEntry> indexRuns(const std::string& folder, RunIndexStats* stats = nullptr);

/// What changed under `folder` since `known` (what indexRuns or an earlier refresh returned for
/// it): runs added, runs gone, and runs whose files changed (a "running" one is always re-read:
/// a writer that died turns "interrupted"). Unchanged runs are neither read nor listed. The
/// folder's index is rewritten when anything changed.
struct RunIndexChanges {
    std::vector<RunIndexEntry> added, changed;
    std::vector<std::string> removed;  ///< paths
    bool any() const { return !added.empty() || !changed.empty() || !removed.empty(); }
};
RunIndexChanges refreshRunIndex(const std::string& folder, const std::vector<RunIndexEntry>& known);
/// One run read from its files (what indexRuns does for a run not in the index).
RunIndexEntry readRunEntry(const std::string& runFile);
/// <folder>/.lengen-index.json
std::string runIndexFileFor(const std::string& folder);

/// What a run says under `key`: its encoding, task or backbone (pe, task, backbone as listed),
/// its status (as statusLabel names it), its id (id, run_id), its sweep's name (sweep; "" for a
/// run of no sweep), else the config key's value;
/// nullopt where the run has no such key. What `key=value` filters compare and the runs table's
/// key columns show.
std::optional<std::string> runValue(const RunIndexEntry& run, const std::string& key);
/// One filter term of the Runs list and `lengen runs --where` (docs/cli.md):
///   key=value  key!=value  key<v  key<=v  key>v  key>=v  key=low..high (both ends included)
/// The key is a config key (model.num_hidden_layers), a column (pe, task, backbone, status,
/// seed, tag, id, sweep) or a result (final_loss, min_loss, steps, total_steps, steps_per_s,
/// wall_s). Where the run's value and the term's are numbers they compare as numbers (1e-4 equals
/// 0.0001); other values compare as text, case-insensitive. <, >, <=, >= and ranges take numbers.
struct RunFilterTerm {
    enum class Op { Eq, Ne, Lt, Le, Gt, Ge, Range };
    std::string key;
    Op op = Op::Eq;
    std::string value;  ///< the operand as written; a range's low end
    std::string high;   ///< a range's high end
    std::string text;   ///< the term as written
};
/// What a word of a filter is: a term, a term that cannot be one (`error` says why, naming
/// it), or plain text (neither: searched in every column).
struct ParsedFilterWord {
    std::optional<RunFilterTerm> term;
    std::string error;
};
ParsedFilterWord parseFilterWord(const std::string& word);
/// A filter as typed, space-separated words (the Runs list's box, a saved view's filter): its
/// terms, the errors of words that look like terms but cannot be, and the other words joined
/// by one space, the text the Runs list looks for in every column.
struct ParsedFilter {
    std::vector<RunFilterTerm> terms;
    std::vector<std::string> errors;
    std::string text;
};
ParsedFilter parseFilter(const std::string& filter);
/// Whether `text` is, case-insensitively, in one of what a run is known by: its id, task,
/// encoding, backbone, status, creation time, sweep, tags, notes or path ("" is in every run).
/// What `lengen runs --view` does with a view's words, where the Runs list has its columns.
bool runHasText(const RunIndexEntry& run, const std::string& text);
bool runMatches(const RunIndexEntry& run, const RunFilterTerm& term);
/// `key=value` (RunFilterTerm::Op::Eq).
bool runMatches(const RunIndexEntry& run, const std::string& key, const std::string& value);
/// Why a filter on `key` can match none of `runs`: "" when the key is a column or result or
/// some run's config has it, else "no run has the key K; did you mean K2?" (the closest column
/// or key of any run by edit distance, when one is close) — an empty list because of a typo is
/// said, not shown.
std::string filterKeyProblem(const std::vector<const RunIndexEntry*>& runs, const std::string& key);
/// The closest of `candidates` to `word` by edit distance, when one is close; "" otherwise.
std::string closestName(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace lengen::engine
