#pragma once
// How a backbone computes its layers: one choice per model, made once by the session that owns
// it (training::setupSession, eval::loadRun), instead of each layer reading switches.
//
//   Fused   CPU training: each Llama layer, GPT-2 block and Mamba block is one autograd node
//           over raw buffers (fused_layer.h), split over the session's KernelContext. Used
//           where a forward records a graph without taps or dropout; other forwards (no-grad
//           evaluation, probes) take the module path.
//   Module  Torch modules op by op (evaluation, probes, SessionSwitches::fused off, no BLAS
//           sgemm found, a GPU with fusedAttention off or without LibTorch's fused attention).
//   Device  A GPU: the module path with LibTorch's fused scaled_dot_product_attention where no
//           scores are asked for (attention.cpp).
//
// The Mamba scan's CPU kernel uses the context under every path; elsewhere (a GPU, float64) the
// scan is parallel unless SessionSwitches::parallelScan is off.

#include <memory>

#include "lengen/engine/session.h"
#include "model/kernel_context.h"

namespace lengen::engine::model {

enum class LayerPath { Module, Fused, Device };

struct KernelPolicy {
    LayerPath path = LayerPath::Module;
    /// The session's threads; null: one thread (KernelContext::serial()).
    std::shared_ptr<const kernels::KernelContext> kernelContext;
    /// Mamba's scan where the CPU kernel does not apply: parallel (parallel_scan.h) or the loop.
    bool parallelScan = true;
    /// On the Device path, norms as LibTorch's fused kernel (compat::rmsNorm).
    bool deviceFusion = true;
    /// On the Device path with deviceFusion, the residual add + RMSNorm and SwiGLU as LenGen's
    /// fused kernels (device/device_fused.h) where the build has them.
    bool deviceKernels = false;
    /// On the Device path with deviceFusion, rotary embedding as LenGen's kernel
    /// (device::rotaryPair) where the build has it.
    bool deviceRotary = true;

    /// Whether a layer over `x` takes LibTorch's fused device kernels (norms; attention itself
    /// follows `path`).
    bool fusesOnDevice(const torch::Tensor& x) const
    {
        return path == LayerPath::Device && deviceFusion && x.is_cuda();
    }

    const kernels::KernelContext& context() const
    {
        return kernelContext ? *kernelContext : kernels::KernelContext::serial();
    }
};

/// The policy for a model on a GPU (`cuda`) or the CPU, with the session's threads: Device on
/// a GPU, Fused on the CPU with a BLAS sgemm; switches.fused / fusedAttention false pick
/// Module (bench/README.md times both).
KernelPolicy chooseKernelPolicy(bool cuda, std::shared_ptr<const kernels::KernelContext> context,
                                const SessionSwitches& switches);

/// "module", "fused", "device".
const char* layerPathName(LayerPath path);

}  // namespace lengen::engine::model
