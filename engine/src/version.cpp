#include "lengen/engine/version.h"

#include <torch/cuda.h>

#include "torch_compat.h"

namespace lengen::engine {

const char* versionString() { return LENGEN_VERSION; }

std::string libTorchVersion() { return compat::torchVersion(); }

std::string backendDescription()
{
    std::string text = "LibTorch " + compat::torchVersion();
    if (!compat::torchHasCuda())
        return text + ", CPU only";
    const auto gpus = torch::cuda::device_count();
    return text + " with CUDA, " +
           (gpus > 0 ? std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs") : "no GPU usable");
}

}  // namespace lengen::engine
