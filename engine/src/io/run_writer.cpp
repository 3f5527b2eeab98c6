#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <limits>

#include "io/run_store.h"
#include "io/writer_lock.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/version.h"

namespace fs = std::filesystem;

namespace lengen::engine::io {
namespace {

// The run's writer lock, and no stop request left from before it: one written from now on
// (`lengen stop`, `sweep cancel`) is this writer's, even before its training watches for it
// (StopRequestWatch): a cancel in a sweep's first seconds landed in that gap and was lost.
std::unique_ptr<WriterLock> takeWriterLock(const std::string& path)
{
    auto lock = std::make_unique<WriterLock>(path);
    std::error_code ec;
    fs::remove(stopRequestPath(path), ec);
    return lock;
}

constexpr hsize_t kLogChunk = 256;
constexpr const char* kSlots[2] = {"slot0", "slot1"};

struct LogColumn {
    const char* name;
    hid_t type;
};
const LogColumn kColumns[] = {
    {"step", H5T_NATIVE_INT64},         {"loss", H5T_NATIVE_DOUBLE},
    {"excess_loss", H5T_NATIVE_DOUBLE}, {"learning_rate", H5T_NATIVE_DOUBLE},
    {"wall_time", H5T_NATIVE_DOUBLE},   {"steps_per_sec", H5T_NATIVE_DOUBLE},
    {"n_points", H5T_NATIVE_INT32},     {"n_dims", H5T_NATIVE_INT32},
    {"grad_norm", H5T_NATIVE_DOUBLE}};
// Columns added after format 1 was fixed: created NaN-filled when a run written before them
// is resumed, so every column keeps one row per logged step.
const char* const kLaterColumns[] = {"grad_norm"};

std::vector<hsize_t> dimsOf(const std::vector<std::int64_t>& shape)
{
    return std::vector<hsize_t>(shape.begin(), shape.end());
}

void createSlot(hid_t checkpoint, const char* name, const std::vector<ParameterShape>& params,
                std::int64_t rngBytes, const std::string& path)
{
    auto slot = createGroup(checkpoint, name, path);
    createDataset(slot.id(), "step", H5T_NATIVE_INT64, {}, path);
    createDataset(slot.id(), "wall_time", H5T_NATIVE_DOUBLE, {}, path);
    createDataset(slot.id(), "curriculum", H5T_NATIVE_INT64, {2}, path);
    createDataset(slot.id(), "rng_state", H5T_NATIVE_UINT8, {static_cast<hsize_t>(rngBytes)}, path);
    auto model = createGroup(slot.id(), "model", path);
    auto optimizer = createGroup(slot.id(), "optimizer", path);
    createDataset(optimizer.id(), "step", H5T_NATIVE_INT64, {}, path);
    auto m1 = createGroup(optimizer.id(), "exp_avg", path);
    auto m2 = createGroup(optimizer.id(), "exp_avg_sq", path);
    for (const auto& p : params)
        for (hid_t group : {model.id(), m1.id(), m2.id()})
            createDataset(group, p.name, H5T_NATIVE_FLOAT, dimsOf(p.shape), path);
}

void writeTensor(hid_t group, const NamedTensor& t, const std::string& path)
{
    auto ds = openDataset(group, t.name, path);
    auto cpu = t.value.to(torch::kCPU, torch::kFloat32).contiguous();
    writeAll(ds.id(), H5T_NATIVE_FLOAT, cpu.data_ptr<float>(), static_cast<size_t>(cpu.numel()),
             path);
}

// /curriculum_reached: int64 [3] = steps done, dims, points of the last step trained; -1 steps
// while nothing is recorded (a reader then takes the log's last row). Created before SWMR-write
// mode starts, as every object must be.
constexpr const char* kReached = "curriculum_reached";
void createReachedRecord(hid_t f, const std::string& path)
{
    auto ds = createDataset(f, kReached, H5T_NATIVE_INT64, {3}, path);
    const std::int64_t none[3] = {-1, 0, 0};
    writeAll(ds.id(), H5T_NATIVE_INT64, none, 3, path);
}

template <typename T>
void writeScalar(hid_t loc, const char* name, hid_t type, T value, const std::string& path)
{
    auto ds = openDataset(loc, name, path);
    writeAll(ds.id(), type, &value, 1, path);
}

}  // namespace

RunWriter::RunWriter(std::string path, std::unique_ptr<WriterLock> lock, H5Handle file)
    : m_path(std::move(path)), m_lock(std::move(lock)), m_file(std::move(file))
{}

RunWriter::~RunWriter()
{
    H5Lock lock(h5Mutex());
    m_log.clear();
    m_reached.reset();
    m_file.reset();
    m_lock.reset();  // only after the file is closed
}

namespace {

// The run's identity as root attributes (docs/run-format.md).
void writeHeaderAttributes(hid_t f, const RunHeader& h, const std::string& partial)
{
    writeAttribute(f, "format", std::string("lengen-run"), partial);
    writeAttribute(f, "format_version", std::int64_t{kRunFormatVersion}, partial);
    writeAttribute(f, "engine_version", std::string(versionString()), partial);
    writeAttribute(f, "run_id", h.runId, partial);
    writeAttribute(f, "created_at", h.createdAt, partial);
    writeAttribute(f, "seed", h.seed, partial);
    writeAttribute(f, "task", h.task, partial);
    writeAttribute(f, "position_encoding", h.positionEncoding, partial);
    writeAttribute(f, "backbone", h.backbone, partial);
    writeAttribute(f, "total_steps", h.totalSteps, partial);
    writeAttribute(f, "parameter_count", h.parameterCount, partial);
    writeAttribute(f, "device", h.device, partial);
    char host[256] = "";
    ::gethostname(host, sizeof host - 1);
    writeAttribute(f, "host", std::string(host), partial);
    if (!h.importedFrom.empty())
        writeAttribute(f, "imported_from", h.importedFrom, partial);
    if (!h.sweepName.empty()) {
        writeAttribute(f, "sweep", h.sweepName, partial);
        writeAttribute(f, "sweep_cell", h.sweepCell, partial);
        writeAttribute(f, "sweep_axes", h.sweepAxes, partial);
    }
}

}  // namespace

std::unique_ptr<RunWriter> RunWriter::create(const std::string& path, const RunHeader& h,
                                             const std::vector<ParameterShape>& params,
                                             std::int64_t rngBytes)
{
    H5Lock lock(h5Mutex());
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    if (ec)
        throw Error(ErrorKind::Io, "cannot create the run folder " +
                                       fs::path(path).parent_path().string() + ": " + ec.message());
    // The lock comes first: from the moment run.h5 exists its writer is alive, so a reader
    // never mistakes a run being created for an interrupted one.
    auto writerLock = takeWriterLock(path);
    const std::string partial = path + ".partial";
    try {
        auto file = createFile(partial);
        const hid_t f = file.id();
        writeHeaderAttributes(f, h, partial);
        writeStringDataset(f, "config", h.configYaml, partial);
        {
            H5Handle type(fixedStringType(), H5Tclose);
            auto status = createDataset(f, "status", type.id(), {}, partial);
            writeFixedString(status.id(), "running", partial);
        }
        createReachedRecord(f, partial);
        auto pe = createGroup(f, "position_encoding", partial);
        for (const auto& [name, values] : h.positionConstants)
            writeAttribute(pe.id(), name, values, partial);
        auto log = createGroup(f, "log", partial);
        const double nanRow = std::numeric_limits<double>::quiet_NaN();
        for (const auto& c : kColumns)
            createLog(log.id(), c.name, c.type, {}, kLogChunk,
                      c.type == H5T_NATIVE_DOUBLE ? static_cast<const void*>(&nanRow) : nullptr,
                      partial);
        const float nan = std::numeric_limits<float>::quiet_NaN();
        createLog(log.id(), "pointwise", H5T_NATIVE_FLOAT, {static_cast<hsize_t>(h.pointwiseWidth)},
                  64, &nan, partial);
        auto checkpoint = createGroup(f, "checkpoint", partial);
        auto current = createDataset(checkpoint.id(), "current", H5T_NATIVE_INT64, {}, partial);
        const std::int64_t none = -1;
        writeAll(current.id(), H5T_NATIVE_INT64, &none, 1, partial);
        for (const char* slot : kSlots)
            createSlot(checkpoint.id(), slot, params, rngBytes, partial);
        createGroup(f, "eval", partial);
        createGroup(f, "probes", partial);
        if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
            throwH5(ErrorKind::Io, "cannot flush the run file", partial);
    } catch (...) {
        fs::remove(partial, ec);  // a half-made file is nobody's run
        throw;
    }
    // Into SWMR-write mode under the temporary name, then renamed (the open file keeps its
    // inode): a kill at any moment leaves no run.h5 or one every reader opens. Issue 81 item
    // 10: renamed first, a kill before the switch left run.h5 flagged "open for writing",
    // which no SWMR reader opens.
    std::unique_ptr<RunWriter> writer;
    try {
        writer = reopen(partial, 0, h.device, h.precision, std::move(writerLock));
    } catch (...) {
        fs::remove(partial, ec);
        throw;
    }
    fs::rename(partial, path, ec);
    if (ec) {
        const auto why = ec.message();
        writer.reset();
        fs::remove(partial, ec);
        throw Error(ErrorKind::Io, "cannot move " + partial + " into place: " + why);
    }
    writer->m_path = path;
    return writer;
}

void RunWriter::repairAfterKill(const std::string& path)
{
    H5Lock lock(h5Mutex());
    const WriterLock writer(path);
    openFile(path, OpenMode::ReadWriteAfterCrash);  // closed at once: the flags are cleared
}

std::unique_ptr<RunWriter> RunWriter::reopen(const std::string& path, std::int64_t keepBefore,
                                             const std::string& device,
                                             const std::string& precision,
                                             std::unique_ptr<WriterLock> writerLock)
{
    H5Lock lock(h5Mutex());
    // Holding the writer lock proves no live process writes this run, so status flags left by
    // a crashed SWMR writer can be cleared safely.
    if (!writerLock)
        writerLock = takeWriterLock(path);
    std::unique_ptr<RunWriter> writer(
        new RunWriter(path, std::move(writerLock), openFile(path, OpenMode::ReadWriteAfterCrash)));
    writer->openLog();
    // Rows logged after the checkpoint we continue from will be logged again: drop them.
    auto& steps = writer->m_log.at("step");
    const auto rows = shapeOf(steps.id(), 1, path)[0];
    std::vector<std::int64_t> logged(rows);
    readAll(steps.id(), H5T_NATIVE_INT64, logged.data(), logged.size(), path);
    hsize_t keep = 0;
    while (keep < rows && logged[keep] < keepBefore)
        ++keep;
    if (keep > 0) {  // the run's final loss, should this session log nothing more
        std::vector<double> losses(rows);
        readAll(writer->m_log.at("loss").id(), H5T_NATIVE_DOUBLE, losses.data(), losses.size(),
                path);
        writer->m_lastLoggedLoss = losses[keep - 1];
    }
    for (auto& [name, ds] : writer->m_log)
        truncateRows(ds.id(), keep, path);
    writer->m_current = readIntScalar(writer->m_file.id(), "checkpoint/current", path);
    // What a session that died recorded past the checkpoint is not what the run holds now; a
    // run written before the record existed gets one (both: unknown until the next log row).
    if (!exists(writer->m_file.id(), kReached))
        createReachedRecord(writer->m_file.id(), path);
    writer->m_reached = openDataset(writer->m_file.id(), kReached, path);
    const std::int64_t none[3] = {-1, 0, 0};
    writeAll(writer->m_reached.id(), H5T_NATIVE_INT64, none, 3, path);
    writeAttribute(writer->m_file.id(), "device", device, path);
    writeAttribute(writer->m_file.id(), "precision", precision, path);
    writer->setStatus("running");
    writer->startSwmr();
    return writer;
}

void RunWriter::openLog()
{
    auto log = openGroup(m_file.id(), "log", m_path);
    const auto rows = shapeOf(openDataset(log.id(), "step", m_path).id(), 1, m_path)[0];
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (const char* name : kLaterColumns)
        if (!exists(log.id(), name)) {
            auto ds = createLog(log.id(), name, H5T_NATIVE_DOUBLE, {}, kLogChunk, &nan, m_path);
            growRows(ds.id(), rows, m_path);  // the fill value is NaN: one call, any length
        }
    for (const auto& c : kColumns)
        m_log.emplace(c.name, openDataset(log.id(), c.name, m_path));
    m_log.emplace("pointwise", openDataset(log.id(), "pointwise", m_path));
    m_pointwiseWidth = static_cast<int>(shapeOf(m_log.at("pointwise").id(), 2, m_path)[1]);
}

void RunWriter::startSwmr()
{
    if (H5Fstart_swmr_write(m_file.id()) < 0)
        throwH5(ErrorKind::Io, "cannot switch the run file to SWMR-write mode", m_path);
}

void RunWriter::appendLog(const LogRecord& r)
{
    H5Lock lock(h5Mutex());
    const std::int32_t points = r.nPoints, dims = r.nDims;
    appendRow(m_log.at("step").id(), H5T_NATIVE_INT64, &r.step, m_path);
    appendRow(m_log.at("loss").id(), H5T_NATIVE_DOUBLE, &r.loss, m_path);
    m_lastLoggedLoss = r.loss;
    appendRow(m_log.at("excess_loss").id(), H5T_NATIVE_DOUBLE, &r.excessLoss, m_path);
    appendRow(m_log.at("learning_rate").id(), H5T_NATIVE_DOUBLE, &r.learningRate, m_path);
    appendRow(m_log.at("wall_time").id(), H5T_NATIVE_DOUBLE, &r.wallSeconds, m_path);
    appendRow(m_log.at("steps_per_sec").id(), H5T_NATIVE_DOUBLE, &r.stepsPerSecond, m_path);
    appendRow(m_log.at("n_points").id(), H5T_NATIVE_INT32, &points, m_path);
    appendRow(m_log.at("n_dims").id(), H5T_NATIVE_INT32, &dims, m_path);
    appendRow(m_log.at("grad_norm").id(), H5T_NATIVE_DOUBLE, &r.gradNorm, m_path);
    std::vector<float> row(static_cast<size_t>(m_pointwiseWidth),
                           std::numeric_limits<float>::quiet_NaN());
    for (size_t i = 0; i < r.pointwise.size() && i < row.size(); ++i)
        row[i] = static_cast<float>(r.pointwise[i]);
    appendRow(m_log.at("pointwise").id(), H5T_NATIVE_FLOAT, row.data(), m_path);
    recordReached(r.step + 1, {r.nDims, r.nPoints});
    if (H5Fflush(m_file.id(), H5F_SCOPE_LOCAL) < 0)
        throwH5(ErrorKind::Io, "cannot flush the log", m_path);
}

void RunWriter::recordReached(std::int64_t stepsDone, const CurriculumState& reached)
{
    H5Lock lock(h5Mutex());
    const std::int64_t v[3] = {stepsDone, reached.dims, reached.points};
    writeAll(m_reached.id(), H5T_NATIVE_INT64, v, 3, m_path);
}

void RunWriter::writeCheckpoint(const CheckpointState& st)
{
    H5Lock lock(h5Mutex());
    const std::int64_t target = m_current == 0 ? 1 : 0;  // never the slot in use
    auto slot = openGroup(m_file.id(), std::string("checkpoint/") + kSlots[target], m_path);
    auto model = openGroup(slot.id(), "model", m_path);
    auto m1 = openGroup(slot.id(), "optimizer/exp_avg", m_path);
    auto m2 = openGroup(slot.id(), "optimizer/exp_avg_sq", m_path);
    for (const auto& t : st.model)
        writeTensor(model.id(), t, m_path);
    for (const auto& t : st.expAvg)
        writeTensor(m1.id(), t, m_path);
    for (const auto& t : st.expAvgSq)
        writeTensor(m2.id(), t, m_path);
    writeScalar(slot.id(), "optimizer/step", H5T_NATIVE_INT64, st.optimizerSteps, m_path);
    writeScalar(slot.id(), "step", H5T_NATIVE_INT64, st.stepsDone, m_path);
    writeScalar(slot.id(), "wall_time", H5T_NATIVE_DOUBLE, st.wallSeconds, m_path);
    const std::int64_t curriculum[2] = {st.dims, st.points};
    writeAll(openDataset(slot.id(), "curriculum", m_path).id(), H5T_NATIVE_INT64, curriculum, 2,
             m_path);
    auto rng = st.rngState.contiguous();
    writeAll(openDataset(slot.id(), "rng_state", m_path).id(), H5T_NATIVE_UINT8,
             rng.data_ptr<std::uint8_t>(), static_cast<size_t>(rng.numel()), m_path);
    // The slot must be on disk before `current` points at it, and read back as written (its
    // step and generator state at least: what a resume trusts first).
    if (H5Fflush(m_file.id(), H5F_SCOPE_LOCAL) < 0)
        throwH5(ErrorKind::Io, "cannot flush the checkpoint", m_path);
    std::vector<std::uint8_t> rngBack(static_cast<size_t>(rng.numel()));
    readAll(openDataset(slot.id(), "rng_state", m_path).id(), H5T_NATIVE_UINT8, rngBack.data(),
            rngBack.size(), m_path);
    if (readIntScalar(slot.id(), "step", m_path) != st.stepsDone ||
        std::memcmp(rngBack.data(), rng.data_ptr<std::uint8_t>(), rngBack.size()) != 0)
        throw Error(ErrorKind::Io, "the checkpoint at step " + std::to_string(st.stepsDone) +
                                       " did not read back as written: " + m_path);
    writeAll(openDataset(m_file.id(), "checkpoint/current", m_path).id(), H5T_NATIVE_INT64, &target,
             1, m_path);
    if (st.stepsDone > 0)  // nothing trained yet: nothing reached (the start is not a length)
        recordReached(st.stepsDone, st.reached);
    if (H5Fflush(m_file.id(), H5F_SCOPE_LOCAL) < 0)
        throwH5(ErrorKind::Io, "cannot flush the checkpoint", m_path);
    m_current = target;
}

void RunWriter::setStatus(const std::string& status)
{
    H5Lock lock(h5Mutex());
    auto ds = openDataset(m_file.id(), "status", m_path);
    writeFixedString(ds.id(), status, m_path);
    if (H5Fflush(m_file.id(), H5F_SCOPE_LOCAL) < 0)
        throwH5(ErrorKind::Io, "cannot write the run's status", m_path);
}

void RunWriter::setStatusNoThrow(const std::string& status) noexcept
{
    try {
        setStatus(status);
    } catch (...) {
        // The status stays "running"; readers show the run as interrupted once this process
        // has released its writer lock, which is as true.
    }
}

}  // namespace lengen::engine::io
