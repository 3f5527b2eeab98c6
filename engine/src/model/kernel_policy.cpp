#include "model/kernel_policy.h"

#include "model/cpu_kernels.h"
#include "torch_compat.h"

namespace lengen::engine::model {

KernelPolicy chooseKernelPolicy(bool cuda, std::shared_ptr<const kernels::KernelContext> context,
                                const SessionSwitches& switches)
{
    KernelPolicy p;
    p.kernelContext = std::move(context);
    p.parallelScan = switches.parallelScan;
    p.deviceFusion = switches.deviceFusion;
    p.deviceKernels = switches.deviceKernels;
    p.deviceRotary = switches.deviceRotary;
    if (cuda)
        p.path = compat::hasFusedAttention() && switches.fusedAttention ? LayerPath::Device
                                                                        : LayerPath::Module;
    else
        p.path = kernels::hasBlas() && switches.fused ? LayerPath::Fused : LayerPath::Module;
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
