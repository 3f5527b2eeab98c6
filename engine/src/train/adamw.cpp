#include "train/adamw.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "lengen/engine/errors.h"
#include "model/cpu_kernels.h"
#include "model/kernel_context.h"
#include "torch_compat.h"

namespace lengen::engine::training {

namespace {
// One pass of raw loops instead of eight Torch ops per parameter: at the quick size the ops'
// dispatch, not the arithmetic, was the optimiser's time (~2.3 of 31 ms per step).
bool rawCpu(const torch::Tensor& t)
{
    return t.device().is_cpu() && t.scalar_type() == torch::kFloat32 && t.is_contiguous();
}

using model::kernels::KernelContext;

// fn(i, begin, end) over the elements of buffers of `sizes` floats, laid end to end and cut into
// one contiguous share per thread of `context` (cuts at multiples of 64 floats). Element-wise
// passes give the same bits on any split; a pass under kGrain floats per thread stays on the
// caller (a quick model's ~400k parameters take two shares: 0.45 -> 0.2x ms at two threads).
void overElements(const KernelContext* context, const std::vector<std::int64_t>& sizes,
                  const std::function<void(size_t, std::int64_t, std::int64_t)>& fn)
{
    constexpr std::int64_t kGrain = 32768;
    std::int64_t total = 0;
    for (auto n : sizes)
        total += n;
    const auto share = [&](std::int64_t b, std::int64_t e) {
        std::int64_t off = 0;
        for (size_t i = 0; i < sizes.size() && off < e; off += sizes[i], ++i) {
            const auto lo = std::max(b, off), hi = std::min(e, off + sizes[i]);
            if (lo < hi)
                fn(i, lo - off, hi - off);
        }
    };
    const int nth = context ? context->slicesFor(total, kGrain) : 1;
    if (nth <= 1) {
        share(0, total);
        return;
    }
    const auto cut = [&](int k) { return k == nth ? total : total * k / nth / 64 * 64; };
    context->run(nth, [&](model::kernels::Slice sl) { share(cut(sl.ith), cut(sl.ith + 1)); });
}
}  // namespace

AdamW::AdamW(std::vector<std::pair<std::string, torch::Tensor>> params, AdamWOptions options)
    : m_params(std::move(params)), m_opt(options)
{
    for (const auto& [name, p] : m_params) {
        m_m.push_back(torch::zeros_like(p));
        m_v.push_back(torch::zeros_like(p));
    }
}

bool AdamW::deviceFused() const
{
    if (m_fused < 0) {
        bool cuda = !m_params.empty();
        for (const auto& [name, p] : m_params)
            cuda = cuda && p.is_cuda() && p.scalar_type() == torch::kFloat32;
        // The fused kernel where this LibTorch has it; 1.13 takes the loop below.
        m_fused = cuda && compat::hasFusedAdamW() ? 1 : 0;
    }
    return m_fused == 1;
}

void AdamW::beginStep(double lr)
{
    ++m_steps;
    if (!m_deviceLr.defined()) {
        const auto opt = m_params.front().second.options();
        m_deviceLr = torch::zeros({1}, opt);
        m_deviceSteps = torch::zeros({static_cast<std::int64_t>(m_params.size())}, opt);
        for (std::int64_t i = 0; i < m_deviceSteps.size(0); ++i)
            m_stepViews.push_back(m_deviceSteps.slice(0, i, i + 1).view({}));
    }
    m_deviceLr.fill_(lr);
    m_deviceSteps.fill_(static_cast<double>(m_steps));
}

void AdamW::applyStep()
{
    torch::NoGradGuard noGrad;
    std::vector<torch::Tensor> params, grads, m, v, steps;
    for (size_t i = 0; i < m_params.size(); ++i) {
        const auto& p = m_params[i].second;
        if (!p.grad().defined())
            continue;  // skipped, as torch does
        params.push_back(p);
        grads.push_back(p.grad());
        m.push_back(m_m[i]);
        v.push_back(m_v[i]);
        steps.push_back(m_stepViews[i]);
    }
    if (!params.empty() && !compat::fusedAdamW(params, grads, m, v, steps, m_deviceLr, m_opt.beta1,
                                               m_opt.beta2, m_opt.weightDecay, m_opt.eps))
        throw Error(ErrorKind::Internal, "the fused AdamW kernel is missing from this LibTorch");
}

void AdamW::step(double lr)
{
    torch::NoGradGuard noGrad;
    if (deviceFused()) {
        beginStep(lr);
        applyStep();
        return;
    }
    ++m_steps;
    const double bc1 = 1.0 - std::pow(m_opt.beta1, static_cast<double>(m_steps));
    const double bc2 = 1.0 - std::pow(m_opt.beta2, static_cast<double>(m_steps));
    const double stepSize = lr / bc1;
    const double bc2Sqrt = std::sqrt(bc2);
    std::vector<size_t> raw;  // parameters updated by the raw loop, and their sizes
    std::vector<std::int64_t> sizes;
    for (size_t i = 0; i < m_params.size(); ++i) {
        auto& p = m_params[i].second;
        const auto& g = p.grad();
        if (!g.defined())
            continue;
        if (rawCpu(p) && rawCpu(g) && rawCpu(m_m[i]) && rawCpu(m_v[i])) {
            raw.push_back(i);
            sizes.push_back(p.numel());
            continue;
        }
        if (m_opt.weightDecay != 0.0)
            p.mul_(1.0 - lr * m_opt.weightDecay);
        m_m[i].mul_(m_opt.beta1).add_(g, 1.0 - m_opt.beta1);
        m_v[i].mul_(m_opt.beta2).addcmul_(g, g, 1.0 - m_opt.beta2);
        auto denom = (m_v[i].sqrt() / bc2Sqrt).add_(m_opt.eps);
        p.addcdiv_(m_m[i], denom, -stepSize);
    }
    model::kernels::AdamWStep k;
    k.decay = static_cast<float>(1.0 - lr * m_opt.weightDecay);
    k.beta1 = static_cast<float>(m_opt.beta1);
    k.beta2 = static_cast<float>(m_opt.beta2);
    k.stepSize = static_cast<float>(stepSize);
    k.bc2Sqrt = static_cast<float>(bc2Sqrt);
    k.eps = static_cast<float>(m_opt.eps);
    overElements(m_kernels.get(), sizes, [&](size_t j, std::int64_t b, std::int64_t e) {
        const size_t i = raw[j];
        model::kernels::adamwUpdate(m_params[i].second.data_ptr<float>() + b,
                                    m_params[i].second.grad().data_ptr<float>() + b,
                                    m_m[i].data_ptr<float>() + b, m_v[i].data_ptr<float>() + b,
                                    e - b, k);
    });
}

void AdamW::zeroGrad()
{
    // Drop the gradients instead of zeroing them (PyTorch's set_to_none): one op less.
    for (auto& [name, p] : m_params)
        p.mutable_grad() = torch::Tensor();
}

double AdamW::clipGradNorm(double maxNorm, bool measure)
{
    constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();
    m_deviceNorm = torch::Tensor();
    if (maxNorm <= 0 && !measure)
        return kNotMeasured;  // clipping off: skip the norm (it costs a pass, on a GPU a sync)
    std::vector<torch::Tensor> grads;
    for (auto& [name, p] : m_params)
        if (p.grad().defined())
            grads.push_back(p.grad());
    if (grads.empty())
        return 0.0;
    const bool clip = maxNorm > 0;
    if (std::all_of(grads.begin(), grads.end(), rawCpu)) {
        // Each gradient's sum of squares whole on one thread, added in parameter order: the
        // same norm on any number of threads.
        std::vector<double> sums(grads.size());
        const int nth =
            m_kernels ? m_kernels->slicesFor(static_cast<std::int64_t>(grads.size())) : 1;
        const auto sum = [&](model::kernels::Slice sl) {
            for (size_t j = static_cast<size_t>(sl.ith); j < grads.size(); j += sl.nth)
                sums[j] =
                    model::kernels::sumOfSquares(grads[j].data_ptr<float>(), grads[j].numel());
        };
        if (nth > 1)
            m_kernels->run(nth, sum);
        else
            sum({0, 1});
        double squares = 0;
        for (double v : sums)
            squares += v;
        const double total = std::sqrt(squares);
        const double coef = maxNorm / (total + 1e-6);
        if (clip && coef < 1.0) {
            std::vector<std::int64_t> sizes;
            for (const auto& g : grads)
                sizes.push_back(g.numel());
            overElements(m_kernels.get(), sizes, [&](size_t j, std::int64_t b, std::int64_t e) {
                model::kernels::scaleInPlace(grads[j].data_ptr<float>() + b,
                                             static_cast<float>(coef), e - b);
            });
        }
        return total;
    }
    if (grads.front().is_cuda()) {
        torch::NoGradGuard noGrad;
        if (clip)
            m_deviceNorm = compat::clipGradNormOnDevice(grads, maxNorm);
        else
            m_deviceNorm = torch::stack(at::_foreach_norm(grads, 2)).norm(2);
        return measure ? m_deviceNorm.item<double>() : kNotMeasured;
    }
    std::vector<torch::Tensor> norms;
    for (const auto& g : grads)
        norms.push_back(g.norm(2));
    const double total = torch::stack(norms).norm(2).item<double>();
    const double coef = maxNorm / (total + 1e-6);
    if (clip && coef < 1.0) {
        torch::NoGradGuard noGrad;
        for (auto& g : grads)
            g.mul_(coef);
    }
    return total;
}

std::vector<double> AdamW::clipGradNormPerMember(double maxNorm, std::int64_t members, bool measure)
{
    const auto k = static_cast<size_t>(members);
    std::vector<double> norms(k, std::numeric_limits<double>::quiet_NaN());
    m_deviceNorm = torch::Tensor();
    if (maxNorm <= 0 && !measure)
        return norms;
    std::vector<torch::Tensor> grads;
    for (auto& [name, p] : m_params)
        if (p.grad().defined())
            grads.push_back(p.grad());
    if (grads.empty())
        return std::vector<double>(k, 0.0);
    const bool clip = maxNorm > 0;
    if (std::all_of(grads.begin(), grads.end(), rawCpu)) {
        // Member m's slice of every gradient: the numel / K floats from m * numel / K, summed
        // and scaled with the kernels clipGradNorm uses for one run.
        for (size_t m = 0; m < k; ++m) {
            double squares = 0;
            for (const auto& g : grads) {
                const auto n = g.numel() / members;
                squares += model::kernels::sumOfSquares(g.data_ptr<float>() + m * n, n);
            }
            norms[m] = std::sqrt(squares);
            const double coef = maxNorm / (norms[m] + 1e-6);
            if (clip && coef < 1.0)
                for (auto& g : grads) {
                    const auto n = g.numel() / members;
                    model::kernels::scaleInPlace(g.data_ptr<float>() + m * n,
                                                 static_cast<float>(coef), n);
                }
        }
        return norms;
    }
    torch::NoGradGuard noGrad;
    // Elsewhere (a GPU): float32 sums, as _foreach_norm's; one factor per member, exactly 1
    // where it is under the limit.
    torch::Tensor squares;  // [K]
    for (const auto& g : grads) {
        auto s = g.reshape({members, -1}).square().sum(1);
        squares = squares.defined() ? squares + s : s;
    }
    const auto totals = squares.sqrt();
    m_deviceNorm = totals;  // [K], read back by a graphed step at logged steps
    if (clip) {
        const auto coef = (maxNorm / (totals + 1e-6)).clamp_max(1.0).to(grads.front().dtype());
        for (auto& g : grads) {
            std::vector<std::int64_t> shape(static_cast<size_t>(g.dim()), 1);
            shape[0] = members;
            g.mul_(coef.view(shape));
        }
    }
    if (!measure)
        return norms;
    const auto host = totals.to(torch::kCPU, torch::kFloat64).contiguous();
    std::copy(host.data_ptr<double>(), host.data_ptr<double>() + members, norms.begin());
    return norms;
}

}  // namespace lengen::engine::training
