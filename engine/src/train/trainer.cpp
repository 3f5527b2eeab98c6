// Public entry points: new runs and resumed runs. Sets up the session, the run file and the
// run folder (<out>/<task>/dim_<start>-<end>/<YYYYMMDD>/<run id>/run.h5, the reference's scheme).

#include "lengen/engine/trainer.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <random>

#include "clock_text.h"
#include "io/run_store.h"
#include "io/writer_lock.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"
#include "model/member_model.h"
#include "train/member_loop.h"
#include "train/memory_estimate.h"
#include "train/threads.h"
#include "train/train_loop.h"

namespace fs = std::filesystem;

namespace lengen::engine {

std::string newRunId()
{
    std::random_device rd;
    static const char* hex = "0123456789abcdef";
    std::string id;
    for (int i = 0; i < 8; ++i)
        id += hex[rd() % 16];
    return id;
}

namespace {

void initWriter(training::TrainSession& s, const std::string& path, const std::string& runId,
                const TrainOptions& options)
{
    io::RunHeader h;
    h.runId = runId;
    h.sweepName = options.sweepName;
    h.sweepCell = options.sweepCell;
    h.sweepAxes = options.sweepAxes;
    h.createdAt = utcNow("%Y-%m-%dT%H:%M:%SZ");
    h.configYaml = toYaml(s.config);
    h.task = s.config.task.name;
    h.positionEncoding = s.config.peDisplayName();
    h.backbone = s.config.model.family;
    h.device = s.device.str();
    h.precision = compat::precisionName(s.precision);
    h.seed = *s.config.seed;
    h.totalSteps = s.config.training.maxSteps;
    h.parameterCount = s.model->parameterCount();
    h.pointwiseWidth = s.config.trainPoints();
    h.positionConstants = s.model->positionConstants();
    s.writer = io::RunWriter::create(path, h, io::parameterShapes(s.optimizer->params()),
                                     s.gen.get_state().numel());
}

void fillStarted(training::TrainSession& s, const std::string& runId)
{
    s.started.runFile = s.writer->path();
    s.started.runId = runId;
    s.started.seed = *s.config.seed;
    s.started.device = s.device.str();
    s.started.firstStep = s.stepsDone;
    s.started.totalSteps = s.config.training.maxSteps;
    s.started.parameterCount = s.model->parameterCount();
}

// Threads, device and session (model, optimiser, sampler, generator) for a new or resumed run.
// `kernels`: threads another session made (members share one set); null: this session's own.
void prepareSession(training::TrainSession& s, const RunConfig& config, std::uint64_t seed,
                    const TrainOptions& options,
                    std::shared_ptr<const model::kernels::KernelContext> kernels = nullptr)
{
    const std::string device = resolveDevice(options.device);
    training::checkTrainingFits(config, device);  // before anything is allocated
    s.switches = options.switches;
    s.kernels = kernels ? std::move(kernels)
                        : training::makeKernelContext(options.threads, config.model.hiddenSize,
                                                      options.switches);
    setupSession(s, config, seed, device);
    s.precision = compat::parsePrecision(options.precision);
    if (s.precision != compat::Precision::Fp32 && !s.device.is_cuda())
        throw Error(ErrorKind::Config,
                    std::string("--precision ") + compat::precisionName(s.precision) +
                        " needs a CUDA device; on the CPU training is fp32" +
                        (options.precision.empty() ? std::string()
                                                   : " (give --precision fp32 to "
                                                     "continue it on the CPU)"));
}

// <runDir>/run.h5, or the reference's layout under `outDir`; Error(Io) where a run exists.
std::string runPath(const RunConfig& config, const std::string& outDir, const std::string& runDir,
                    const std::string& runId)
{
    const auto& dims = config.task.curriculum.dims;
    const fs::path path =
        !runDir.empty()
            ? fs::path(runDir) / "run.h5"
            : fs::path(outDir) / config.task.name /
                  ("dim_" + std::to_string(dims.start) + "-" + std::to_string(dims.end)) /
                  utcNow("%Y%m%d") / runId / "run.h5";
    if (fs::exists(path))
        throw Error(ErrorKind::Io, "a run already exists at " + path.string());
    return path.string();
}

// The members trained, their results as the public type.
std::vector<MemberOutcome> runMembers(std::vector<training::MemberSlot> slots, RunControl& all)
{
    std::vector<MemberOutcome> out;
    for (auto& r : training::runMemberTraining(std::move(slots), all))
        out.push_back({std::move(r.summary), std::move(r.error)});
    return out;
}

}  // namespace

std::string resolveDevice(const std::string& requested)
{
    if (requested.empty() || requested == "auto")
        return torch::cuda::is_available() ? "cuda:0" : "cpu";
    if (requested == "cpu")
        return "cpu";
    if (requested.rfind("cuda", 0) == 0) {
        if (!torch::cuda::is_available())
            throw Error(ErrorKind::Config,
                        "--device " + requested + ": no CUDA GPU is usable here (" +
                            (compat::torchHasCuda() ? "this LibTorch " + compat::torchVersion() +
                                                          " has CUDA, but the driver reports no GPU"
                                                    : "this LibTorch " + compat::torchVersion() +
                                                          " was built without CUDA") +
                            "); use --device cpu, or leave --device out to use a GPU only "
                            "when there is one");
        return requested == "cuda" ? "cuda:0" : requested;
    }
    throw Error(ErrorKind::Usage, "unknown device '" + requested + "' (cpu, cuda, cuda:N)");
}

std::vector<std::string> resolveSweepDevices(const std::string& requested)
{
    std::string list = requested;
    if (list.empty() || list == "auto") {
        if (!torch::cuda::is_available())
            return {""};
        list = "cuda";
    }
    std::vector<std::string> devices;
    const int gpus = static_cast<int>(torch::cuda::device_count());
    auto add = [&](const std::string& device) {
        if (std::find(devices.begin(), devices.end(), device) != devices.end())
            throw Error(ErrorKind::Usage, "--device " + requested + " names " + device + " twice");
        devices.push_back(device);
    };
    for (size_t start = 0; start <= list.size();) {
        const size_t comma = std::min(list.find(',', start), list.size());
        const std::string item = list.substr(start, comma - start);
        start = comma + 1;
        if (item.empty())
            throw Error(ErrorKind::Usage,
                        "--device '" + requested + "': an empty name in the list");
        const std::string device = resolveDevice(item);  // throws for unknown names and no GPU
        if (device == "cpu") {
            add(device);
            continue;
        }
        if (item == "cuda") {
            for (int i = 0; i < gpus; ++i)
                add("cuda:" + std::to_string(i));
            continue;
        }
        const std::string index = device.rfind("cuda:", 0) == 0 ? device.substr(5) : "";
        if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos ||
            index.size() > 4)
            throw Error(ErrorKind::Usage,
                        "--device " + requested + ": '" + item + "' is not cuda:N");
        const int n = std::stoi(index);
        if (n >= gpus)
            throw Error(ErrorKind::Config, "--device " + requested + ": there is no " + device +
                                               " (this machine has " + std::to_string(gpus) +
                                               " GPU" + (gpus == 1 ? "" : "s") + ")");
        add("cuda:" + std::to_string(n));  // cuda:00 is cuda:0
    }
    return devices;
}

RunSummary train(RunConfig config, const TrainOptions& options, RunControl& control,
                 TrainObserver& observer)
{
    if (options.maxSteps)
        config.training.maxSteps = *options.maxSteps;
    if (options.seed)
        config.seed = options.seed;
    if (!config.seed)
        config.seed = std::random_device{}();
    training::HeapRelease release(
        options.switches.threadPolicy);  // after the session below is gone
    training::TrainSession s;
    prepareSession(s, config, *config.seed, options);
    const std::string runId = options.runId.empty() ? newRunId() : options.runId;
    initWriter(s, runPath(config, options.outDir, options.runDir, runId), runId, options);
    fillStarted(s, runId);
    return training::runTraining(s, control, observer);
}

namespace {

// Member k's place in the batched loop: its session, its own stop, observer and end.
training::MemberSlot memberSlot(training::TrainSession& s, const MemberRun& m)
{
    training::MemberSlot slot{&s, m.control, m.observer, {}};
    if (m.onLeft)
        slot.onLeft = [cb = m.onLeft](const training::MemberResult& r) {
            cb(MemberOutcome{r.summary, r.error});
        };
    return slot;
}

}  // namespace

std::vector<MemberOutcome> trainMembers(RunConfig config, const std::vector<MemberRun>& members,
                                        const TrainOptions& options, RunControl& all)
{
    if (options.maxSteps)
        config.training.maxSteps = *options.maxSteps;
    if (const auto why = model::MemberModel::refusal(config); !why.empty())
        throw Error(ErrorKind::Config, "members: " + why);
    // All K at once, before anything is allocated (prepareSession checks one member).
    training::checkTrainingFits(config, resolveDevice(options.device),
                                training::physicalMemoryBytes(), int(members.size()));
    training::HeapRelease release(options.switches.threadPolicy);
    std::vector<training::TrainSession> sessions(members.size());
    std::vector<std::string> ids, paths;
    // Every member set up and its path found free before any run file is written: a refusal
    // leaves no half of a members run behind.
    for (size_t k = 0; k < members.size(); ++k) {
        const MemberRun& m = members[k];
        RunConfig own = config;
        own.seed = m.seed;
        prepareSession(sessions[k], own, m.seed, options, k ? sessions.front().kernels : nullptr);
        ids.push_back(m.runId.empty() ? newRunId() : m.runId);
        paths.push_back(runPath(own, options.outDir, m.runDir, ids.back()));
        if (std::find(paths.begin(), paths.end() - 1, paths.back()) != paths.end() - 1)
            throw Error(ErrorKind::Usage, "members: two members would write " + paths.back());
    }
    std::vector<training::MemberSlot> slots;
    for (size_t k = 0; k < members.size(); ++k) {
        const MemberRun& m = members[k];
        TrainOptions stored = options;
        stored.sweepCell = m.sweepCell;
        stored.sweepAxes = m.sweepAxes;
        initWriter(sessions[k], paths[k], ids[k], stored);
        fillStarted(sessions[k], ids[k]);
        slots.push_back(memberSlot(sessions[k], m));
    }
    return runMembers(std::move(slots), all);
}

namespace {

// A stopped run's session, restored from its latest checkpoint and its writer reopened.
void openForResume(training::TrainSession& s, const std::string& runFile,
                   const TrainOptions& options,
                   std::shared_ptr<const model::kernels::KernelContext> kernels = nullptr)
{
    const std::string path = locateRunFile(runFile);
    // A training killed as it reopened the file left it unreadable: repaired first (issue 81).
    io::RunWriter::repairAfterKill(path);
    const RunFileInfo info = readRunInfo(path);
    RunConfig config = storedRunConfig(info.configYaml, path);
    config.seed = info.seed;
    // A run's own records must agree before it is continued: a stored config whose max_steps
    // was lost would otherwise train on toward the default 50,000 steps.
    if (info.totalSteps > 0 && info.totalSteps != config.training.maxSteps)
        throw Error(ErrorKind::RunFile,
                    "the run's records disagree: its total_steps attribute says " +
                        std::to_string(info.totalSteps) +
                        ", its stored config's "
                        "training.max_steps says " +
                        std::to_string(config.training.maxSteps) + " (damaged file): " + path);
    // The run's own precision unless the caller names one (a bf16 run resumes in bf16).
    TrainOptions resumed = options;
    if (resumed.precision.empty())
        resumed.precision = info.precision;
    prepareSession(s, config, info.seed, resumed, std::move(kernels));
    const auto shapes = io::parameterShapes(s.optimizer->params());
    io::checkCheckpointSlots(path, shapes);  // before anything writes into the file
    training::restoreCheckpoint(s, io::readCheckpoint(path, &shapes), path);
    s.writer = io::RunWriter::reopen(path, s.stepsDone, s.device.str(),
                                     compat::precisionName(s.precision));
    fillStarted(s, info.runId);
}

}  // namespace

RunSummary resume(const std::string& runFile, const TrainOptions& options, RunControl& control,
                  TrainObserver& observer)
{
    training::HeapRelease release(
        options.switches.threadPolicy);  // after the session below is gone
    training::TrainSession s;
    openForResume(s, runFile, options);
    return training::runTraining(s, control, observer);
}

std::vector<MemberOutcome> resumeMembers(const std::vector<std::string>& runFiles,
                                         const TrainOptions& options, RunControl& all,
                                         const std::vector<MemberRun>& hooks)
{
    // Every run checked from its records before any is opened for writing: a refusal leaves
    // the files as they were.
    std::string firstPath, firstPrecision;
    std::optional<RunConfig> first;
    std::int64_t firstStep = 0;
    std::vector<std::string> seen;
    for (const auto& file : runFiles) {
        const std::string path = fs::weakly_canonical(locateRunFile(file)).string();
        if (std::find(seen.begin(), seen.end(), path) != seen.end())
            throw Error(ErrorKind::Usage, "members: " + path + " is named twice");
        seen.push_back(path);
        if (io::writerAlive(path))
            throw Error(ErrorKind::RunFile,
                        "members: " + path + " is being written by another process");
        const RunFileInfo info = readRunInfo(path);
        RunConfig config = storedRunConfig(info.configYaml, path);
        const std::int64_t step = std::max<std::int64_t>(info.checkpointStep, 0);
        if (firstPath.empty()) {
            if (const auto why = membersRefusal(config); !why.empty())
                throw Error(ErrorKind::Config, "members: " + path + ": " + why);
            firstPath = path;
            firstPrecision = info.precision;
            first = config;
            firstStep = step;
        } else if (!sameRunButSeed(config, *first)) {
            throw Error(ErrorKind::Usage, "members: " + path + " has another config than " +
                                              firstPath + " (members differ in seed only)");
        } else if (info.precision != firstPrecision) {
            throw Error(ErrorKind::Usage, "members: " + path + " trains in " + info.precision +
                                              ", " + firstPath + " in " + firstPrecision +
                                              " (members share one precision)");
        } else if (step != firstStep) {
            throw Error(ErrorKind::Usage,
                        "members: " + path + " stopped after " + std::to_string(step) + " steps, " +
                            firstPath + " after " + std::to_string(firstStep) +
                            "; members take every step together: resume them one by one "
                            "(each then continues as an ordinary run)");
        }
        if (info.status == "finished")
            throw Error(ErrorKind::Usage, "members: " + path + " has finished its " +
                                              std::to_string(step) + " steps");
    }
    if (first)  // all K at once (prepareSession checks one member)
        training::checkTrainingFits(*first, resolveDevice(options.device),
                                    training::physicalMemoryBytes(), int(runFiles.size()));
    training::HeapRelease release(options.switches.threadPolicy);
    std::vector<training::TrainSession> sessions(runFiles.size());
    for (size_t k = 0; k < runFiles.size(); ++k)
        openForResume(sessions[k], runFiles[k], options, k ? sessions.front().kernels : nullptr);
    std::vector<training::MemberSlot> slots;
    for (size_t k = 0; k < sessions.size(); ++k)
        slots.push_back(memberSlot(sessions[k], k < hooks.size() ? hooks[k] : MemberRun{}));
    return runMembers(std::move(slots), all);
}

}  // namespace lengen::engine
