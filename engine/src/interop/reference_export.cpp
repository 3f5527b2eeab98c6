// Exporting a LenGen run as a reference run folder: config.yaml + state.pt laid out as the
// reference's torch.save writes them (spec §5.7), so its eval-only path, eval_attn.py and
// eval_atk.py can load our weights with load_state_dict(strict=True).

#include <filesystem>
#include <fstream>

#include "interop/reference_config.h"
#include "interop/torch_archive.h"
#include "io/run_store.h"
#include "lengen/engine/encodings.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/reference_runs.h"
#include "lengen/engine/run_file.h"
#include "model/icl_model.h"
#include "text_files.h"
#include "train/train_loop.h"

namespace fs = std::filesystem;

namespace lengen::engine {

namespace {

using interop::PyValue;
using interop::PyValuePtr;

PyValuePtr str(const std::string& s) { return PyValue::of(s); }
PyValuePtr num(double v) { return PyValue::of(v); }
PyValuePtr integer(std::int64_t v) { return PyValue::of(v); }

// True for the first key of the backbone, where the reference's unused table goes.
bool startsBackbone(const std::string& key)
{
    return key.rfind("transformer.", 0) == 0 || key.rfind("backbone.", 0) == 0;
}

// The static YaRN module's persistent inv_freq buffer (§4.5): the only derived table the
// reference's freshly built model has in its state dict.
torch::Tensor yarnInvFreq(const std::map<std::string, std::vector<double>>& constants)
{
    const auto it = constants.find("inv_freq");
    if (it == constants.end())
        throw Error(ErrorKind::Internal, "YaRN model without inv_freq");
    return torch::tensor(it->second, torch::kFloat64).to(torch::kFloat32);
}

struct Exported {
    PyValuePtr model = PyValue::makeDict();  // OrderedDict in the reference's key order
    std::vector<std::string> paramKeys;      // parameters (not buffers), in that order
};

Exported modelStateDict(const RunConfig& c, const io::CheckpointState& st,
                        const std::map<std::string, std::vector<double>>& positionConstants)
{
    Exported e;
    e.model->ordered = true;
    const auto table = interop::embeddingTable(c);
    const bool yarn = c.model.backbone == Backbone::Llama && c.position.type == "yarn";
    const torch::Tensor invFreq = yarn ? yarnInvFreq(positionConstants) : torch::Tensor();
    bool tableDone = false;
    auto add = [&](const std::string& key, const torch::Tensor& t, bool parameter) {
        e.model->set(str(key), PyValue::of(t));
        if (parameter)
            e.paramKeys.push_back(key);
    };
    for (size_t i = 0; i < st.model.size(); ++i) {
        const auto& [name, value] = st.model[i];
        if (!tableDone && startsBackbone(name)) {
            // Unused by the model (inputs arrive as embeddings); zeros keep the file honest.
            add(table.key, torch::zeros(table.shape), true);
            tableDone = true;
        }
        add(name, value, true);
        // HF registers rotary_emb after o_proj: the buffer follows the layer's o_proj weight.
        const std::string oProj = ".self_attn.o_proj.weight";
        if (yarn && name.size() > oProj.size() &&
            name.compare(name.size() - oProj.size(), oProj.size(), oProj) == 0)
            add(name.substr(0, name.size() - oProj.size()) + ".self_attn.rotary_emb.inv_freq",
                invFreq, false);
    }
    return e;
}

PyValuePtr optimizerStateDict(const RunConfig& c, const io::CheckpointState& st,
                              const std::vector<std::string>& paramKeys)
{
    auto state = PyValue::makeDict();
    std::vector<PyValuePtr> indices;
    for (size_t i = 0; i < paramKeys.size(); ++i) {
        indices.push_back(integer(static_cast<std::int64_t>(i)));
        for (size_t j = 0; j < st.model.size(); ++j) {
            if (st.model[j].name != paramKeys[i] || !st.model[j].value.numel())
                continue;
            if (st.expAvgSq[j].value.abs().sum().item<double>() == 0)
                break;  // never updated (FIRE's frozen L0): torch keeps no state for it
            auto entry = PyValue::makeDict();
            entry->set(str("step"),
                       PyValue::of(torch::tensor(double(st.optimizerSteps), torch::kFloat32)));
            entry->set(str("exp_avg"), PyValue::of(st.expAvg[j].value));
            entry->set(str("exp_avg_sq"), PyValue::of(st.expAvgSq[j].value));
            state->set(integer(static_cast<std::int64_t>(i)), entry);
        }
    }
    auto group = PyValue::makeDict();
    group->set(str("lr"), num(training::learningRateAt(c, st.stepsDone)));
    group->set(str("betas"),
               PyValue::tuple({num(c.training.adamBeta1), num(c.training.adamBeta2)}));
    group->set(str("eps"), num(c.effectiveAdamEpsilon()));
    group->set(str("weight_decay"), num(c.effectiveWeightDecay()));
    group->set(str("amsgrad"), PyValue::of(false));
    group->set(str("foreach"), PyValue::none());
    group->set(str("maximize"), PyValue::of(false));
    group->set(str("capturable"), PyValue::of(false));
    group->set(str("differentiable"), PyValue::of(false));
    group->set(str("fused"), PyValue::none());
    group->set(str("initial_lr"), num(c.training.learningRate));
    group->set(str("params"), PyValue::list(indices));
    auto opt = PyValue::makeDict();
    opt->set(str("state"), state);
    opt->set(str("param_groups"), PyValue::list({group}));
    return opt;
}

// Error(Config) for a run the reference's code cannot hold: an encoding it lacks, or random
// training positions.
void refuseUnexportable(const RunConfig& config, const std::string& path)
{
    if (const auto& e = encodingOf(config); !e.inReference)
        throw Error(ErrorKind::Config,
                    "the reference's code has no " + e.display + " (patch type '" + e.type +
                        "'), so this run cannot be written as a reference run: " + path);
    // Its model is fine, but the reference could not resume it.
    if (config.training.randomPositions > 0)
        throw Error(ErrorKind::Config,
                    "the reference's code trains on positions 0..T-1; this run draws random "
                    "positions (training.random_positions), so it cannot be written as a "
                    "reference run: " +
                        path);
}

// The checkpoint st with its tensors in the model's registration order; positionConstants gets
// the built model's derived position tables.
io::CheckpointState
checkpointInModelOrder(const io::CheckpointState& st, const RunConfig& config,
                       const std::string& path,
                       std::map<std::string, std::vector<double>>& positionConstants)
{
    // The file lists tensors by name; torch.optim numbers parameters in model.parameters()
    // order, so the state dict and the optimizer state follow the model's registration order.
    io::CheckpointState ordered = st;
    ordered.model.clear();
    ordered.expAvg.clear();
    ordered.expAvgSq.clear();
    const model::InContextModel model = model::buildModel(config);  // freed on return
    positionConstants = model->positionConstants();
    for (const auto& item : model->named_parameters()) {
        size_t j = 0;
        while (j < st.model.size() && st.model[j].name != item.key())
            ++j;
        if (j == st.model.size())
            throw Error(ErrorKind::RunFile,
                        path + ": the checkpoint has no tensor '" + item.key() + "'");
        ordered.model.push_back(st.model[j]);
        ordered.expAvg.push_back(st.expAvg[j]);
        ordered.expAvgSq.push_back(st.expAvgSq[j]);
    }
    return ordered;
}

// Creates the export folder dir (outDir as given); Error(Io) when it holds a reference run.
void prepareExportFolder(const fs::path& dir, const std::string& outDir)
{
    std::error_code ec;
    for (const char* f : {"state.pt", "config.yaml"})
        if (fs::exists(dir / f, ec))
            throw Error(ErrorKind::Io,
                        outDir + " already holds a " + std::string(f) + "; choose an empty folder");
    fs::create_directories(dir, ec);
    if (ec)
        throw Error(ErrorKind::Io, "cannot create " + outDir + ": " + ec.message());
}

// Error(Io) when dir has no room for the file: every tensor (weights, two moments, the unused
// embedding table).
void requireExportSpace(const io::CheckpointState& st, const RunConfig& config, const fs::path& dir,
                        const std::string& outDir)
{
    double need = 4e6;
    for (const auto& t : st.model)
        need += 3.0 * double(t.value.nbytes());
    const auto table = interop::embeddingTable(config);
    need += 4.0 * double(table.shape[0] * table.shape[1]);
    std::error_code ec;
    const auto space = fs::space(dir, ec);
    if (!ec && double(space.available) < need)
        throw Error(ErrorKind::Io, outDir + " has " + std::to_string(space.available >> 20) +
                                       " MB free; state.pt needs about " +
                                       std::to_string(static_cast<long long>(need / 1048576)) +
                                       " MB");
}

// Writes state.pt and config.yaml into dir, both files or neither; notes gets the config's
// adaptations.
void writeExportedFiles(const RunConfig& config, const io::CheckpointState& st,
                        const std::map<std::string, std::vector<double>>& positionConstants,
                        const std::string& runId, const fs::path& dir,
                        std::vector<std::string>& notes)
{
    const Exported exported = modelStateDict(config, st, positionConstants);
    auto root = PyValue::makeDict();
    root->set(str("model_state_dict"), exported.model);
    root->set(str("optimizer_state_dict"), optimizerStateDict(config, st, exported.paramKeys));
    // The reference's train_step is the step after whose update it saved (§5.6 step 9).
    root->set(str("train_step"), integer(std::max<std::int64_t>(0, st.stepsDone - 1)));
    const std::string yaml = interop::referenceConfigYaml(config, runId, notes);
    interop::writeTorchFile((dir / "state.pt").string(), *root);
    try {
        writeFileAtomically((dir / "config.yaml").string(), yaml);
    } catch (...) {
        std::error_code ec;
        fs::remove(dir / "state.pt", ec);  // both files or neither
        throw;
    }
}

}  // namespace

ReferenceExportResult exportReferenceRun(const std::string& run, const std::string& outDir)
{
    const std::string path = locateRunFile(run);
    const RunFileInfo info = readRunInfo(path);
    if (info.checkpointStep < 0)
        throw Error(ErrorKind::RunFile, "the run has no checkpoint yet (train it first): " + path);
    RunConfig config = storedRunConfig(info.configYaml, path);
    refuseUnexportable(config, path);
    std::map<std::string, std::vector<double>> positionConstants;
    const io::CheckpointState st =
        checkpointInModelOrder(io::readCheckpoint(path), config, path, positionConstants);

    ReferenceExportResult result;
    const fs::path dir(outDir);
    prepareExportFolder(dir, outDir);
    requireExportSpace(st, config, dir, outDir);
    writeExportedFiles(config, st, positionConstants, info.runId, dir, result.notes);
    if (config.position.type == "dynamic-yarn" || config.position.type == "dynamic")
        result.notes.push_back("the reference's dynamic " +
                               std::string(config.position.type == "dynamic" ? "NTK" : "YaRN") +
                               " keeps the frequencies of the longest prompt it has seen "
                               "(spec §9.3); LenGen's " +
                               (config.compat == CompatMode::Reference ? "does too"
                                                                       : "recomputes them per "
                                                                         "prompt"));
    result.dir = dir.string();
    return result;
}

}  // namespace lengen::engine
