#pragma once
// The Llama layer's elementwise tail on a GPU as fused kernels with their own backward
// (device_kernels.h; issue 58, item 2): the residual add with the RMSNorm that follows it, and
// SwiGLU's gate. Used on the Device path when KernelPolicy::deviceKernels is on
// (LENGEN_DEVICE_KERNELS=1) and the build has them; elsewhere the written-out ops or LibTorch's
// rms_norm run. Float32 and bfloat16 tensors; sums in float32.

#include <torch/torch.h>

#include <utility>

namespace lengen::engine::device {

/// Whether the kernels run on `x` here: built, a CUDA tensor, float32 or bfloat16.
bool fusedApplies(const torch::Tensor& x);

/// (s, y): s = a + b, y = s * rsqrt(mean(s², last dim) + eps) * w. a, b [..., H] (one type
/// after promotion), w [H].
std::pair<torch::Tensor, torch::Tensor> addRmsNorm(const torch::Tensor& a, const torch::Tensor& b,
                                                   const torch::Tensor& w, double eps);

/// silu(gate) * up, [..., I] each.
torch::Tensor swiglu(const torch::Tensor& gate, const torch::Tensor& up);

}  // namespace lengen::engine::device
