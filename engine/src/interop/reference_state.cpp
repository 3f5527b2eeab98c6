#include "interop/reference_state.h"

#include <cmath>
#include <map>

#include "interop/reference_config.h"
#include "lengen/engine/errors.h"

namespace lengen::engine::interop {

std::string shapeText(at::IntArrayRef s)
{
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i)
        out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

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
        throw Error(ErrorKind::RunFile,
                    path + ": 'model_state_dict' is a " + s.model->kindName() + ", not a dict");
    s.optimizer = root->get("optimizer_state_dict");
    if (auto step = root->get("train_step")) {
        const bool intTensor = step->kind == PyValue::Kind::Tensor && step->tensor.numel() == 1 &&
                               !step->tensor.is_floating_point();
        if (step->kind == PyValue::Kind::Int)
            s.trainStep = step->integer;
        else if (intTensor)
            s.trainStep = step->tensor.item<std::int64_t>();
        else
            throw Error(ErrorKind::RunFile,
                        path + ": train_step is a " + step->kindName() + ", not an integer");
        if (*s.trainStep < 0)
            throw Error(ErrorKind::RunFile,
                        path + ": train_step is negative (" + std::to_string(*s.trainStep) + ")");
    }
    return s;
}

// The weights, by our parameter order, with every mismatch named.
std::vector<io::NamedTensor>
mapWeights(const PyValuePtr& sd, const std::vector<std::pair<std::string, torch::Tensor>>& params,
           const RunConfig& config, const std::string& path, std::vector<std::string>& notes)
{
    std::map<std::string, torch::Tensor> ours;
    for (const auto& [name, p] : params)
        ours.emplace(name, p);
    std::map<std::string, torch::Tensor> theirs;
    int skipped = 0;
    for (const auto& [k, v] : sd->dict) {
        if (k->kind != PyValue::Kind::Str || v->kind != PyValue::Kind::Tensor)
            throw Error(
                ErrorKind::RunFile,
                path + ": model_state_dict holds a " + v->kindName() + " under " +
                    (k->kind == PyValue::Kind::Str ? "'" + k->text + "'" : "a non-string key"));
        if (!ours.count(k->text)) {
            if (interop::isPythonOnlyKey(k->text)) {
                ++skipped;
                continue;
            }
            throw Error(ErrorKind::RunFile,
                        path + ": key '" + k->text + "' " + shapeText(v->tensor.sizes()) +
                            " is not part of the model config.yaml describes (" +
                            config.peDisplayName() + ", " + std::to_string(config.model.numLayers) +
                            " layers)");
        }
        theirs.emplace(k->text, v->tensor);
    }
    std::vector<io::NamedTensor> out;
    for (const auto& [name, p] : params) {
        const auto it = theirs.find(name);
        if (it == theirs.end())
            throw Error(ErrorKind::RunFile, path + ": key '" + name + "' (shape " +
                                                shapeText(p.sizes()) + ") is missing");
        if (it->second.sizes() != p.sizes())
            throw Error(ErrorKind::RunFile,
                        path + ": key '" + name + "' has shape " + shapeText(it->second.sizes()) +
                            ", the model " + "config.yaml describes needs " + shapeText(p.sizes()));
        if (!it->second.is_floating_point())
            throw Error(ErrorKind::RunFile, path + ": key '" + name + "' is not a float tensor");
        if (!torch::isfinite(it->second).all().item<bool>())
            throw Error(ErrorKind::RunFile, path + ": key '" + name +
                                                "' holds NaN or infinite "
                                                "values (the Python run diverged?)");
        out.push_back({name, it->second.to(torch::kFloat32).contiguous()});
    }
    if (skipped)
        notes.push_back(std::to_string(skipped) +
                        " tensor(s) LenGen's model does not use "
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
            k->integer >= static_cast<std::int64_t>(keys.size()) ||
            v->kind != PyValue::Kind::Dict) {
            why = "its state is not indexed by parameter number";
            return false;
        }
        auto m = v->get("exp_avg"), sq = v->get("exp_avg_sq"), step = v->get("step");
        if (!m || !sq || m->kind != PyValue::Kind::Tensor || sq->kind != PyValue::Kind::Tensor) {
            why = "it is not AdamW's (no exp_avg / exp_avg_sq)";
            return false;
        }
        if (!m->tensor.is_floating_point() || !sq->tensor.is_floating_point() ||
            !torch::isfinite(m->tensor).all().item<bool>() ||
            !torch::isfinite(sq->tensor).all().item<bool>() ||
            (sq->tensor.numel() && sq->tensor.min().item<double>() < 0)) {
            why = "the moments of '" + keys[k->integer] +
                  "' are not finite or exp_avg_sq is "
                  "negative";
            return false;
        }
        moments[keys[k->integer]] = {m->tensor, sq->tensor};
        if (step && step->kind == PyValue::Kind::Tensor && step->tensor.numel() == 1)
            steps = step->tensor.item<double>();
        else if (step && step->kind == PyValue::Kind::Int)
            steps = double(step->integer);
        if (!std::isfinite(steps) || steps > 1e15)
            steps = -1;  // unusable: the step count falls back to the checkpoint's
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

}  // namespace lengen::engine::interop
