#pragma once
// Runs of the reference's Python code (IKMLab/length-generalization-with-icl): a run folder
// `models/<task>/dim_<a>-<b>/<date>/<id>/` holds `config.yaml` (the flattened run config),
// `state.pt` (torch.save of {model_state_dict, optimizer_state_dict, train_step}) and, once
// evaluated, `metrics.json`. LenGen imports such a folder into a run file, and exports a run
// file as such a folder (docs/reference-runs.md). No Python is needed for either.

#include <cstdint>
#include <string>
#include <vector>

namespace lengen::engine {

/// True when `dir` holds both config.yaml and state.pt.
bool isReferenceRunDir(const std::string& dir);

/// Every reference run folder at or below `root` (sorted; through scanFolder, the walk the
/// Runs list and `lengen jobs` make). Folders that already hold a run.h5 are LenGen runs and
/// are skipped; a walk that fails twice finds none.
std::vector<std::string> findReferenceRuns(const std::string& root);

struct ReferenceImportOptions {
    std::string outDir = "runs";  ///< root of <task>/dim_a-b/<date>/<id>/run.h5
    bool metrics = true;          ///< also import metrics.json when present
};

struct ReferenceImportResult {
    std::string runFile;                       ///< the new run.h5
    std::int64_t stepsDone = 0;                ///< optimisation steps the weights have seen
    bool optimizerImported = false;            ///< AdamW moments carried over
    std::vector<std::string> importedMethods;  ///< from metrics.json
    std::vector<std::string> notes;            ///< what was skipped or adapted, one sentence each
};

/// Where importReferenceRun would put `refDir` (the run.h5 path), without touching anything.
/// Throws ConfigError when its config.yaml is invalid.
std::string referenceImportTarget(const std::string& refDir, const std::string& outDir);

/// True when `refDir` was imported into `outDir` before (its target run names it as origin).
bool isReferenceRunImported(const std::string& refDir, const std::string& outDir);

/// The hidden folder an import of `runFile` is assembled in (removed on failure; a process
/// killed mid-import leaves it, and the next import of the run clears it).
std::string importingFolder(const std::string& runFile);

/// Imports a reference run folder. The config is the reference's as resolved (with
/// `compat: reference`), the weights come from state.pt by state-dict key, the AdamW state
/// when it matches, metrics.json's curves as imported results. Throws Error(RunFile) for a
/// missing, damaged or mismatching file (naming the first key that differs and both shapes),
/// ConfigError for an invalid config.yaml, Error(Io) when the target exists or cannot be
/// written. Nothing is left behind on failure.
ReferenceImportResult importReferenceRun(const std::string& refDir,
                                         const ReferenceImportOptions& options = {});

struct ReferenceExportResult {
    std::string dir;                 ///< the folder written
    std::vector<std::string> notes;  ///< adaptations the reference needs, one sentence each
};

/// Writes a LenGen run (folder or run.h5) as a reference run folder into `outDir`:
/// config.yaml that the reference's `train.py --eval-only` reads and state.pt that its model
/// loads with load_state_dict(strict=True). Error(Io) when outDir already holds a state.pt.
ReferenceExportResult exportReferenceRun(const std::string& run, const std::string& outDir);

}  // namespace lengen::engine
