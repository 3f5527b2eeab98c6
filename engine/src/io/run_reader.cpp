// Read-only access to run files; opened in SWMR-read mode so a run that is still being
// written can be inspected without disturbing (or being disturbed by) the writer.
// Torch-free (lengen_engine_core): the checkpoints' tensors are read by checkpoint_reader.cpp.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "io/run_open.h"
#include "io/writer_lock.h"
#include "lengen/engine/config.h"
#include "lengen/engine/run_file.h"

namespace fs = std::filesystem;

namespace lengen::engine {

namespace io {

H5Handle openRunForReading(const std::string& path)
{
    auto file = openFile(path, OpenMode::ReadSwmr);
    if (!hasAttribute(file.id(), "format") ||
        readStringAttribute(file.id(), "format", path) != "lengen-run")
        throw Error(ErrorKind::RunFile, "not a LenGen run file (HDF5, but foreign): " + path);
    const auto version = readIntAttribute(file.id(), "format_version", path);
    if (version > kRunFormatVersion)
        throw Error(ErrorKind::RunFile, "run file format " + std::to_string(version) +
                                            " is newer than this build supports (" +
                                            std::to_string(kRunFormatVersion) + "): " + path);
    return file;
}

std::int64_t currentCheckpointSlot(hid_t file, const std::string& path)
{
    const std::int64_t current = readIntScalar(file, "checkpoint/current", path);
    if (current < -1 || current > 1)
        throw Error(ErrorKind::RunFile, "dataset '/checkpoint/current' in " + path + " is " +
                                            std::to_string(current) +
                                            "; it names slot 0 or 1, or -1 (damaged file)");
    return current;
}

}  // namespace io

using namespace io;

namespace {

template <typename T>
std::vector<T> readColumn(hid_t log, const char* name, hid_t type, const std::string& path)
{
    auto ds = openDataset(log, name, path);
    std::vector<T> out(shapeOf(ds.id(), 1, path)[0]);
    readAll(ds.id(), type, out.data(), out.size(), path);
    return out;
}

// What the run reached (issue 52), most direct source first: the record this build writes at
// each log row and checkpoint; for runs written before it, the log's last row, or the config at
// the checkpoint's step where the checkpoint is later than the log (the last steps of a run are
// rarely logged, and a curriculum step may fall among them).
ReachedCurriculum readReached(hid_t f, hid_t log, const RunFileInfo& info, const std::string& path)
{
    ReachedCurriculum r;
    if (exists(f, "curriculum_reached")) {
        auto ds = openDataset(f, "curriculum_reached", path);
        if (shapeOf(ds.id(), 1, path)[0] != 3)
            throw Error(ErrorKind::RunFile, "dataset '/curriculum_reached' in " + path +
                                                " does not hold 3 values (damaged file)");
        std::int64_t v[3];
        readAll(ds.id(), H5T_NATIVE_INT64, v, 3, path);
        if (v[0] > 0) {  // -1: not recorded yet; 0: nothing trained
            if (v[0] > info.totalSteps || v[1] < 1 || v[2] < 1 || v[1] > 1'000'000 ||
                v[2] > 100'000'000)
                throw Error(ErrorKind::RunFile, "dataset '/curriculum_reached' in " + path +
                                                    " holds " + std::to_string(v[0]) + ", " +
                                                    std::to_string(v[1]) + ", " +
                                                    std::to_string(v[2]) + " (damaged file)");
            return {v[0], int(v[1]), int(v[2]), "recorded"};
        }
    }
    if (info.logRows > 0) {
        const auto points = readColumn<std::int32_t>(log, "n_points", H5T_NATIVE_INT32, path);
        const auto dims = readColumn<std::int32_t>(log, "n_dims", H5T_NATIVE_INT32, path);
        if (!points.empty() && !dims.empty())
            r = {info.lastLoggedStep + 1, dims.back(), points.back(), "log"};
    }
    if (info.checkpointStep > r.stepsDone) {
        try {
            const auto config = storedRunConfig(info.configYaml, path);
            const auto at = config.curriculumAfter(info.checkpointStep);
            r = {info.checkpointStep, at.dims, at.points, "config"};
        } catch (const Error&) {
            // A config that does not load is reported by whoever reads it; the log's row stands.
        }
    }
    return r;
}

// The run's attributes (provenance, sweep membership, notes, sizes) into info, through the one
// list of them (runInfoFields); the caller holds the HDF5 lock.
void readRunAttributes(hid_t f, const std::string& path, RunFileInfo& info)
{
    readInfoAttributes(f, path, info);
    if (info.precision != "fp32" && info.precision != "tf32" && info.precision != "bf16")
        throw Error(ErrorKind::RunFile, "attribute 'precision' is '" + info.precision +
                                            "', not fp32, tf32 or bf16 (damaged file): " + path);
}

// What the training log says into info: rows, last and least loss, last logged step, mean
// speed, last wall time (NaN where the log has none).
void readLogSummary(hid_t log, const std::string& path, RunFileInfo& info)
{
    auto loss = readColumn<double>(log, "loss", H5T_NATIVE_DOUBLE, path);
    info.logRows = static_cast<std::int64_t>(loss.size());
    const double none = std::numeric_limits<double>::quiet_NaN();
    info.lastLoss = loss.empty() ? none : loss.back();
    info.minLoss = info.meanStepsPerSecond = info.lastWallSeconds = none;
    if (loss.empty())
        return;
    const auto steps = readColumn<std::int64_t>(log, "step", H5T_NATIVE_INT64, path);
    info.lastLoggedStep = steps.empty() ? -1 : steps.back();
    for (double l : loss)
        if (std::isfinite(l) && !(l >= info.minLoss))
            info.minLoss = l;
    double sum = 0;
    int timed = 0;  // a row may say 0 (nothing timed yet)
    for (double r : readColumn<double>(log, "steps_per_sec", H5T_NATIVE_DOUBLE, path))
        if (std::isfinite(r) && r > 0)
            sum += r, ++timed;
    if (timed > 0)
        info.meanStepsPerSecond = sum / timed;
    const auto wall = readColumn<double>(log, "wall_time", H5T_NATIVE_DOUBLE, path);
    for (auto it = wall.rbegin(); it != wall.rend() && std::isnan(info.lastWallSeconds); ++it)
        if (std::isfinite(*it))
            info.lastWallSeconds = *it;
}

// The current checkpoint's step and parameter shapes into info (none: nothing changes).
void readCheckpointShapes(hid_t f, const std::string& path, RunFileInfo& info)
{
    const auto slot = currentCheckpointSlot(f, path);
    if (slot < 0)
        return;
    auto g = openGroup(f, "checkpoint/slot" + std::to_string(slot), path);
    info.checkpointStep = readIntScalar(g.id(), "step", path);
    auto model = openGroup(g.id(), "model", path);
    for (const auto& name : memberNames(model.id())) {
        const auto dims = datasetShape(openDataset(model.id(), name, path).id());
        info.parameters.push_back({name, std::vector<std::int64_t>(dims.begin(), dims.end())});
    }
}

}  // namespace

std::string statusLabel(const std::string& status)
{
    return status == "cancelled" ? "stopped" : status;
}

std::string stopRequestPath(const std::string& runFile) { return runFile + ".stop"; }

std::string locateRunFile(const std::string& pathOrDir)
{
    // error_code forms: a link to itself made fs::is_directory throw, an "internal error".
    fs::path p(pathOrDir);
    std::error_code ec;
    if (fs::is_directory(p, ec))
        p /= "run.h5";
    if (!fs::exists(p, ec))
        throw Error(ErrorKind::RunFile, "run file not found: " + p.string() +
                                            (ec && ec != std::errc::no_such_file_or_directory
                                                 ? " (" + ec.message() + ")"
                                                 : std::string()));
    return p.string();
}

RunFileProbe probeRunFile(const std::string& path)
{
    std::error_code ec;
    const auto st = fs::status(path, ec);  // follows a link: what the name leads to
    if (ec || !fs::exists(st))
        return RunFileProbe::Missing;
    if (!fs::is_regular_file(st))
        return RunFileProbe::NotRegular;
    try {
        const H5Lock lock(h5Mutex());
        openRunForReading(path);
        return RunFileProbe::Run;
    } catch (const Error& e) {
        // openFile said which: no signature, or a signature whose file does not open.
        const std::string what = e.what();
        if (what.rfind("not an HDF5 file", 0) == 0)
            return RunFileProbe::NotHdf5;
        if (what.rfind("not a LenGen run file", 0) == 0)
            return RunFileProbe::Foreign;
        return RunFileProbe::Damaged;
    }
}

RunFileInfo readRunInfo(const std::string& pathOrDir)
{
    const std::string path = locateRunFile(pathOrDir);
    H5Lock lock(h5Mutex());
    auto file = openRunForReading(path);
    const hid_t f = file.id();
    RunFileInfo info;
    info.path = path;
    readRunAttributes(f, path, info);
    info.configYaml = readStringDataset(f, "config", path);
    info.status = readFixedString(openDataset(f, "status", path).id(), path);
    // "running" is written when training starts and replaced by the outcome when it ends; a
    // writer that died (kill -9, power loss) never replaced it, and holds no lock any more.
    if (info.status == "running" && !writerAlive(path))
        info.status = "interrupted";
    else if (info.status == "running")
        info.writer = writerHolder(path);
    auto log = openGroup(f, "log", path);
    readLogSummary(log.id(), path, info);
    readCheckpointShapes(f, path, info);
    if (exists(f, "position_encoding")) {
        auto pe = openGroup(f, "position_encoding", path);
        info.positionConstants = numericAttributes(pe.id(), path);
    }
    info.reached = readReached(f, log.id(), info, path);
    return info;
}

TrainLog readTrainLog(const std::string& pathOrDir)
{
    const std::string path = locateRunFile(pathOrDir);
    H5Lock lock(h5Mutex());
    auto file = openRunForReading(path);
    auto log = openGroup(file.id(), "log", path);
    TrainLog out;
    out.step = readColumn<std::int64_t>(log.id(), "step", H5T_NATIVE_INT64, path);
    out.loss = readColumn<double>(log.id(), "loss", H5T_NATIVE_DOUBLE, path);
    out.excessLoss = readColumn<double>(log.id(), "excess_loss", H5T_NATIVE_DOUBLE, path);
    out.learningRate = readColumn<double>(log.id(), "learning_rate", H5T_NATIVE_DOUBLE, path);
    out.wallSeconds = readColumn<double>(log.id(), "wall_time", H5T_NATIVE_DOUBLE, path);
    out.stepsPerSecond = readColumn<double>(log.id(), "steps_per_sec", H5T_NATIVE_DOUBLE, path);
    out.nPoints = readColumn<int>(log.id(), "n_points", H5T_NATIVE_INT32, path);
    out.nDims = readColumn<int>(log.id(), "n_dims", H5T_NATIVE_INT32, path);
    // grad_norm came after format 1: a run written before it reads as not measured.
    out.gradNorm =
        exists(log.id(), "grad_norm")
            ? readColumn<double>(log.id(), "grad_norm", H5T_NATIVE_DOUBLE, path)
            : std::vector<double>(out.step.size(), std::numeric_limits<double>::quiet_NaN());
    auto pw = openDataset(log.id(), "pointwise", path);
    const auto dims = shapeOf(pw.id(), 2, path);
    out.pointwiseWidth = static_cast<int>(dims[1]);
    // A SWMR reader can see columns of different lengths mid-append; trim to the shortest.
    size_t rows = std::min<size_t>(dims[0], out.step.size());
    for (auto* col :
         {&out.loss, &out.excessLoss, &out.learningRate, &out.wallSeconds, &out.stepsPerSecond})
        rows = std::min(rows, col->size());
    rows = std::min({rows, out.nPoints.size(), out.nDims.size()});
    std::vector<float> raw(dims[0] * dims[1]);
    readAll(pw.id(), H5T_NATIVE_FLOAT, raw.data(), raw.size(), path);
    out.pointwise.assign(raw.begin(), raw.begin() + static_cast<long>(rows * dims[1]));
    out.step.resize(rows);
    for (auto* col :
         {&out.loss, &out.excessLoss, &out.learningRate, &out.wallSeconds, &out.stepsPerSecond})
        col->resize(rows);
    // grad_norm is optional: an older LenGen resuming a run leaves it short, never the log.
    out.gradNorm.resize(rows, std::numeric_limits<double>::quiet_NaN());
    out.nPoints.resize(rows);
    out.nDims.resize(rows);
    return out;
}

}  // namespace lengen::engine
