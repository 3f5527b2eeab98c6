#include "model/small_bmm.h"

#include "model/cpu_kernels.h"

namespace lengen::engine::model {

namespace {

// Row-major C[m, n] = op(A) op(B) for each batch item; A, B, C contiguous, items one after
// another.
void runBatch(const float* a, const float* b, float* c, std::int64_t items, int m, int n, int k,
              bool transA, bool transB)
{
    const int lda = transA ? m : k, ldb = transB ? k : n;
    const std::int64_t strideA = std::int64_t(m) * k, strideB = std::int64_t(k) * n,
                       strideC = std::int64_t(m) * n;
    kernels::SignalsHeld held;  // once for the items' products, not once each (cpu_kernels.h)
    for (std::int64_t i = 0; i < items; ++i)
        kernels::gemm(transA, transB, m, n, k, 1, a + i * strideA, lda, b + i * strideB, ldb, 0,
                      c + i * strideC, n);
}

torch::Tensor direct(const torch::Tensor& a, const torch::Tensor& b, bool transA, bool transB)
{
    auto ac = a.contiguous(), bc = b.contiguous();
    const auto r = ac.dim();
    const int m = static_cast<int>(transA ? ac.size(r - 1) : ac.size(r - 2));
    const int k = static_cast<int>(transA ? ac.size(r - 2) : ac.size(r - 1));
    const int n = static_cast<int>(transB ? bc.size(r - 2) : bc.size(r - 1));
    auto shape = ac.sizes().vec();
    shape[r - 2] = m;
    shape[r - 1] = n;
    auto c = torch::empty(shape, ac.options());
    const std::int64_t items = ac.numel() / (std::int64_t(m) * k);
    runBatch(ac.data_ptr<float>(), bc.data_ptr<float>(), c.data_ptr<float>(), items, m, n, k,
             transA, transB);
    return c;
}

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

class DirectBmm : public torch::autograd::Function<DirectBmm> {
public:
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& a,
                                 const torch::Tensor& b, bool transA, bool transB)
    {
        ctx->save_for_backward({a, b});
        ctx->saved_data["ta"] = transA;
        ctx->saved_data["tb"] = transB;
        return direct(a, b, transA, transB);
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list grads)
    {
        auto saved = ctx->get_saved_variables();
        const auto& a = saved[0];
        const auto& b = saved[1];
        const bool ta = ctx->saved_data["ta"].toBool(), tb = ctx->saved_data["tb"].toBool();
        auto g = grads[0].contiguous();
        // C = op(A) op(B): dop(A) = dC op(B)^T, dop(B) = op(A)^T dC; then undo the op.
        auto da = ta ? direct(b, g, tb, true) : direct(g, b, false, !tb);
        auto db = tb ? direct(g, a, true, ta) : direct(a, g, !ta, false);
        return {da, db, torch::Tensor(), torch::Tensor()};
    }
};

}  // namespace

bool hasDirectBlas() { return kernels::hasBlas(); }

torch::Tensor batchedMatmul(const torch::Tensor& a, const torch::Tensor& b, bool transA,
                            bool transB)
{
    if (!hasDirectBlas() || !a.device().is_cpu() || a.scalar_type() != torch::kFloat32 ||
        b.scalar_type() != torch::kFloat32) {
        return torch::matmul(transA ? a.transpose(-2, -1) : a, transB ? b.transpose(-2, -1) : b);
    }
    return DirectBmm::apply(a, b, transA, transB);
}

}  // namespace lengen::engine::model
