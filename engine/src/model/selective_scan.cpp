#include "model/selective_scan.h"

#include <vector>

#include "model/cpu_scan.h"

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
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& v,
                                 const torch::Tensor& delta, const torch::Tensor& A,
                                 const torch::Tensor& Bm, const torch::Tensor& Cm,
                                 const torch::Tensor& D)
    {
        tensor_list in = {v.contiguous(), delta.contiguous(), A.contiguous(),
                          Bm.contiguous(), Cm.contiguous(), D.contiguous()};
        auto y = torch::empty_like(in[0]);
        k::scanForward(shapeOf(in), inputsOf(in), y.data_ptr<float>());
        ctx->save_for_backward(in);
        return y;
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list gradOut)
    {
        auto in = ctx->get_saved_variables();
        auto gy = gradOut[0].contiguous();
        tensor_list g;
        for (const auto& t : in)
            g.push_back(torch::empty_like(t));
        k::scanBackward(shapeOf(in), inputsOf(in), gy.data_ptr<float>(),
                        {g[0].data_ptr<float>(), g[1].data_ptr<float>(), g[2].data_ptr<float>(),
                         g[3].data_ptr<float>(), g[4].data_ptr<float>(), g[5].data_ptr<float>()});
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

torch::Tensor selectiveScan(const torch::Tensor& v, const torch::Tensor& delta,
                            const torch::Tensor& A, const torch::Tensor& Bm,
                            const torch::Tensor& Cm, const torch::Tensor& D)
{
    const bool kernel = v.device().is_cpu() && v.scalar_type() == torch::kFloat32;
    return kernel ? SelectiveScanFunction::apply(v, delta, A, Bm, Cm, D)
                  : selectiveScanNaive(v, delta, A, Bm, Cm, D);
}

}  // namespace lengen::engine::model
