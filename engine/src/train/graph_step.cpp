#include "train/graph_step.h"

#include <cstdlib>
#include <cstring>
#include <tuple>

#include "lengen/engine/errors.h"
#include "torch_compat.h"

#ifdef LENGEN_TORCH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace lengen::engine::training {

#ifdef LENGEN_TORCH_CUDA

namespace {
constexpr int kWarmSteps = 2;  // eager steps per shape before the capture (fills the caches)
}  // namespace

bool graphsApply(const TrainSession& s)
{
    const auto& m = s.config.model;
    const bool dropout = m.backbone == Backbone::Gpt2 &&
                         (m.residDropout > 0 || m.embdDropout > 0 || m.attnDropout > 0);
    // Randomized positions change the position tensors every step: no fixed graph holds them.
    return s.device.is_cuda() && s.switches.cudaGraphs && !dropout && s.optimizer->deviceFused() &&
           s.config.training.randomPositions == 0;
}

struct GraphedStep::Impl {
    TrainSession& s;
    c10::cuda::CUDAStream stream;
    std::unique_ptr<at::cuda::CUDAGraph> graph;
    std::vector<std::int64_t> shape;  // xs sizes of the current graph
    int warm = 0;                     // eager steps done at this shape
    torch::Tensor xs, ys;             // the graph's inputs [B, N, D], [B, N]
    torch::Tensor pred, loss;         // its outputs [B, N], []
    torch::Tensor gradNorm;           // [] before clipping; undefined when clipping is off

    explicit Impl(TrainSession& session)
        : s(session), stream(c10::cuda::getStreamFromPool(false, session.device.index()))
    {}

    // forward, loss, backward, clipping, update: what the graph holds.
    void body(double maxNorm)
    {
        std::tie(pred, loss) = forwardLoss(s, xs, ys);
        loss.backward();
        s.optimizer->clipGradNorm(maxNorm);  // on the device, no synchronisation: capturable
        gradNorm = s.optimizer->deviceNorm();
        s.optimizer->applyStep();
        pred = pred.detach();
        loss = loss.detach();
    }
};

GraphedStep::GraphedStep(TrainSession& s) : m(std::make_unique<Impl>(s))
{
    // The graph's stream starts after everything queued so far (weights, optimiser state).
    compat::synchronize(s.device);
}

GraphedStep::~GraphedStep() = default;

StepResult GraphedStep::run(const torch::Tensor& xs, const torch::Tensor& ys, double lr,
                            double maxNorm)
{
    auto& g = *m;
    c10::cuda::CUDAStreamGuard guard(g.stream);
    if (xs.sizes().vec() != g.shape) {  // a new curriculum shape: start over
        g.graph.reset();
        g.s.optimizer->zeroGrad();  // the gradients lived in the old graph's pool
        g.shape = xs.sizes().vec();
        g.warm = 0;
        g.xs = torch::empty(xs.sizes(), xs.options().device(g.s.device));
        g.ys = torch::empty(ys.sizes(), ys.options().device(g.s.device));
    }
    g.xs.copy_(xs);
    g.ys.copy_(ys);
    g.s.optimizer->beginStep(lr);  // lr and step count into device tensors, outside the graph
    if (g.warm < kWarmSteps) {
        g.s.optimizer->zeroGrad();
        g.body(maxNorm);
        ++g.warm;
    } else if (!g.graph) {
        // Gradients undefined, so the captured backward allocates them in the graph's pool
        // and every replay writes them afresh (no accumulation, no zeroing kernels).
        g.s.optimizer->zeroGrad();
        g.graph = std::make_unique<at::cuda::CUDAGraph>();
        g.graph->capture_begin();
        g.body(maxNorm);
        g.graph->capture_end();
        g.graph->replay();  // the capture only recorded this step
    } else {
        g.graph->replay();
    }
    return {g.loss.item<double>(), g.pred, g.gradNorm};
}

#else  // a LibTorch without CUDA

bool graphsApply(const TrainSession&) { return false; }

struct GraphedStep::Impl {};

GraphedStep::GraphedStep(TrainSession&)
{
    throw Error(ErrorKind::Runtime, "CUDA graphs need a LibTorch built with CUDA");
}

GraphedStep::~GraphedStep() = default;

StepResult GraphedStep::run(const torch::Tensor&, const torch::Tensor&, double, double)
{
    return {};
}

#endif

}  // namespace lengen::engine::training
