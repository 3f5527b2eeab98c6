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

/// Whether rotaryPair applies: q and k CUDA tensors of one shape [B, T, heads, d] and type
/// (float32 or bfloat16), d even, unit last stride; cos and sin [T, d] tables without gradients.
bool rotaryApplies(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& cos,
                   const torch::Tensor& sin);

/// (q cos + rot(q) sin, k cos + rot(k) sin) in one kernel each way, for q and k in the linear
/// layers' layout [B, T, heads, d] (any strides with a unit last one); the results contiguous
/// [B, T, heads, d], in q's type. The tables are read in float32.
std::pair<torch::Tensor, torch::Tensor> rotaryPair(const torch::Tensor& q, const torch::Tensor& k,
                                                   const torch::Tensor& cos,
                                                   const torch::Tensor& sin);

}  // namespace lengen::engine::device
