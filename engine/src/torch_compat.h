#pragma once
// The one place where LibTorch versions differ (Debian's 1.13, CPU only; PyPI's 2.x, CUDA) and
// where the engine talks to the CUDA runtime. Everything else in the engine is written against
// the API both versions share. The CUDA runtime is reached through dlsym, not its headers: the
// same source builds against a CPU-only LibTorch, and a CUDA LibTorch has already loaded
// libcudart when a CUDA tensor exists.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

namespace lengen::engine::compat {

/// "1.13.1", "2.11.0": the LibTorch this binary was built against.
std::string torchVersion();

/// Whether this LibTorch was built with CUDA (independent of a GPU being present).
bool torchHasCuda();

/// Numeric precision of matrix products on a GPU. Fp32: IEEE float32 everywhere (the
/// default and the reference's). Tf32: float32 storage, matrix products on TF32 tensor cores
/// (10-bit mantissa inputs, float32 accumulation). Bf16: autocast of matrix products to
/// bfloat16 (weights, optimiser state, loss and softmax stay float32).
enum class Precision { Fp32, Tf32, Bf16 };
Precision parsePrecision(const std::string& text);  ///< throws Error(Usage) naming the values
const char* precisionName(Precision p);

/// Applies a precision's process-wide matmul setting (TF32 on or off) for `device`.
void applyMatmulPrecision(Precision p, const torch::Device& device);

/// bf16 autocast over a scope on a CUDA device; does nothing for other precisions or devices.
class AutocastScope {
public:
    AutocastScope(Precision p, const torch::Device& device);
    ~AutocastScope();
    AutocastScope(const AutocastScope&) = delete;
    AutocastScope& operator=(const AutocastScope&) = delete;

private:
    bool m_on = false;
    bool m_wasEnabled = false;  ///< autocast state before the scope, restored after it
    int m_previousType = 0;     ///< its dtype (at::ScalarType)
};

/// Free and total bytes of CUDA device `index` (cudaMemGetInfo; -1: the current device), or
/// nothing without a loaded CUDA runtime.
struct DeviceMemory {
    std::uint64_t freeBytes = 0, totalBytes = 0;
};
std::optional<DeviceMemory> cudaMemory(int index = -1);

/// Whether fusedAdamW() has a kernel here (LibTorch >= 2.4).
bool hasFusedAdamW();

/// One multi-tensor AdamW update of every parameter on a GPU (PyTorch 2.x's fused kernel; the
/// same update as torch.optim.AdamW(fused=True)). `lr` is a one-element device tensor and
/// `steps` one-element float tensors holding the step count, so that a CUDA graph replays the
/// kernel with new values. Returns false (and does nothing) where this LibTorch lacks it.
bool fusedAdamW(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& grads,
                const std::vector<torch::Tensor>& expAvg,
                const std::vector<torch::Tensor>& expAvgSq, const std::vector<torch::Tensor>& steps,
                const torch::Tensor& lr, double beta1, double beta2, double weightDecay,
                double eps);

/// Scales the gradients to a total L2 norm of at most `maxNorm` without reading the norm back
/// (no host synchronisation; capturable). Returns the total norm as a device tensor.
torch::Tensor clipGradNormOnDevice(const std::vector<torch::Tensor>& grads, double maxNorm);

/// Whether causalAttention() is available (LibTorch >= 2.1: scaled_dot_product_attention with
/// a scale argument).
bool hasFusedAttention();

/// softmax(q kᵀ · scale + bias + causal mask) v through LibTorch's fused attention (flash or
/// memory-efficient kernels on a GPU, whichever applies): q, k, v [B, h, T, d]; bias undefined
/// or [h, T, T] / [B, h, T, T] (ALiBi, FIRE; its gradient flows). Returns [B, h, T, d]. Only
/// where hasFusedAttention().
torch::Tensor causalAttention(const torch::Tensor& q, const torch::Tensor& k,
                              const torch::Tensor& v, double scale, const torch::Tensor& bias);

/// x * rsqrt(mean(x², last dim) + eps) * weight through LibTorch's rms_norm (2.4+; 2.15 runs it
/// on CUDA as one fused kernel forward and one backward, against about six and ten written
/// out), the written-out formula before. x [..., H], weight [H].
torch::Tensor rmsNorm(const torch::Tensor& x, const torch::Tensor& weight, double eps);
/// Whether rmsNorm() is LibTorch's rms_norm (false: the formula written out).
bool hasRmsNorm();

/// Waits for the device's queued work (timing); a no-op on the CPU.
void synchronize(const torch::Device& device);

}  // namespace lengen::engine::compat
