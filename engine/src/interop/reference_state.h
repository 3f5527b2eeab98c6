#pragma once
// The contents of a reference state.pt mapped onto LenGen's parameters: the weights by
// state-dict key (every mismatch named), the AdamW state by torch.optim's parameter numbers,
// train_step. Everything is checked before use (types, shapes, finite values).

#include <torch/torch.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "interop/torch_archive.h"
#include "io/run_store.h"
#include "lengen/engine/config.h"

namespace lengen::engine::interop {

struct LoadedState {
    PyValuePtr model, optimizer;
    std::optional<std::int64_t> trainStep;  ///< >= 0 when present
};

/// Reads state.pt: {model_state_dict, optimizer_state_dict, train_step}, or a bare state dict.
LoadedState readState(const std::string& path);

/// The weights for `params` (LenGen's names and shapes, in its order), float32, finite.
/// Keys only the Python model has are skipped (a note says how many).
std::vector<io::NamedTensor>
mapWeights(const PyValuePtr& stateDict,
           const std::vector<std::pair<std::string, torch::Tensor>>& params,
           const RunConfig& config, const std::string& path, std::vector<std::string>& notes);

/// Fills st.expAvg / st.expAvgSq (and the step count) from torch.optim's AdamW state, whose
/// parameter numbers follow the state dict's order without its buffers. False, with `why`,
/// when it does not match: the caller then starts the moments from zero.
bool mapOptimizer(const PyValuePtr& optimizer, const PyValuePtr& stateDict, io::CheckpointState& st,
                  std::string& why);

std::string shapeText(at::IntArrayRef shape);

}  // namespace lengen::engine::interop
