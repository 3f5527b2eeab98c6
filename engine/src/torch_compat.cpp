#include "torch_compat.h"

#include <dlfcn.h>

#include <limits>

#include <ATen/autocast_mode.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include "lengen/engine/errors.h"
#include "lengen/engine/version.h"

// Version gates: the C++ API each shim uses appeared in these LibTorch releases.
#define LENGEN_TORCH_AT_LEAST(major, minor)                                                        \
    (TORCH_VERSION_MAJOR > (major) ||                                                              \
     (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))
#if LENGEN_TORCH_AT_LEAST(2, 4)
#define LENGEN_HAS_DEVICE_AUTOCAST 1  // set_autocast_enabled(DeviceType, bool)
#define LENGEN_HAS_FUSED_ADAMW 1      // _fused_adamw_ with a tensor learning rate
#define LENGEN_HAS_RMS_NORM 1         // rms_norm (on CUDA one fused kernel each way in 2.15)
#endif
#if LENGEN_TORCH_AT_LEAST(2, 1)
#define LENGEN_HAS_FOREACH_TENSOR 1  // _foreach_mul_(TensorList, Tensor)
#define LENGEN_HAS_SDPA 1            // scaled_dot_product_attention(..., scale)
#endif

namespace lengen::engine::compat {

namespace {
// cudaError_t is an int-sized enum; 0 is cudaSuccess.
using MemGetInfo = int (*)(std::size_t*, std::size_t*);
using DeviceSync = int (*)();
using GetDevice = int (*)(int*);
using SetDevice = int (*)(int);

template <typename Fn>
Fn cudaSymbol(const char* name)
{
    return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}
}  // namespace

std::string torchVersion() { return TORCH_VERSION; }

bool torchHasCuda()
{
    // Set by engine/CMakeLists.txt from Torch's CMake config (CAFFE2_USE_CUDA); whether a GPU
    // is present is torch::cuda::is_available().
#ifdef LENGEN_TORCH_CUDA
    return true;
#else
    return false;
#endif
}

Precision parsePrecision(const std::string& text)
{
    if (text == "fp32" || text.empty())
        return Precision::Fp32;
    if (text == "tf32")
        return Precision::Tf32;
    if (text == "bf16")
        return Precision::Bf16;
    throw Error(ErrorKind::Usage, "unknown precision '" + text + "' (fp32, tf32, bf16)");
}

const char* precisionName(Precision p)
{
    switch (p) {
    case Precision::Tf32: return "tf32";
    case Precision::Bf16: return "bf16";
    default: return "fp32";
    }
}

void applyMatmulPrecision(Precision p, const torch::Device& device)
{
    if (!device.is_cuda())
        return;
    // "high" lets float32 products use TF32; "highest" is IEEE float32. Both versions take
    // the string form (2.9+ also has per-backend settings; this one covers cuBLAS).
    at::globalContext().setFloat32MatmulPrecision(p == Precision::Tf32 ? "high" : "highest");
}

AutocastScope::AutocastScope(Precision p, const torch::Device& device)
{
    if (p != Precision::Bf16 || !device.is_cuda())
        return;
    m_on = true;
#ifdef LENGEN_HAS_DEVICE_AUTOCAST
    m_wasEnabled = at::autocast::is_autocast_enabled(at::kCUDA);
    m_previousType = static_cast<int>(at::autocast::get_autocast_dtype(at::kCUDA));
    at::autocast::set_autocast_enabled(at::kCUDA, true);
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
#else
    m_wasEnabled = at::autocast::is_enabled();
    m_previousType = static_cast<int>(at::autocast::get_autocast_gpu_dtype());
    at::autocast::set_enabled(true);
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
#endif
    at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope()
{
    if (!m_on)
        return;
    // Cast weights are cached for the scope; drop them when the outermost scope ends.
    if (at::autocast::decrement_nesting() == 0)
        at::autocast::clear_cache();
    // Back to what the enclosing code had (an outer scope, or autocast off).
    const auto previous = static_cast<at::ScalarType>(m_previousType);
#ifdef LENGEN_HAS_DEVICE_AUTOCAST
    at::autocast::set_autocast_enabled(at::kCUDA, m_wasEnabled);
    at::autocast::set_autocast_dtype(at::kCUDA, previous);
#else
    at::autocast::set_enabled(m_wasEnabled);
    at::autocast::set_autocast_gpu_dtype(previous);
#endif
}

bool fusedAdamW(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& grads,
                const std::vector<torch::Tensor>& expAvg,
                const std::vector<torch::Tensor>& expAvgSq, const std::vector<torch::Tensor>& steps,
                const torch::Tensor& lr, double beta1, double beta2, double weightDecay, double eps)
{
#ifdef LENGEN_HAS_FUSED_ADAMW
    at::_fused_adamw_(params, grads, expAvg, expAvgSq, /*max_exp_avg_sqs=*/{}, steps, lr, beta1,
                      beta2, weightDecay, eps, /*amsgrad=*/false, /*maximize=*/false);
    return true;
#else
    (void)params, (void)grads, (void)expAvg, (void)expAvgSq, (void)steps, (void)lr;
    (void)beta1, (void)beta2, (void)weightDecay, (void)eps;
    return false;
#endif
}

torch::Tensor clipGradNormOnDevice(const std::vector<torch::Tensor>& grads, double maxNorm)
{
    // Same rule as torch.nn.utils.clip_grad_norm_: coef = min(max / (total + 1e-6), 1).
    auto total = torch::stack(at::_foreach_norm(grads, 2)).norm(2);
    auto coef = (maxNorm / (total + 1e-6)).clamp_max(1.0);
#ifdef LENGEN_HAS_FOREACH_TENSOR
    at::_foreach_mul_(grads, coef);
#else
    for (const auto& g : grads)
        const_cast<torch::Tensor&>(g).mul_(coef);
#endif
    return total;
}

bool hasFusedAdamW()
{
#ifdef LENGEN_HAS_FUSED_ADAMW
    return true;
#else
    return false;
#endif
}

bool hasFusedAttention()
{
#ifdef LENGEN_HAS_SDPA
    return true;
#else
    return false;
#endif
}

torch::Tensor causalAttention(const torch::Tensor& q, const torch::Tensor& k,
                              const torch::Tensor& v, double scale, const torch::Tensor& bias)
{
#ifdef LENGEN_HAS_SDPA
    if (!bias.defined())  // the flash kernel's own causal mask: no T x T tensor at all
        return at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true, scale);
    // A float mask carries the bias and the causal -inf together: [.., T, T] broadcast over B.
    const auto t = q.size(2);
    auto causal = torch::full({t, t}, -std::numeric_limits<float>::infinity(),
                              q.options().requires_grad(false))
                      .triu_(1);
    return at::scaled_dot_product_attention(q, k, v, bias + causal, 0.0, false, scale);
#else
    (void)q, (void)k, (void)v, (void)scale, (void)bias;
    throw Error(ErrorKind::Internal, "fused attention needs LibTorch >= 2.1");
#endif
}

bool hasRmsNorm()
{
#ifdef LENGEN_HAS_RMS_NORM
    return true;
#else
    return false;
#endif
}

torch::Tensor rmsNorm(const torch::Tensor& x, const torch::Tensor& weight, double eps)
{
#ifdef LENGEN_HAS_RMS_NORM
    // One type for both, or rms_norm warns and runs its composite ops instead of the fused
    // kernel (bf16 activations, float32 weights under autocast). The weight's gradient stays
    // float32 through the cast.
    if (weight.defined() && weight.scalar_type() != x.scalar_type())
        return at::rms_norm(x, {x.size(-1)}, weight.to(x.scalar_type()), eps);
    return at::rms_norm(x, {x.size(-1)}, weight, eps);
#else
    return x * torch::rsqrt(x.square().mean(-1, true) + eps) * weight;
#endif
}

std::optional<DeviceMemory> cudaMemory(int index)
{
    static const auto fn = cudaSymbol<MemGetInfo>("cudaMemGetInfo");
    static const auto getDevice = cudaSymbol<GetDevice>("cudaGetDevice");
    static const auto setDevice = cudaSymbol<SetDevice>("cudaSetDevice");
    if (!fn)
        return std::nullopt;
    // cudaMemGetInfo answers for the current device: switch to `index` for the call.
    int current = -1;
    const bool switchDevice = index >= 0 && getDevice && setDevice && getDevice(&current) == 0 &&
                              current != index && setDevice(index) == 0;
    std::size_t freeBytes = 0, totalBytes = 0;
    const bool ok = fn(&freeBytes, &totalBytes) == 0;
    if (switchDevice)
        setDevice(current);
    if (!ok)
        return std::nullopt;
    return DeviceMemory{freeBytes, totalBytes};
}

void synchronize(const torch::Device& device)
{
    if (!device.is_cuda())
        return;
    static const auto fn = cudaSymbol<DeviceSync>("cudaDeviceSynchronize");
    if (fn)
        fn();
}

}  // namespace lengen::engine::compat

namespace lengen::engine {

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
