// Importing a reference run folder (config.yaml + state.pt [+ metrics.json]) as a LenGen run.
// The run is assembled in a hidden sibling folder and renamed into place only when complete,
// so a failure at any point leaves nothing behind.

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>

#include "clock_text.h"
#include "interop/reference_config.h"
#include "interop/torch_archive.h"
#include "io/run_store.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/reference_runs.h"
#include "train/train_loop.h"

namespace fs = std::filesystem;

namespace lengen::engine {

namespace {

using interop::PyValue;
using interop::PyValuePtr;

std::string shapeText(at::IntArrayRef s)
{
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i)
        out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

// A stable seed for the imported run's generator (the reference seeds nothing, §9.19).
std::uint64_t seedFor(const std::string& id)
{
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (unsigned char c : id)
        h = (h ^ c) * 1099511628211ull;
    return h >> 1;
}

// Date folder of the reference's layout (models/<task>/dim_a-b/<YYYYMMDD>/<id>), else "".
std::string dateFolder(const fs::path& dir)
{
    const std::string d = dir.parent_path().filename().string();
    const bool digits = d.size() == 8 && std::all_of(d.begin(), d.end(), ::isdigit);
    return digits ? d : std::string();
}

struct LoadedState {
    PyValuePtr model, optimizer;
    std::optional<std::int64_t> trainStep;
};

LoadedState readState(const std::string& path)
{
    const PyValuePtr root = interop::readTorchFile(path);
    LoadedState s;
    if (root->kind != PyValue::Kind::Dict)
        throw Error(ErrorKind::RunFile, path + ": holds a " + root->kindName() +
                                            ", not the reference's checkpoint dict");
    s.model = root->get("model_state_dict");
    if (!s.model) {
        // A bare state dict (torch.save(model.state_dict())) is accepted too.
        bool tensors = !root->dict.empty();
        for (const auto& [k, v] : root->dict)
            tensors = tensors && v->kind == PyValue::Kind::Tensor;
        if (!tensors)
            throw Error(ErrorKind::RunFile, path + ": no 'model_state_dict' in the checkpoint");
        s.model = root;
    }
    if (s.model->kind != PyValue::Kind::Dict)
        throw Error(ErrorKind::RunFile, path + ": 'model_state_dict' is a " +
                                            s.model->kindName() + ", not a dict");
    s.optimizer = root->get("optimizer_state_dict");
    if (auto step = root->get("train_step"); step && step->kind == PyValue::Kind::Int)
        s.trainStep = step->integer;
    return s;
}

// The weights, by our parameter order, with every mismatch named.
std::vector<io::NamedTensor> mapWeights(const PyValuePtr& sd, const training::TrainSession& s,
                                        const std::string& path,
                                        std::vector<std::string>& notes)
{
    std::map<std::string, torch::Tensor> ours;
    for (const auto& [name, p] : s.optimizer->params())
        ours.emplace(name, p);
    std::map<std::string, torch::Tensor> theirs;
    int skipped = 0;
    for (const auto& [k, v] : sd->dict) {
        if (k->kind != PyValue::Kind::Str || v->kind != PyValue::Kind::Tensor)
            throw Error(ErrorKind::RunFile, path + ": model_state_dict holds a " + v->kindName() +
                                                " under " + (k->kind == PyValue::Kind::Str
                                                                 ? "'" + k->text + "'"
                                                                 : "a non-string key"));
        if (!ours.count(k->text)) {
            if (interop::isPythonOnlyKey(k->text)) {
                ++skipped;
                continue;
            }
            throw Error(ErrorKind::RunFile,
                        path + ": key '" + k->text + "' " + shapeText(v->tensor.sizes()) +
                            " is not part of the model config.yaml describes (" +
                            s.config.peDisplayName() + ", " +
                            std::to_string(s.config.model.numLayers) + " layers)");
        }
        theirs.emplace(k->text, v->tensor);
    }
    std::vector<io::NamedTensor> out;
    for (const auto& [name, p] : s.optimizer->params()) {
        const auto it = theirs.find(name);
        if (it == theirs.end())
            throw Error(ErrorKind::RunFile, path + ": key '" + name + "' (shape " +
                                                shapeText(p.sizes()) + ") is missing");
        if (it->second.sizes() != p.sizes())
            throw Error(ErrorKind::RunFile, path + ": key '" + name + "' has shape " +
                                                shapeText(it->second.sizes()) + ", the model " +
                                                "config.yaml describes needs " +
                                                shapeText(p.sizes()));
        if (!it->second.is_floating_point())
            throw Error(ErrorKind::RunFile, path + ": key '" + name + "' is not a float tensor");
        out.push_back({name, it->second.to(torch::kFloat32).contiguous()});
    }
    if (skipped)
        notes.push_back(std::to_string(skipped) + " tensor(s) LenGen's model does not use "
                        "(embedding table, derived rotary buffers) were skipped");
    return out;
}

// AdamW moments in our order, when state.pt's optimizer state matches the model. The optimizer
// numbers parameters in model.parameters() order: the state dict's keys minus its buffers.
bool mapOptimizer(const PyValuePtr& opt, const PyValuePtr& sd, io::CheckpointState& st,
                  std::string& why)
{
    if (!opt || opt->kind != PyValue::Kind::Dict) {
        why = "state.pt has no optimizer_state_dict";
        return false;
    }
    const PyValuePtr state = opt->get("state");
    const PyValuePtr groups = opt->get("param_groups");
    if (!state || state->kind != PyValue::Kind::Dict || !groups ||
        groups->kind != PyValue::Kind::List) {
        why = "its optimizer state is not torch.optim's {state, param_groups}";
        return false;
    }
    std::vector<std::string> keys;
    for (const auto& [k, v] : sd->dict)
        if (!interop::isBufferKey(k->text))
            keys.push_back(k->text);
    std::size_t count = 0;
    for (const auto& g : groups->items)
        if (auto params = g->get("params"); params && params->kind == PyValue::Kind::List)
            count += params->items.size();
    if (count != keys.size()) {
        why = "it covers " + std::to_string(count) + " parameters, the checkpoint has " +
              std::to_string(keys.size());
        return false;
    }
    std::map<std::string, std::pair<torch::Tensor, torch::Tensor>> moments;
    double steps = -1;
    for (const auto& [k, v] : state->dict) {
        if (k->kind != PyValue::Kind::Int || k->integer < 0 ||
            k->integer >= static_cast<std::int64_t>(keys.size()) || v->kind != PyValue::Kind::Dict) {
            why = "its state is not indexed by parameter number";
            return false;
        }
        auto m = v->get("exp_avg"), sq = v->get("exp_avg_sq"), step = v->get("step");
        if (!m || !sq || m->kind != PyValue::Kind::Tensor || sq->kind != PyValue::Kind::Tensor) {
            why = "it is not AdamW's (no exp_avg / exp_avg_sq)";
            return false;
        }
        moments[keys[k->integer]] = {m->tensor, sq->tensor};
        if (step && step->kind == PyValue::Kind::Tensor && step->tensor.numel() == 1)
            steps = step->tensor.item<double>();
        else if (step && step->kind == PyValue::Kind::Int)
            steps = double(step->integer);
    }
    for (const auto& p : st.model) {
        auto it = moments.find(p.name);
        torch::Tensor m = torch::zeros_like(p.value), v = torch::zeros_like(p.value);
        if (it != moments.end()) {
            if (it->second.first.sizes() != p.value.sizes() ||
                it->second.second.sizes() != p.value.sizes()) {
                why = "the moments of '" + p.name + "' have shape " +
                      shapeText(it->second.first.sizes()) + ", the parameter " +
                      shapeText(p.value.sizes());
                return false;
            }
            m = it->second.first.to(torch::kFloat32).contiguous();
            v = it->second.second.to(torch::kFloat32).contiguous();
        }
        st.expAvg.push_back({p.name, m});
        st.expAvgSq.push_back({p.name, v});
    }
    if (steps >= 0)
        st.optimizerSteps = static_cast<std::int64_t>(steps);
    return true;
}

void removeAll(const fs::path& p)
{
    std::error_code ec;
    fs::remove_all(p, ec);
}

}  // namespace

std::string referenceImportTarget(const std::string& refDir, const std::string& outDir)
{
    const fs::path dir = fs::weakly_canonical(fs::path(refDir));
    const interop::ReferenceConfig rc = interop::loadReferenceConfig((dir / "config.yaml").string());
    const std::string id = rc.runId.empty() ? dir.filename().string() : rc.runId;
    std::string date = dateFolder(dir);
    if (date.empty())
        date = utcNow("%Y%m%d");
    const auto& dims = rc.config.task.curriculum.dims;
    return (fs::path(outDir) / rc.config.task.name /
            ("dim_" + std::to_string(dims.start) + "-" + std::to_string(dims.end)) / date / id /
            "run.h5")
        .string();
}

ReferenceImportResult importReferenceRun(const std::string& refDir,
                                         const ReferenceImportOptions& options)
{
    std::error_code ec;
    const fs::path dir = fs::weakly_canonical(fs::path(refDir), ec);
    if (!fs::is_directory(dir, ec))
        throw Error(ErrorKind::RunFile, refDir + ": no such folder");
    for (const char* f : {"config.yaml", "state.pt"})
        if (!fs::is_regular_file(dir / f, ec))
            throw Error(ErrorKind::RunFile, refDir + ": not a reference run folder (no " +
                                                std::string(f) + ")");
    ReferenceImportResult result;
    interop::ReferenceConfig rc = interop::loadReferenceConfig((dir / "config.yaml").string());
    result.notes = rc.notes;
    const std::string id = rc.runId.empty() ? dir.filename().string() : rc.runId;
    rc.config.seed = seedFor(id);
    const fs::path target = referenceImportTarget(dir.string(), options.outDir);
    if (fs::exists(target, ec))
        throw Error(ErrorKind::Io, "already imported: " + target.string());

    const std::string statePath = (dir / "state.pt").string();
    const LoadedState loaded = readState(statePath);
    training::TrainSession s;
    training::setupSession(s, rc.config, *rc.config.seed, "cpu");
    io::CheckpointState st;
    st.model = mapWeights(loaded.model, s, statePath, result.notes);
    // The reference saves after the update of step s, so s + 1 updates are in the weights.
    st.stepsDone = loaded.trainStep ? *loaded.trainStep + 1 : 0;
    if (!loaded.trainStep)
        result.notes.push_back("state.pt has no train_step; the run starts its count at 0");
    st.optimizerSteps = st.stepsDone;
    std::string why;
    result.optimizerImported = mapOptimizer(loaded.optimizer, loaded.model, st, why);
    if (!result.optimizerImported) {
        st.expAvg.clear();
        st.expAvgSq.clear();
        for (const auto& p : st.model) {
            st.expAvg.push_back({p.name, torch::zeros_like(p.value)});
            st.expAvgSq.push_back({p.name, torch::zeros_like(p.value)});
        }
        result.notes.push_back("optimizer state not imported (" + why + "): the weights are; "
                               "continued training starts AdamW's moments from zero");
    }
    st.rngState = s.gen.get_state();
    st.dims = rc.config.task.curriculum.dims.valueAt(st.stepsDone);
    st.points = rc.config.task.curriculum.points.valueAt(st.stepsDone);
    result.stepsDone = st.stepsDone;

    // Assemble in <target folder>.importing, rename when complete.
    const fs::path finalDir = target.parent_path();
    const fs::path tmpDir = finalDir.string() + ".importing";
    removeAll(tmpDir);
    try {
        io::RunHeader h;
        h.runId = id;
        h.createdAt = utcNow();
        h.configYaml = toYaml(rc.config);
        h.task = rc.config.task.name;
        h.positionEncoding = rc.config.peDisplayName();
        h.backbone = rc.config.model.family;
        h.device = "cpu";
        h.seed = *rc.config.seed;
        h.totalSteps = rc.config.training.maxSteps;
        h.parameterCount = s.model->parameterCount();
        h.pointwiseWidth = rc.config.trainPoints();
        h.positionConstants = s.model->positionConstants();
        h.importedFrom = dir.string();
        std::vector<io::ParameterShape> shapes;
        for (const auto& [name, p] : s.optimizer->params())
            shapes.push_back({name, p.sizes().vec()});
        const std::string tmpRun = (tmpDir / "run.h5").string();
        {
            auto writer = io::RunWriter::create(tmpRun, h, shapes, st.rngState.numel());
            writer->writeCheckpoint(st);
            writer->setStatus("imported");
        }
        if (options.metrics && fs::is_regular_file(dir / "metrics.json", ec)) {
            try {
                result.importedMethods =
                    importMetricsJson((dir / "metrics.json").string(), tmpRun, "python");
            } catch (const Error& e) {
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

bool isReferenceRunDir(const std::string& dir)
{
    std::error_code ec;
    const fs::path p(dir);
    return fs::is_regular_file(p / "config.yaml", ec) && fs::is_regular_file(p / "state.pt", ec);
}

std::vector<std::string> findReferenceRuns(const std::string& root)
{
    std::vector<std::string> found;
    std::error_code ec;
    if (isReferenceRunDir(root) && !fs::exists(fs::path(root) / "run.h5", ec))
        return {fs::path(root).string()};
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec),
        end;
    for (; !ec && it != end; it.increment(ec)) {
        if (it.depth() > 6) {
            it.disable_recursion_pending();
            continue;
        }
        if (it->is_directory(ec) && isReferenceRunDir(it->path().string()) &&
            !fs::exists(it->path() / "run.h5", ec))
            found.push_back(it->path().string());
    }
    std::sort(found.begin(), found.end());
    return found;
}

}  // namespace lengen::engine
