#include "device/device_fused.h"

#include "device/device_kernels.h"
#include "lengen/engine/errors.h"

#ifdef LENGEN_DEVICE_KERNELS
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace lengen::engine::device {

#ifdef LENGEN_DEVICE_KERNELS

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

Dtype dtypeOf(const torch::Tensor& t)
{
    return t.scalar_type() == torch::kBFloat16 ? Dtype::BFloat16 : Dtype::Float32;
}

void* streamOf(const torch::Tensor& t)
{
    return c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
}

// Both operands in their promoted type, contiguous.
std::pair<torch::Tensor, torch::Tensor> alike(const torch::Tensor& a, const torch::Tensor& b)
{
    const auto type = torch::promote_types(a.scalar_type(), b.scalar_type());
    return {a.to(type).contiguous(), b.to(type).contiguous()};
}

struct AddRmsNorm : torch::autograd::Function<AddRmsNorm> {
    static variable_list forward(AutogradContext* ctx, const torch::Tensor& a0,
                                 const torch::Tensor& b0, const torch::Tensor& w, double eps)
    {
        const c10::cuda::CUDAGuard onItsDevice(a0.device());  // the kernels use the current one
        auto [a, b] = alike(a0, b0);
        const auto wf = w.to(torch::kFloat32).contiguous();
        const int h = static_cast<int>(a.size(-1));
        const std::int64_t rows = a.numel() / h;
        auto sum = torch::empty_like(a), y = torch::empty_like(a);
        auto rstd = torch::empty({rows}, a.options().dtype(torch::kFloat32));
        addRmsNormForward(dtypeOf(a), a.data_ptr(), b.data_ptr(), wf.data_ptr<float>(),
                          sum.data_ptr(), y.data_ptr(), rstd.data_ptr<float>(), rows, h,
                          static_cast<float>(eps), streamOf(a));
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        ctx->save_for_backward({sum, wf, rstd});
        ctx->saved_data["a"] = static_cast<std::int64_t>(a0.scalar_type());
        ctx->saved_data["b"] = static_cast<std::int64_t>(b0.scalar_type());
        ctx->saved_data["w"] = static_cast<std::int64_t>(w.scalar_type());
        return {sum, y};
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads)
    {
        const auto saved = ctx->get_saved_variables();
        const auto &sum = saved[0], &wf = saved[1], &rstd = saved[2];
        const c10::cuda::CUDAGuard onItsDevice(sum.device());
        const int h = static_cast<int>(sum.size(-1));
        const std::int64_t rows = sum.numel() / h;
        const auto dy = grads[1].defined() ? grads[1].to(sum.scalar_type()).contiguous()
                                           : torch::zeros_like(sum);
        const auto dsum =
            grads[0].defined() ? grads[0].to(sum.scalar_type()).contiguous() : torch::Tensor();
        auto ds = torch::empty_like(sum);
        auto dw = torch::empty({h}, wf.options());
        auto partial = torch::empty({rmsPartialRows(rows), h}, wf.options());
        addRmsNormBackward(dtypeOf(sum), sum.data_ptr(), wf.data_ptr<float>(),
                           rstd.data_ptr<float>(), dy.data_ptr(),
                           dsum.defined() ? dsum.data_ptr() : nullptr, ds.data_ptr(),
                           dw.data_ptr<float>(), partial.data_ptr<float>(), rows, h, streamOf(sum));
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        const auto type = [&](const char* key) {
            return static_cast<torch::ScalarType>(ctx->saved_data[key].toInt());
        };
        return {ds.to(type("a")), ds.to(type("b")), dw.to(type("w")), torch::Tensor()};
    }
};

struct SwiGlu : torch::autograd::Function<SwiGlu> {
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& g0,
                                 const torch::Tensor& u0)
    {
        const c10::cuda::CUDAGuard onItsDevice(g0.device());
        auto [g, u] = alike(g0, u0);
        auto o = torch::empty_like(g);
        swigluForward(dtypeOf(g), g.data_ptr(), u.data_ptr(), o.data_ptr(), g.numel(), streamOf(g));
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        ctx->save_for_backward({g, u});
        ctx->saved_data["g"] = static_cast<std::int64_t>(g0.scalar_type());
        ctx->saved_data["u"] = static_cast<std::int64_t>(u0.scalar_type());
        return o;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads)
    {
        const auto saved = ctx->get_saved_variables();
        const auto &g = saved[0], &u = saved[1];
        const c10::cuda::CUDAGuard onItsDevice(g.device());
        const auto d = grads[0].to(g.scalar_type()).contiguous();
        auto dg = torch::empty_like(g), du = torch::empty_like(u);
        swigluBackward(dtypeOf(g), g.data_ptr(), u.data_ptr(), d.data_ptr(), dg.data_ptr(),
                       du.data_ptr(), g.numel(), streamOf(g));
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        const auto type = [&](const char* key) {
            return static_cast<torch::ScalarType>(ctx->saved_data[key].toInt());
        };
        return {dg.to(type("g")), du.to(type("u"))};
    }
};

// q, k [B, T, heads, d] -> their rotations, contiguous [B, T, heads, d]. The backward is the
// same kernel with the rotation transposed, on the gradients' own strides.
struct RotaryPair : torch::autograd::Function<RotaryPair> {
    static RotaryOperand operand(const torch::Tensor& in, torch::Tensor& out)
    {
        return {in.data_ptr(), out.data_ptr(), in.stride(0), in.stride(1), in.stride(2)};
    }

    // Rotates q and k (either may be undefined: no gradient reached it) into new tensors.
    static variable_list run(const torch::Tensor& q0, const torch::Tensor& k0,
                             const torch::Tensor& cos, const torch::Tensor& sin, bool inverse)
    {
        const auto& any = q0.defined() ? q0 : k0;
        // The current device is the kernel's: a model on cuda:1 outside a graph's guard.
        const c10::cuda::CUDAGuard onItsDevice(any.device());
        auto unit = [](const torch::Tensor& t) {
            return !t.defined() || t.stride(3) == 1 ? t : t.contiguous();
        };
        const auto q = unit(q0), k = unit(k0);
        torch::Tensor qo, ko;
        RotaryOperand qa, ka;
        if (q.defined())
            qo = torch::empty(q.sizes(), q.options()), qa = operand(q, qo);
        if (k.defined())
            ko = torch::empty(k.sizes(), k.options()), ka = operand(k, ko);
        rotaryApply(dtypeOf(any), qa, ka, cos.data_ptr<float>(), sin.data_ptr<float>(), any.size(0),
                    static_cast<int>(any.size(1)), static_cast<int>(any.size(2)),
                    static_cast<int>(any.size(3)), inverse, streamOf(any));
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        return {qo, ko};
    }

    static variable_list forward(AutogradContext* ctx, const torch::Tensor& q,
                                 const torch::Tensor& k, const torch::Tensor& cos0,
                                 const torch::Tensor& sin0)
    {
        const auto cos = cos0.to(torch::kFloat32).contiguous();
        const auto sin = sin0.to(torch::kFloat32).contiguous();
        ctx->save_for_backward({cos, sin});
        return run(q, k, cos, sin, false);
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads)
    {
        const auto saved = ctx->get_saved_variables();
        if (!grads[0].defined() && !grads[1].defined())
            return {torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
        auto d = run(grads[0], grads[1], saved[0], saved[1], true);
        return {d[0], d[1], torch::Tensor(), torch::Tensor()};
    }
};

}  // namespace

bool fusedApplies(const torch::Tensor& x)
{
    return kernelsBuilt() && x.is_cuda() &&
           (x.scalar_type() == torch::kFloat32 || x.scalar_type() == torch::kBFloat16);
}

bool rotaryApplies(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& cos,
                   const torch::Tensor& sin)
{
    if (!fusedApplies(q) || !k.defined() || !cos.defined() || !sin.defined())
        return false;
    if (q.dim() != 4 || q.sizes() != k.sizes() || q.scalar_type() != k.scalar_type() ||
        !k.is_cuda() || q.size(3) % 2 != 0 || q.stride(3) != 1 || k.stride(3) != 1)
        return false;
    const auto t = q.size(1), d = q.size(3);
    for (const auto* table : {&cos, &sin})
        if (table->dim() != 2 || table->size(0) != t || table->size(1) != d ||
            table->requires_grad() || table->device() != q.device())
            return false;
    return true;
}

std::pair<torch::Tensor, torch::Tensor> rotaryPair(const torch::Tensor& q, const torch::Tensor& k,
                                                   const torch::Tensor& cos,
                                                   const torch::Tensor& sin)
{
    auto out = RotaryPair::apply(q, k, cos, sin);
    return {out[0], out[1]};
}

std::pair<torch::Tensor, torch::Tensor> addRmsNorm(const torch::Tensor& a, const torch::Tensor& b,
                                                   const torch::Tensor& w, double eps)
{
    auto out = AddRmsNorm::apply(a, b, w, eps);
    return {out[0], out[1]};
}

torch::Tensor swiglu(const torch::Tensor& gate, const torch::Tensor& up)
{
    return SwiGlu::apply(gate, up);
}

#else  // built without nvcc: the callers check fusedApplies first

bool kernelsBuilt() { return false; }

bool fusedApplies(const torch::Tensor&) { return false; }

std::pair<torch::Tensor, torch::Tensor> addRmsNorm(const torch::Tensor&, const torch::Tensor&,
                                                   const torch::Tensor&, double)
{
    throw Error(ErrorKind::Internal, "this build has no device kernels (no nvcc when configured)");
}

torch::Tensor swiglu(const torch::Tensor&, const torch::Tensor&)
{
    throw Error(ErrorKind::Internal, "this build has no device kernels (no nvcc when configured)");
}

bool rotaryApplies(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                   const torch::Tensor&)
{
    return false;
}

std::pair<torch::Tensor, torch::Tensor> rotaryPair(const torch::Tensor&, const torch::Tensor&,
                                                   const torch::Tensor&, const torch::Tensor&)
{
    throw Error(ErrorKind::Internal, "this build has no device kernels (no nvcc when configured)");
}

#endif

}  // namespace lengen::engine::device
