#pragma once
// AdamW with decoupled weight decay, written out so its whole state is plain tensors that the
// run file can store and restore exactly. Same update as torch.optim.AdamW (single-tensor
// path): p *= 1 - lr*wd; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
// p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
// Parameters without a gradient (none in our models) are skipped, as torch does.

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace lengen::engine::model::kernels {
class KernelContext;
}

namespace lengen::engine::training {

struct AdamWOptions {
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weightDecay = 0.0;
};

class AdamW {
public:
    AdamW(std::vector<std::pair<std::string, torch::Tensor>> params, AdamWOptions options);
    /// The session's CPU threads: the update and the gradient norm split their passes over
    /// them (the same bits on any split). Null: the calling thread.
    void setKernelContext(std::shared_ptr<const model::kernels::KernelContext> context)
    {
        m_kernels = std::move(context);
    }
    void step(double lr);
    /// step() in two halves for a GPU and CUDA graphs: beginStep counts the step and writes lr
    /// and the count into device tensors (outside a graph); applyStep runs the fused update
    /// (capturable). Only where deviceFused().
    bool deviceFused() const;
    void beginStep(double lr);
    void applyStep();
    void zeroGrad();  ///< sets gradients to undefined
    /// Scales all gradients to L2 norm `maxNorm` when above (maxNorm <= 0: no clipping) and
    /// returns their norm before clipping, as torch.nn.utils.clip_grad_norm_ does. The norm is
    /// NaN when it was not computed: clipping off and `measure` false (a norm costs a pass over
    /// the gradients), or on a GPU without `measure` (reading it back synchronises). On a GPU
    /// the norm as a device tensor [] stays in deviceNorm() until the next call.
    double clipGradNorm(double maxNorm, bool measure = false);
    const torch::Tensor& deviceNorm() const { return m_deviceNorm; }
    /// clipGradNorm for K models stacked along each parameter's first dimension (members,
    /// train/member_loop.h): each member's norm over its own slices, each member scaled alone,
    /// bit for bit what clipGradNorm gives that member alone on the CPU. [K] norms before
    /// clipping, NaN where not measured (clipping off and `measure` false; on a GPU, `measure`
    /// false: reading them back synchronises). On a GPU the norms as a device tensor [K] stay
    /// in deviceNorm() until the next call (undefined when not computed).
    std::vector<double> clipGradNormPerMember(double maxNorm, std::int64_t members, bool measure);

    std::int64_t stepCount() const { return m_steps; }
    void setStepCount(std::int64_t steps) { m_steps = steps; }
    const std::vector<std::pair<std::string, torch::Tensor>>& params() const { return m_params; }
    std::vector<torch::Tensor>& expAvg() { return m_m; }
    std::vector<torch::Tensor>& expAvgSq() { return m_v; }

private:
    std::vector<std::pair<std::string, torch::Tensor>> m_params;
    std::vector<torch::Tensor> m_m, m_v;
    AdamWOptions m_opt;
    std::shared_ptr<const model::kernels::KernelContext> m_kernels;
    std::int64_t m_steps = 0;
    // GPU: lr [1] and the step count [P] (one element per parameter, as the fused kernel
    // takes them) on the device, created at the first device step.
    torch::Tensor m_deviceLr, m_deviceSteps;
    std::vector<torch::Tensor> m_stepViews;
    torch::Tensor m_deviceNorm;  ///< [] the last device clipping's norm (undefined if none)
    mutable int m_fused = -1;    ///< -1 unknown, 0 no, 1 yes (deviceFused, decided once)
};

}  // namespace lengen::engine::training
