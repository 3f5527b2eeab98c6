#include "model/selective_scan.h"

#include <vector>

#include "model/cpu_scan.h"
#include "model/fused_common.h"

namespace lengen::engine::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

namespace k = kernels;

k::ScanShape shapeOf(const tensor_list& in)
{
    return {in[0].size(0), static_cast<int>(in[0].size(1)), static_cast<int>(in[0].size(2)),
            static_cast<int>(in[2].size(1))};
}

k::ScanInputs inputsOf(const tensor_list& in)
{
    return {in[0].data_ptr<float>(), in[1].data_ptr<float>(), in[2].data_ptr<float>(),
            in[3].data_ptr<float>(), in[4].data_ptr<float>(), in[5].data_ptr<float>()};
}

class SelectiveScanFunction : public torch::autograd::Function<SelectiveScanFunction> {
public:
    // The batch items in slices over the context's threads; each slice sums its own dA and dD,
    // added in slice order after (results depend on the slice count, never on timing).
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& v,
                                 const torch::Tensor& delta, const torch::Tensor& A,
                                 const torch::Tensor& Bm, const torch::Tensor& Cm,
                                 const torch::Tensor& D, const k::KernelContext* context)
    {
        tensor_list in = {v.contiguous(), delta.contiguous(), A.contiguous(),
                          Bm.contiguous(), Cm.contiguous(), D.contiguous()};
        auto y = torch::empty_like(in[0]);
        const auto shape = shapeOf(in);
        context->run(context->slicesFor(shape.b), [&](k::Slice sl) {
            k::scanForward(shape, inputsOf(in), y.data_ptr<float>(), sl);
        });
        ctx->save_for_backward(in);
        fused::keepContext(ctx, *context);
        return y;
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list gradOut)
    {
        auto in = ctx->get_saved_variables();
        auto gy = gradOut[0].contiguous();
        const auto& context = fused::keptContext(ctx);
        const auto shape = shapeOf(in);
        tensor_list g;
        for (const auto& t : in)
            g.push_back(torch::empty_like(t));
        const int nth = context.slicesFor(shape.b);
        // Per slice: dA [E, N] and dD [E], zeroed (the kernel adds to them).
        const std::int64_t na = in[2].numel(), width = na + in[5].numel();
        auto sums = torch::zeros({nth, width}, in[2].options());
        context.run(nth, [&](k::Slice sl) {
            float* dA = sums.data_ptr<float>() + sl.ith * width;
            k::scanBackward(shape, inputsOf(in), gy.data_ptr<float>(),
                            {g[0].data_ptr<float>(), g[1].data_ptr<float>(), dA,
                             g[3].data_ptr<float>(), g[4].data_ptr<float>(), dA + na},
                            sl);
        });
        auto total = sums[0];
        for (int i = 1; i < nth; ++i)
            total += sums[i];
        g[2] = total.slice(0, 0, na).view_as(in[2]).clone();
        g[5] = total.slice(0, na).view_as(in[5]).clone();
        g.push_back(torch::Tensor());  // the context
        return g;
    }
};

}  // namespace

torch::Tensor selectiveScanNaive(const torch::Tensor& v, const torch::Tensor& delta,
                                 const torch::Tensor& A, const torch::Tensor& Bm,
                                 const torch::Tensor& Cm, const torch::Tensor& D)
{
    auto s = torch::zeros({v.size(0), v.size(2), A.size(1)}, v.options());  // [B, E, N]
    std::vector<torch::Tensor> ys;
    for (std::int64_t t = 0; t < v.size(1); ++t) {
        auto dt = delta.select(1, t).unsqueeze(-1);                          // [B, E, 1]
        auto vt = v.select(1, t);                                            // [B, E]
        s = torch::exp(dt * A) * s + dt * Bm.select(1, t).unsqueeze(1) * vt.unsqueeze(-1);
        ys.push_back((s * Cm.select(1, t).unsqueeze(1)).sum(-1) + D * vt);
    }
    return torch::stack(ys, 1);
}

torch::Tensor selectiveScan(const kernels::KernelContext& context, const torch::Tensor& v,
                            const torch::Tensor& delta, const torch::Tensor& A,
                            const torch::Tensor& Bm, const torch::Tensor& Cm,
                            const torch::Tensor& D)
{
    const bool kernel = v.device().is_cpu() && v.scalar_type() == torch::kFloat32;
    return kernel ? SelectiveScanFunction::apply(v, delta, A, Bm, Cm, D, &context)
                  : selectiveScanNaive(v, delta, A, Bm, Cm, D);
}

}  // namespace lengen::engine::model
