// Importing a reference run folder (config.yaml + state.pt [+ metrics.json]) as a LenGen run.
// The run is assembled in a hidden sibling folder and renamed into place only when complete,
// so a failure at any point leaves nothing behind.

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "clock_text.h"
#include "file_tree.h"
#include "interop/reference_config.h"
#include "interop/reference_state.h"
#include "io/run_store.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/hash.h"
#include "lengen/engine/reference_runs.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/run_index.h"
#include "model/icl_model.h"

namespace fs = std::filesystem;

namespace lengen::engine {

namespace {

// A stable seed for the imported run's generator (the reference seeds nothing, §9.19).
std::uint64_t seedFor(const std::string& id) { return fnv1a64(id) >> 1; }

// Date folder of the reference's layout (models/<task>/dim_a-b/<YYYYMMDD>/<id>), else "".
std::string dateFolder(const fs::path& dir)
{
    const std::string d = dir.parent_path().filename().string();
    const bool digits = d.size() == 8 && std::all_of(d.begin(), d.end(), ::isdigit);
    return digits ? d : std::string();
}

void removeAll(const fs::path& p) { removeTree(p.string()); }

// A run id becomes a folder name: letters, digits, '.', '_', '-' only (wandb's ids are such).
bool safeId(const std::string& id)
{
    return !id.empty() && id.size() <= 128 && id != "." && id != ".." &&
           std::all_of(id.begin(), id.end(), [](unsigned char c) {
               return std::isalnum(c) || c == '.' || c == '_' || c == '-';
           });
}

struct Target {
    interop::ReferenceConfig rc;
    std::string id;
    fs::path runFile;
};

Target targetFor(const fs::path& dir, const std::string& outDir)
{
    Target t;
    t.rc = interop::loadReferenceConfig((dir / "config.yaml").string());
    t.id = t.rc.runId;
    if (!safeId(t.id)) {
        if (!t.id.empty())
            t.rc.notes.push_back("wandb_id '" + t.id +
                                 "' cannot name a folder; the run folder's "
                                 "name is used");
        t.id = dir.filename().string();
        for (auto& c : t.id)
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
                c = '_';
        if (!safeId(t.id))
            t.id = "run";
    }
    std::string date = dateFolder(dir);
    if (date.empty())
        date = utcNow("%Y%m%d");
    const auto& dims = t.rc.config.task.curriculum.dims;
    t.runFile = fs::path(outDir) / t.rc.config.task.name /
                ("dim_" + std::to_string(dims.start) + "-" + std::to_string(dims.end)) / date /
                t.id / "run.h5";
    return t;
}

// The folder's config.yaml / state.pt: present, a regular file, readable.
void requireFile(const fs::path& dir, const char* name, const std::string& shown)
{
    std::error_code ec;
    const fs::path p = dir / name;
    const auto status = fs::status(p, ec);
    if (!fs::exists(status)) {
        if (fs::is_symlink(fs::symlink_status(p, ec)))
            throw Error(ErrorKind::RunFile, p.string() + " is a dangling or looping link");
        throw Error(ErrorKind::RunFile,
                    shown + ": not a reference run folder (no " + std::string(name) + ")");
    }
    if (!fs::is_regular_file(status))
        throw Error(ErrorKind::RunFile, p.string() + " is not a regular file");
    std::ifstream in(p, std::ios::binary);
    if (!in)
        throw Error(ErrorKind::RunFile, p.string() + " cannot be read: " + std::strerror(errno));
}

// Free space where the run will be written, against what its run file needs: one checkpoint
// slot of weights and AdamW moments (HDF5 allocates the other slot's data only when written).
void requireSpace(const fs::path& target, std::int64_t parameters)
{
    fs::path existing = target;
    std::error_code ec;
    while (!existing.empty() && !fs::exists(existing, ec))
        existing = existing.parent_path();
    const auto space = fs::space(existing.empty() ? fs::path(".") : existing, ec);
    if (ec)
        return;
    const double need = 3.0 * 4 * double(parameters) * 1.05 + 4e6;  // one slot is written
    if (double(space.available) < need)
        throw Error(ErrorKind::Io,
                    existing.string() + " has " + std::to_string(space.available >> 20) +
                        " MB free; the imported run needs about " +
                        std::to_string(static_cast<long long>(need / 1048576)) + " MB");
}

// The checkpoint as it reads back from disk equals what was written: catches write failures
// the HDF5 layer did not report (a disk that filled up).
void verifyWritten(const std::string& runFile, const io::CheckpointState& st)
{
    const io::CheckpointState back = io::readCheckpoint(runFile);  // tensors in name order
    std::map<std::string, size_t> at;
    for (size_t i = 0; i < back.model.size(); ++i)
        at[back.model[i].name] = i;
    bool same = back.stepsDone == st.stepsDone && back.model.size() == st.model.size();
    for (size_t i = 0; same && i < st.model.size(); ++i) {
        const auto it = at.find(st.model[i].name);
        same = it != at.end() && torch::equal(back.model[it->second].value, st.model[i].value) &&
               torch::equal(back.expAvg[it->second].value, st.expAvg[i].value) &&
               torch::equal(back.expAvgSq[it->second].value, st.expAvgSq[i].value);
    }
    if (!same)
        throw Error(ErrorKind::Io, runFile + " does not read back as written (disk full?)");
}

}  // namespace

std::string referenceImportTarget(const std::string& refDir, const std::string& outDir)
{
    return targetFor(fs::weakly_canonical(fs::path(refDir)), outDir).runFile.string();
}

bool isReferenceRunImported(const std::string& refDir, const std::string& outDir)
{
    try {
        const fs::path dir = fs::weakly_canonical(fs::path(refDir));
        const std::string target = targetFor(dir, outDir).runFile.string();
        std::error_code ec;
        return fs::exists(target, ec) && readRunInfo(target).importedFrom == dir.string();
    } catch (const std::exception&) {
        return false;
    }
}

namespace {

// An existing target is never overwritten: said apart, an earlier import of this folder and
// another run in the way.
void refuseExistingTarget(const fs::path& target, const fs::path& dir, const std::string& refDir)
{
    std::error_code ec;
    if (!fs::exists(target, ec))
        return;
    std::string from;
    try {
        from = readRunInfo(target.string()).importedFrom;
    } catch (const std::exception&) {
    }
    if (from == dir.string())
        throw Error(ErrorKind::Io, "already imported: " + target.string());
    throw Error(ErrorKind::Io,
                target.string() + " already exists (" +
                    (from.empty() ? std::string("not an import") : "imported from " + from) +
                    "); import " + refDir + " into another --out folder");
}

// The checkpoint of the imported run: the reference's weights mapped onto LenGen's names, its
// optimizer's moments where they map (zeros otherwise, said), the step count, a generator
// seeded from the run id and the curriculum at that step.
io::CheckpointState
importedCheckpoint(const interop::LoadedState& loaded,
                   const std::vector<std::pair<std::string, torch::Tensor>>& params,
                   const RunConfig& config, const std::string& statePath,
                   ReferenceImportResult& result)
{
    io::CheckpointState st;
    st.model = interop::mapWeights(loaded.model, params, config, statePath, result.notes);
    // The reference saves after the update of step s, so s + 1 updates are in the weights.
    st.stepsDone = loaded.trainStep ? *loaded.trainStep + 1 : 0;
    if (!loaded.trainStep)
        result.notes.push_back("state.pt has no train_step; the run starts its count at 0");
    st.optimizerSteps = st.stepsDone;
    std::string why;
    result.optimizerImported = interop::mapOptimizer(loaded.optimizer, loaded.model, st, why);
    if (!result.optimizerImported) {
        st.expAvg.clear();
        st.expAvgSq.clear();
        for (const auto& p : st.model) {
            st.expAvg.push_back({p.name, torch::zeros_like(p.value)});
            st.expAvgSq.push_back({p.name, torch::zeros_like(p.value)});
        }
        st.optimizerSteps = st.stepsDone;
        result.notes.push_back("optimizer state not imported (" + why +
                               "): the weights are; "
                               "continued training starts AdamW's moments from zero");
    }
    // The data generator of a continued training, seeded from the run id.
    st.rngState = at::make_generator<at::CPUGeneratorImpl>(*config.seed).get_state();
    st.dims = config.task.curriculum.dims.valueAt(st.stepsDone);
    st.points = config.task.curriculum.points.valueAt(st.stepsDone);
    st.reached = config.curriculumAfter(st.stepsDone);
    return st;
}

io::RunHeader importedHeader(const RunConfig& config, const model::InContextModel& model,
                             const fs::path& dir)
{
    io::RunHeader h;
    // A run id of its own: the origin's (its wandb id, which names the folder) stays in
    // imported_from; two rows of one id were indistinguishable in the studio.
    h.runId = newRunId();
    h.createdAt = utcNow();
    h.configYaml = toYaml(config);
    h.task = config.task.name;
    h.positionEncoding = config.peDisplayName();
    h.backbone = config.model.family;
    h.device = "cpu";
    h.seed = *config.seed;
    h.totalSteps = config.training.maxSteps;
    h.parameterCount = model->parameterCount();
    h.pointwiseWidth = config.trainPoints();
    h.positionConstants = model->positionConstants();
    h.importedFrom = dir.string();
    return h;
}

}  // namespace

ReferenceImportResult importReferenceRun(const std::string& refDir,
                                         const ReferenceImportOptions& options)
{
    std::error_code ec;
    const fs::path dir = fs::weakly_canonical(fs::path(refDir), ec);
    if (ec || !fs::is_directory(dir, ec))
        throw Error(ErrorKind::RunFile, refDir + ": no such folder");
    requireFile(dir, "config.yaml", refDir);
    requireFile(dir, "state.pt", refDir);
    ReferenceImportResult result;
    Target t = targetFor(dir, options.outDir);
    interop::ReferenceConfig& rc = t.rc;
    result.notes = rc.notes;
    rc.config.seed = seedFor(t.id);
    const fs::path target = t.runFile;
    refuseExistingTarget(target, dir, refDir);

    const std::string statePath = (dir / "state.pt").string();
    const interop::LoadedState loaded = interop::readState(statePath);
    if (loaded.trainStep && *loaded.trainStep >= rc.config.training.maxSteps)
        throw Error(ErrorKind::RunFile,
                    statePath + ": train_step " + std::to_string(*loaded.trainStep) +
                        " is not below training.max_steps " +
                        std::to_string(rc.config.training.maxSteps) + " of its config.yaml");
    // The model only names and shapes the parameters: no initialisation, no optimizer.
    const model::InContextModel model = model::buildModel(rc.config);
    std::vector<std::pair<std::string, torch::Tensor>> params;
    for (const auto& item : model->named_parameters())
        params.emplace_back(item.key(), item.value());
    requireSpace(target, model->parameterCount());
    const io::CheckpointState st = importedCheckpoint(loaded, params, rc.config, statePath, result);
    result.stepsDone = st.stepsDone;
    if (dateFolder(dir).empty())
        result.notes.push_back("the folder above the run is not a YYYYMMDD date; today's date "
                               "names the imported run's folder");

    // Assemble in <target folder>.importing, rename when complete.
    const fs::path finalDir = target.parent_path();
    const fs::path tmpDir = importingFolder(target.string());
    removeAll(tmpDir);
    try {
        const std::string tmpRun = (tmpDir / "run.h5").string();
        {
            auto writer = io::RunWriter::create(tmpRun, importedHeader(rc.config, model, dir),
                                                io::parameterShapes(params), st.rngState.numel());
            writer->writeCheckpoint(st);
            writer->setStatus("imported");
        }
        verifyWritten(tmpRun, st);
        if (options.metrics && fs::exists(dir / "metrics.json", ec)) {
            try {
                result.importedMethods =
                    importMetricsJson((dir / "metrics.json").string(), tmpRun, "python");
            } catch (const Error& e) {
                if (e.kind() == ErrorKind::Io)
                    throw;  // the disk, not the file: the whole import fails
                result.notes.push_back(std::string("metrics.json not imported: ") + e.what());
            }
        }
        fs::create_directories(finalDir.parent_path());
        fs::rename(tmpDir, finalDir);
    } catch (const Error&) {
        removeAll(tmpDir);
        throw;
    } catch (const std::exception& e) {
        removeAll(tmpDir);
        throw Error(ErrorKind::Io, "cannot write the imported run " + target.string(), e.what());
    }
    result.runFile = target.string();
    return result;
}

std::string importingFolder(const std::string& runFile)
{
    return fs::path(runFile).parent_path().string() + ".importing";
}

bool isReferenceRunDir(const std::string& dir)
{
    std::error_code ec;
    const fs::path p(dir);
    return fs::is_regular_file(p / "config.yaml", ec) && fs::is_regular_file(p / "state.pt", ec);
}

std::vector<std::string> findReferenceRuns(const std::string& root)
{
    std::error_code ec;
    if (isReferenceRunDir(root) && !fs::exists(fs::path(root) / "run.h5", ec))
        return {fs::path(root).string()};
    try {
        return scanFolder(root).referenceRuns;  // the one walk the Runs list and jobs make
    } catch (const Error&) {
        return {};  // a folder that changed under the walk twice: nothing offered this time
    }
}

}  // namespace lengen::engine
