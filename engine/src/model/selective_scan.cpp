#include "model/selective_scan.h"

#include <vector>

#include "model/cpu_scan.h"
#include "model/fused_common.h"
#include "model/parallel_scan.h"

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
        tensor_list in = {v.contiguous(),  delta.contiguous(), A.contiguous(),
                          Bm.contiguous(), Cm.contiguous(),    D.contiguous()};
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
        tensor_list g(in.size() + 1);        // one per input, the context's left undefined
        for (const size_t i : {0, 1, 3, 4})  // dA and dD (2, 5): the per-slice sums below
            g[i] = torch::empty_like(in[i]);
        // Per slice its own dA [E, N] and dD [E], zeroed: the kernel adds to them.
        const int nth = context.slicesFor(shape.b);
        fused::PartSums dA(nth, in[2].sizes(), in[2].options(), true),
            dD(nth, in[5].sizes(), in[5].options(), true);
        context.run(nth, [&](k::Slice sl) {
            k::scanBackward(shape, inputsOf(in), gy.data_ptr<float>(),
                            {g[0].data_ptr<float>(), g[1].data_ptr<float>(), dA.at(sl.ith),
                             g[3].data_ptr<float>(), g[4].data_ptr<float>(), dD.at(sl.ith)},
                            sl);
        });
        g[2] = dA.total();
        g[5] = dD.total();
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
        auto dt = delta.select(1, t).unsqueeze(-1);  // [B, E, 1]
        auto vt = v.select(1, t);                    // [B, E]
        s = torch::exp(dt * A) * s + dt * Bm.select(1, t).unsqueeze(1) * vt.unsqueeze(-1);
        ys.push_back((s * Cm.select(1, t).unsqueeze(1)).sum(-1) + D * vt);
    }
    return torch::stack(ys, 1);
}

torch::Tensor selectiveScan(const kernels::KernelContext& context, const torch::Tensor& v,
                            const torch::Tensor& delta, const torch::Tensor& A,
                            const torch::Tensor& Bm, const torch::Tensor& Cm,
                            const torch::Tensor& D, bool parallel)
{
    if (v.device().is_cpu() && v.scalar_type() == torch::kFloat32)
        return SelectiveScanFunction::apply(v, delta, A, Bm, Cm, D, &context);
    return parallel ? selectiveScanParallel(v, delta, A, Bm, Cm, D)
                    : selectiveScanNaive(v, delta, A, Bm, Cm, D);
}

}  // namespace lengen::engine::model
