#include "model/selective_scan.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <vector>

namespace lengen::engine::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// Raw views of the contiguous float32 inputs. Index helpers follow the tensor shapes.
struct ScanArgs {
    std::int64_t b, t, e, n;
    const float *v, *delta, *A, *B, *C, *D;
};

void scanForward(const ScanArgs& a, float* y)
{
    // One task per batch row; channels inside, so B_t/C_t rows stay hot in cache.
    at::parallel_for(0, a.b, 1, [&](std::int64_t b0, std::int64_t b1) {
        std::vector<float> s(static_cast<size_t>(a.n));
        for (std::int64_t b = b0; b < b1; ++b)
            for (std::int64_t c = 0; c < a.e; ++c) {
                std::fill(s.begin(), s.end(), 0.f);
                const float* A = a.A + c * a.n;
                for (std::int64_t t = 0; t < a.t; ++t) {
                    const std::int64_t bt = b * a.t + t;
                    const float dt = a.delta[bt * a.e + c], vt = a.v[bt * a.e + c];
                    const float* Bt = a.B + bt * a.n;
                    const float* Ct = a.C + bt * a.n;
                    float out = 0.f;
                    for (std::int64_t k = 0; k < a.n; ++k) {
                        s[k] = std::exp(dt * A[k]) * s[k] + dt * Bt[k] * vt;
                        out += s[k] * Ct[k];
                    }
                    y[bt * a.e + c] = out + a.D[c] * vt;
                }
            }
    });
}

struct ScanGrads {
    float *v, *delta, *A, *B, *C, *D;
};

// Reverse-mode pass for one batch row at a time (dB, dC sum over channels; dA, dD over rows,
// so each batch row accumulates into its own slice of per-row buffers, reduced afterwards).
void scanBackward(const ScanArgs& a, const float* gy, ScanGrads g, float* dAPerRow,
                  float* dDPerRow)
{
    at::parallel_for(0, a.b, 1, [&](std::int64_t b0, std::int64_t b1) {
        std::vector<float> states(static_cast<size_t>(a.t * a.n));  // s_t for one row
        std::vector<float> gs(static_cast<size_t>(a.n));
        for (std::int64_t b = b0; b < b1; ++b) {
            float* dA = dAPerRow + b * a.e * a.n;
            float* dD = dDPerRow + b * a.e;
            for (std::int64_t c = 0; c < a.e; ++c) {
                const float* A = a.A + c * a.n;
                // Recompute this row's states.
                for (std::int64_t t = 0; t < a.t; ++t) {
                    const std::int64_t bt = b * a.t + t;
                    const float dt = a.delta[bt * a.e + c], vt = a.v[bt * a.e + c];
                    const float* Bt = a.B + bt * a.n;
                    const float* prev = t > 0 ? &states[static_cast<size_t>((t - 1) * a.n)] : nullptr;
                    float* cur = &states[static_cast<size_t>(t * a.n)];
                    for (std::int64_t k = 0; k < a.n; ++k)
                        cur[k] = std::exp(dt * A[k]) * (prev ? prev[k] : 0.f) + dt * Bt[k] * vt;
                }
                std::fill(gs.begin(), gs.end(), 0.f);
                for (std::int64_t t = a.t - 1; t >= 0; --t) {
                    const std::int64_t bt = b * a.t + t, i = bt * a.e + c;
                    const float dt = a.delta[i], vt = a.v[i], gyt = gy[i];
                    const float* Bt = a.B + bt * a.n;
                    const float* Ct = a.C + bt * a.n;
                    const float* cur = &states[static_cast<size_t>(t * a.n)];
                    const float* prev = t > 0 ? &states[static_cast<size_t>((t - 1) * a.n)] : nullptr;
                    float* dBt = g.B + bt * a.n;
                    float* dCt = g.C + bt * a.n;
                    dD[c] += gyt * vt;
                    float dv = gyt * a.D[c], ddt = 0.f;
                    for (std::int64_t k = 0; k < a.n; ++k) {
                        dCt[k] += gyt * cur[k];
                        const float gk = gs[k] + gyt * Ct[k];  // dL/ds_t
                        const float decay = std::exp(dt * A[k]);
                        const float sPrev = prev ? prev[k] : 0.f;
                        ddt += gk * (A[k] * decay * sPrev + Bt[k] * vt);
                        dA[c * a.n + k] += gk * dt * decay * sPrev;
                        dBt[k] += gk * dt * vt;
                        dv += gk * dt * Bt[k];
                        gs[k] = gk * decay;  // carried to s_{t-1}
                    }
                    g.v[i] = dv;
                    g.delta[i] = ddt;
                }
            }
        }
    });
}

ScanArgs argsOf(const tensor_list& in)
{
    return {in[0].size(0), in[0].size(1), in[0].size(2), in[2].size(1),
            in[0].data_ptr<float>(), in[1].data_ptr<float>(), in[2].data_ptr<float>(),
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
        scanForward(argsOf(in), y.data_ptr<float>());
        ctx->save_for_backward(in);
        return y;
    }

    static tensor_list backward(AutogradContext* ctx, tensor_list gradOut)
    {
        auto in = ctx->get_saved_variables();
        const ScanArgs a = argsOf(in);
        auto gy = gradOut[0].contiguous();
        auto dv = torch::empty_like(in[0]), ddelta = torch::empty_like(in[1]);
        auto dB = torch::zeros_like(in[3]), dC = torch::zeros_like(in[4]);
        auto dAPerRow = torch::zeros({a.b, a.e, a.n}, in[2].options());
        auto dDPerRow = torch::zeros({a.b, a.e}, in[5].options());
        scanBackward(a, gy.data_ptr<float>(),
                     {dv.data_ptr<float>(), ddelta.data_ptr<float>(), nullptr,
                      dB.data_ptr<float>(), dC.data_ptr<float>(), nullptr},
                     dAPerRow.data_ptr<float>(), dDPerRow.data_ptr<float>());
        return {dv, ddelta, dAPerRow.sum(0), dB, dC, dDPerRow.sum(0)};
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
