// A run file's checkpoints as tensors (run_store.h): read whole for a resume or an evaluation,
// or their slots checked against the model's parameters before a resume writes. The rest of
// the run file is read without Torch (run_reader.cpp).

#include <algorithm>
#include <cmath>
#include <limits>

#include "io/run_open.h"
#include "io/run_store.h"

namespace lengen::engine::io {

namespace {

std::string dimsText(const std::vector<std::int64_t>& dims)
{
    std::string text = "[";
    for (size_t i = 0; i < dims.size(); ++i)
        text += (i ? ", " : "") + std::to_string(dims[i]);
    return text + "]";
}

// The shape of one tensor of a checkpoint slot, checked before anything is allocated for it.
// `group` names it in messages ("/checkpoint/slot1/model"); `needData`: the slot was written,
// so the file must hold every byte of the shape.
std::vector<std::int64_t> checkedTensorShape(hid_t ds, const std::string& group,
                                             const std::string& name,
                                             const std::vector<ParameterShape>* expected,
                                             bool needData, const std::string& path)
{
    const auto where = "dataset '" + group + "/" + name + "' in " + path;
    const auto stored = datasetShape(ds);
    const std::vector<std::int64_t> dims(stored.begin(), stored.end());
    if (expected) {
        const auto it = std::find_if(expected->begin(), expected->end(),
                                     [&](const ParameterShape& p) { return p.name == name; });
        if (it == expected->end())
            throw Error(ErrorKind::RunFile, where + " is not a parameter of the run's model "
                                                    "(damaged file)");
        if (it->shape != dims)
            throw Error(ErrorKind::RunFile, where + " has shape " + dimsText(dims) +
                                                ", the model's is " + dimsText(it->shape) +
                                                " (damaged file)");
    }
    std::uint64_t bytes = sizeof(float);
    for (const auto d : stored)
        if (__builtin_mul_overflow(bytes, static_cast<std::uint64_t>(d), &bytes))
            bytes = std::numeric_limits<std::uint64_t>::max();
    if (needData && storedBytes(ds) < bytes)
        throw Error(ErrorKind::RunFile, where + " has shape " + dimsText(dims) +
                                            " but the file "
                                            "holds " +
                                            std::to_string(storedBytes(ds)) +
                                            " bytes of it (damaged file)");
    return dims;
}

std::vector<NamedTensor> readTensors(hid_t group, const std::string& groupName,
                                     const std::vector<ParameterShape>* expected,
                                     const std::string& path)
{
    std::vector<NamedTensor> out;
    for (const auto& name : memberNames(group)) {
        auto ds = openDataset(group, name, path);
        const auto dims = checkedTensorShape(ds.id(), groupName, name, expected, true, path);
        auto t = torch::empty(dims, torch::kFloat32);
        readAll(ds.id(), H5T_NATIVE_FLOAT, t.data_ptr<float>(), static_cast<size_t>(t.numel()),
                path);
        out.push_back({name, t});
    }
    return out;
}

}  // namespace

std::vector<ParameterShape>
parameterShapes(const std::vector<std::pair<std::string, torch::Tensor>>& params)
{
    std::vector<ParameterShape> shapes;
    for (const auto& [name, p] : params)
        shapes.push_back({name, p.sizes().vec()});
    return shapes;
}

std::vector<ParameterShape>
parameterShapes(const torch::OrderedDict<std::string, torch::Tensor>& params)
{
    std::vector<ParameterShape> shapes;
    for (const auto& item : params)
        shapes.push_back({item.key(), item.value().sizes().vec()});
    return shapes;
}

CheckpointState readCheckpoint(const std::string& path, const std::vector<ParameterShape>* expected)
{
    H5Lock lock(h5Mutex());
    auto file = openRunForReading(path);
    const auto slot = currentCheckpointSlot(file.id(), path);
    if (slot < 0)
        throw Error(ErrorKind::RunFile, "the run has no checkpoint yet: " + path);
    auto g = openGroup(file.id(), "checkpoint/slot" + std::to_string(slot), path);
    CheckpointState st;
    st.stepsDone = readIntScalar(g.id(), "step", path);
    st.wallSeconds = readDoubleScalar(g.id(), "wall_time", path);
    st.optimizerSteps = readIntScalar(g.id(), "optimizer/step", path);
    std::int64_t curriculum[2] = {0, 0};
    readAll(openDataset(g.id(), "curriculum", path).id(), H5T_NATIVE_INT64, curriculum, 2, path);
    const auto slotName = "/checkpoint/slot" + std::to_string(slot);
    const auto bad = [&](const std::string& what) {
        return Error(ErrorKind::RunFile, slotName + "/" + what + " in " + path +
                                             " is out of range or inconsistent (damaged file)");
    };
    // Ranges that hold for any run; the trainer checks them against the config as well.
    if (st.stepsDone < 0 || st.optimizerSteps < 0)
        throw bad(st.stepsDone < 0 ? "step" : "optimizer/step");
    if (!std::isfinite(st.wallSeconds) || st.wallSeconds < 0)
        throw bad("wall_time");
    if (curriculum[0] < 1 || curriculum[0] > 1'000'000 || curriculum[1] < 1 ||
        curriculum[1] > 1'000'000)
        throw bad("curriculum");
    st.dims = static_cast<int>(curriculum[0]);
    st.points = static_cast<int>(curriculum[1]);
    auto rng = openDataset(g.id(), "rng_state", path);
    st.rngState =
        torch::empty({static_cast<std::int64_t>(shapeOf(rng.id(), 1, path)[0])}, torch::kUInt8);
    readAll(rng.id(), H5T_NATIVE_UINT8, st.rngState.data_ptr<std::uint8_t>(),
            static_cast<size_t>(st.rngState.numel()), path);
    for (auto [group, list] :
         {std::pair{"model", &st.model}, std::pair{"optimizer/exp_avg", &st.expAvg},
          std::pair{"optimizer/exp_avg_sq", &st.expAvgSq}})
        *list = readTensors(openGroup(g.id(), group, path).id(), slotName + "/" + group, expected,
                            path);
    // Consumers pair the three lists by position: the moments must name the same tensors, in
    // the same order, with the parameters' shapes.
    for (const auto* moments : {&st.expAvg, &st.expAvgSq}) {
        const std::string group = moments == &st.expAvg ? "exp_avg" : "exp_avg_sq";
        if (moments->size() != st.model.size())
            throw bad("optimizer/" + group + " (it holds " + std::to_string(moments->size()) +
                      " tensors for " + std::to_string(st.model.size()) + " parameters)");
        for (size_t i = 0; i < st.model.size(); ++i)
            if ((*moments)[i].name != st.model[i].name ||
                (*moments)[i].value.sizes() != st.model[i].value.sizes())
                throw bad("optimizer/" + group + "/" + (*moments)[i].name +
                          " (its name or shape differs from the parameter's)");
    }
    return st;
}

void checkCheckpointSlots(const std::string& path, const std::vector<ParameterShape>& expected)
{
    H5Lock lock(h5Mutex());
    // SWMR-read: a crashed writer's status flags do not stop it, and a damaged header fails
    // after a few retries instead of the writer's endless ones.
    auto file = openRunForReading(path);
    const auto current = currentCheckpointSlot(file.id(), path);
    for (int slot = 0; slot < 2; ++slot) {
        const auto slotName = "/checkpoint/slot" + std::to_string(slot);
        auto g = openGroup(file.id(), slotName, path);
        for (const char* scalar : {"step", "wall_time", "optimizer/step"})
            shapeOf(openDataset(g.id(), scalar, path).id(), 0, path);
        for (const char* vector : {"curriculum", "rng_state"})
            shapeOf(openDataset(g.id(), vector, path).id(), 1, path);
        for (const char* group : {"model", "optimizer/exp_avg", "optimizer/exp_avg_sq"}) {
            auto tensors = openGroup(g.id(), group, path);
            const auto names = memberNames(tensors.id());
            if (names.size() != expected.size())
                throw Error(ErrorKind::RunFile, slotName + "/" + group + " in " + path + " holds " +
                                                    std::to_string(names.size()) + " tensors for " +
                                                    std::to_string(expected.size()) +
                                                    " parameters (damaged file)");
            for (const auto& name : names)
                checkedTensorShape(openDataset(tensors.id(), name, path).id(),
                                   slotName + "/" + group, name, &expected, slot == current, path);
        }
    }
}

}  // namespace lengen::engine::io
