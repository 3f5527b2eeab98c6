#include "model/kernel_policy.h"

#include <cstdlib>
#include <cstring>

#include "model/cpu_kernels.h"
#include "torch_compat.h"

namespace lengen::engine::model {

namespace {

bool switchedOff(const char* name)
{
    const char* v = std::getenv(name);
    return v && std::strcmp(v, "0") == 0;
}

}  // namespace

KernelPolicy chooseKernelPolicy(bool cuda, std::shared_ptr<const kernels::KernelContext> context)
{
    KernelPolicy p;
    p.kernelContext = std::move(context);
    if (cuda)
        p.path = compat::hasFusedAttention() && !switchedOff("LENGEN_FUSED_ATTENTION")
                     ? LayerPath::Device
                     : LayerPath::Module;
    else
        p.path = kernels::hasBlas() && !switchedOff("LENGEN_FUSED") ? LayerPath::Fused
                                                                     : LayerPath::Module;
    return p;
}

const char* layerPathName(LayerPath path)
{
    switch (path) {
    case LayerPath::Fused: return "fused";
    case LayerPath::Device: return "device";
    case LayerPath::Module: break;
    }
    return "module";
}

}  // namespace lengen::engine::model
