#pragma once
// The analysis file beside a run (<run folder>/analysis.h5, docs/analysis-format.md): results
// of evaluation and probes. Edited copy-on-write: the current file is copied to
// analysis.h5.partial, changed there, flushed, fsync'ed and renamed over the original, so a
// crash or a full disk never damages results already saved, and readers never see a
// half-written file. One editor at a time (flock on analysis.h5.lock).

#include <memory>
#include <string>
#include <vector>

#include "io/h5.h"
#include "io/writer_lock.h"
#include "lengen/engine/analysis_records.h"
#include "lengen/engine/config.h"

namespace lengen::engine::io {

constexpr int kAnalysisFormatVersion = 1;

class AnalysisWriter {
public:
    /// Starts an edit of `analysisPath` (created if missing) for the run `runId`. Error(RunFile)
    /// if another process is editing it or the existing file is foreign. `startEmpty` replaces
    /// the whole file on commit instead of editing a copy (files rewritten whole, e.g. maps).
    /// `format` is the root's format attribute (the sweep's aggregate file reuses this writer
    /// with "lengen-sweep-aggregate" and no run id).
    AnalysisWriter(const std::string& analysisPath, const std::string& runId,
                   bool startEmpty = false, const std::string& format = "lengen-analysis");
    ~AnalysisWriter();  ///< without commit(): discards the edit
    AnalysisWriter(const AnalysisWriter&) = delete;
    AnalysisWriter& operator=(const AnalysisWriter&) = delete;

    hid_t file() const { return m_file.id(); }
    const std::string& path() const { return m_path; }
    /// The group at a slash-separated path, parents created as needed; `fresh` deletes an
    /// existing group of that name first.
    H5Handle group(const std::string& groupPath, bool fresh);
    /// Flush, fsync, rename over the original. The writer is unusable afterwards.
    void commit();

private:
    std::string m_path, m_partial;
    std::unique_ptr<WriterLock> m_lock;
    H5Handle m_file;
    bool m_committed = false;
};

/// A run's stored evaluations as the file holds them (names in the file's order); eval's
/// readEvaluations puts them in the methods' and the interventions' order.
struct StoredEvaluations {
    std::vector<EvalResult> plain;     ///< /eval/<method>
    std::vector<EvalResult> imported;  ///< /imported/<label>/<method>
    /// /interventions/<spec>/<method>, per spec
    std::vector<std::pair<std::string, std::vector<EvalResult>>> interventions;
};
/// Empty when the run has no analysis file; Error(RunFile) naming it when it is damaged.
StoredEvaluations readStoredEvaluations(const std::string& run);

/// Opens an analysis file read-only; Error(RunFile) if it is damaged or foreign.
H5Handle openAnalysis(const std::string& path);

/// <parent>/<key>/{mean, std, bootstrap_low, bootstrap_high} plus a `label` attribute.
void writeCurve(hid_t parent, const std::string& key, const std::string& label,
                const CurveStats& stats, const std::string& path);
EvalCurve readCurve(hid_t parent, const std::string& key, const std::string& path);

/// "a\nb\nc" -> {a, b, c}; "" -> {} (list attributes: order, cells, sets).
std::vector<std::string> splitLines(const std::string& text);

/// The `order` attribute (newline-separated names) of a group, or its members by name.
std::vector<std::string> readOrder(hid_t group, const std::string& path);

/// The training length of results stored before they recorded it (issue 52): the run's config
/// at the result's checkpoint step (RunConfig::curriculumAfter), read once per reader. A run
/// file that cannot be read leaves `fallback` (the curriculum's end, as those results said).
class TrainedLength {
public:
    explicit TrainedLength(std::string run) : m_run(std::move(run)) {}
    int at(std::int64_t checkpointStep, int fallback);

private:
    std::string m_run;
    bool m_tried = false;
    std::shared_ptr<const RunConfig> m_config;
    int m_reached = 0;  // the run's reached points, for results without a checkpoint step
};

/// Attribute helpers that read a missing attribute as a default.
std::int64_t intAttr(hid_t loc, const std::string& name, std::int64_t fallback,
                     const std::string& path);
double doubleAttr(hid_t loc, const std::string& name, double fallback, const std::string& path);
std::string stringAttr(hid_t loc, const std::string& name, const std::string& path);

}  // namespace lengen::engine::io
