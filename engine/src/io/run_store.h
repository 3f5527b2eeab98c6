#pragma once
// Writing and reading the parts of run.h5 that carry tensors (checkpoints) and the live log.
// Layout and crash-safety rules: docs/run-format.md. In short: every object is created before
// the file enters SWMR-write mode; the log grows by extending chunked datasets; checkpoints
// alternate between two pre-allocated slots and /checkpoint/current is flipped only after a
// slot is completely written and flushed, so a crash never loses the previous checkpoint.

#include <torch/torch.h>

#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/h5.h"
#include "io/writer_lock.h"
#include "lengen/engine/config.h"
#include "lengen/engine/observer.h"

namespace lengen::engine::io {

struct NamedTensor {
    std::string name;     ///< state-dict key
    torch::Tensor value;  ///< CPU, contiguous, float32 (model / optimizer) or uint8 (rng)
};

/// Everything needed to continue a run exactly where it stopped.
struct CheckpointState {
    std::int64_t stepsDone = 0;         ///< completed optimisation steps
    std::vector<NamedTensor> model;     ///< parameters
    std::vector<NamedTensor> expAvg;    ///< AdamW first moments (same keys)
    std::vector<NamedTensor> expAvgSq;  ///< AdamW second moments
    std::int64_t optimizerSteps = 0;    ///< AdamW step count (bias correction)
    torch::Tensor rngState;             ///< CPU generator state, uint8 [n]
    int dims = 0;                       ///< curriculum d_t for the next step
    int points = 0;                     ///< curriculum N for the next step
    /// The curriculum of the last step trained (what run.h5's /curriculum_reached records):
    /// RunConfig::curriculumAfter(stepsDone).
    CurriculumState reached;
    double wallSeconds = 0;  ///< training clock at the checkpoint
};

struct RunHeader {
    std::string runId, createdAt, configYaml, task, positionEncoding, backbone, device;
    std::string precision = "fp32";  ///< fp32 | tf32 | bf16 (the session's, like device)
    std::uint64_t seed = 0;
    std::int64_t totalSteps = 0;
    std::int64_t parameterCount = 0;
    int pointwiseWidth = 1;  ///< curriculum points.end
    std::map<std::string, std::vector<double>> positionConstants;
    std::string importedFrom;  ///< folder of a run trained by the reference's Python code
    std::string sweepName, sweepCell, sweepAxes;  ///< a sweep's cell (docs/sweep-format.md)
};

struct ParameterShape {
    std::string name;
    std::vector<std::int64_t> shape;
};
/// The shapes a checkpoint of these named parameters holds (what RunWriter::create allocates
/// and readCheckpoint / checkCheckpointSlots check against).
std::vector<ParameterShape>
parameterShapes(const std::vector<std::pair<std::string, torch::Tensor>>& params);
std::vector<ParameterShape>
parameterShapes(const torch::OrderedDict<std::string, torch::Tensor>& params);

class RunWriter {
public:
    /// Creates `path` (via a temporary name, renamed once complete), allocates the log and
    /// both checkpoint slots, then switches to SWMR-write mode.
    static std::unique_ptr<RunWriter> create(const std::string& path, const RunHeader& header,
                                             const std::vector<ParameterShape>& params,
                                             std::int64_t rngBytes);
    /// Clears what a writer killed while it held `path` open for writing without SWMR (a
    /// resume's first moments) left behind: the superblock's "open for writing" flags, which
    /// keep every reader out (as `h5clear -s`). Takes the writer lock for the moment it needs
    /// (Error(RunFile) naming a live writer); nothing else in the file changes.
    static void repairAfterKill(const std::string& path);
    /// Reopens a run to continue it: drops log rows with step >= keepBefore (they will be
    /// written again), records the device and precision, marks it running, switches to
    /// SWMR-write mode.
    static std::unique_ptr<RunWriter> reopen(const std::string& path, std::int64_t keepBefore,
                                             const std::string& device,
                                             const std::string& precision,
                                             std::unique_ptr<WriterLock> heldLock = nullptr);
    ~RunWriter();

    void appendLog(const LogRecord& record);
    void writeCheckpoint(const CheckpointState& state);
    void setStatus(const std::string& status);  ///< running | finished | cancelled | failed
    /// Records the curriculum of the last step trained (/curriculum_reached: steps done, dims,
    /// points); appendLog and writeCheckpoint call it, so a reader always sees the latest.
    void recordReached(std::int64_t stepsDone, const CurriculumState& reached);
    /// Best effort while unwinding from another error (the disk may be full): never throws.
    void setStatusNoThrow(const std::string& status) noexcept;
    const std::string& path() const { return m_path; }
    /// Loss of the last row in the log (a reopened run's earlier rows count); NaN if none.
    double lastLoggedLoss() const { return m_lastLoggedLoss; }

private:
    RunWriter(std::string path, std::unique_ptr<WriterLock> lock, H5Handle file);
    void openLog();
    void startSwmr();

    std::string m_path;
    std::unique_ptr<WriterLock> m_lock;  // held for the writer's lifetime; before m_file
    H5Handle m_file;
    std::map<std::string, H5Handle> m_log;
    H5Handle m_reached;  // /curriculum_reached, open for the writer's life (written every log row)
    int m_pointwiseWidth = 1;
    std::int64_t m_current = -1;  // slot holding the latest complete checkpoint
    double m_lastLoggedLoss = std::numeric_limits<double>::quiet_NaN();
};

/// Reads the latest complete checkpoint. Error(RunFile) if the run has none. Every tensor's
/// stored shape is checked before it is allocated: against the bytes the file holds for it, and
/// against `expected` (the model's parameters) when given, so a damaged shape is exit 3 naming
/// the dataset rather than an allocation of gigabytes.
CheckpointState readCheckpoint(const std::string& path,
                               const std::vector<ParameterShape>* expected = nullptr);

/// Before a resume writes into a run: every object of both checkpoint slots opens and has the
/// shape `expected` and the run's generator size give. A damaged slot is Error(RunFile) naming
/// it; left alone, HDF5's SWMR writer retried its damaged header forever (a hang).
void checkCheckpointSlots(const std::string& path, const std::vector<ParameterShape>& expected);

}  // namespace lengen::engine::io
