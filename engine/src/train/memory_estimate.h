#pragma once
// What one training step will hold in memory, estimated from the config alone, before the model
// or a batch is allocated: a config that validates (hidden size 10^9, 10^6 layers, batch 10^9)
// may still need more memory than the machine has, and LibTorch would only fail midway with an
// allocator stack dump. No Torch headers: the estimate is arithmetic on the config.

#include <string>

#include "lengen/engine/config.h"

namespace lengen::engine::training {

struct MemoryEstimate {
    double parameterCount = 0;   ///< weights (analytical, within a few % of the built model)
    double stateBytes = 0;       ///< weights + gradients + AdamW moments, float32
    double activationBytes = 0;  ///< tensors one forward keeps for the backward, at full length
    double total() const { return stateBytes + activationBytes; }
};

MemoryEstimate estimateTraining(const RunConfig& config);

/// Physical memory of this machine in bytes (0 if unknown).
double physicalMemoryBytes();

/// "1.5 GB", "256 GB": what the messages print.
std::string bytesText(double bytes);

/// Error(Config) naming the config file and the estimate when a CPU run cannot fit in
/// `availableBytes` (default: physical memory). CUDA runs are left to the device. `members`:
/// that many runs trained as one batched model (trainer.h trainMembers), each its own weights,
/// state and activations.
void checkTrainingFits(const RunConfig& config, const std::string& device,
                       double availableBytes = physicalMemoryBytes(), int members = 1);

}  // namespace lengen::engine::training
