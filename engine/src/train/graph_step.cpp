#include "train/graph_step.h"

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
    // Randomized positions change the position tensors every step: no fixed graph holds them.
    // GPT-2's dropout is captured: its masks come from the device's generator, whose seed each
    // replay reads (Gpt2Impl::seedDeviceDropout).
    return s.device.is_cuda() && s.switches.cudaGraphs && s.optimizer->deviceFused() &&
           s.config.training.randomPositions == 0;
}

struct StepGraph::Impl {
    c10::cuda::CUDAStream stream;
    std::unique_ptr<at::cuda::CUDAGraph> graph;
    std::vector<std::int64_t> shape;  // the inputs' sizes of the current graph
    int warm = 0;                     // eager steps done at this shape

    explicit Impl(torch::Device device)
        : stream(c10::cuda::getStreamFromPool(false, device.index()))
    {}
};

StepGraph::StepGraph(torch::Device device) : m(std::make_unique<Impl>(device))
{
    compat::synchronize(device);
}

StepGraph::~StepGraph() = default;

void StepGraph::run(const std::vector<std::int64_t>& shape, AdamW& optimizer, double lr,
                    c10::function_ref<void(bool)> fill, c10::function_ref<void()> body,
                    c10::function_ref<void()> done)
{
    auto& g = *m;
    c10::cuda::CUDAStreamGuard guard(g.stream);
    const bool newShape = shape != g.shape;
    if (newShape) {  // a new curriculum shape: start over
        g.graph.reset();
        optimizer.zeroGrad();  // the gradients lived in the old graph's pool
        g.shape = shape;
        g.warm = 0;
    }
    fill(newShape);
    optimizer.beginStep(lr);  // lr and step count into device tensors, outside the graph
    if (g.warm < kWarmSteps) {
        optimizer.zeroGrad();
        body();
        ++g.warm;
    } else if (!g.graph) {
        // Gradients undefined, so the captured backward allocates them in the graph's pool
        // and every replay writes them afresh (no accumulation, no zeroing kernels).
        optimizer.zeroGrad();
        g.graph = std::make_unique<at::cuda::CUDAGraph>();
        g.graph->capture_begin();
        body();
        g.graph->capture_end();
        g.graph->replay();  // the capture only recorded this step
    } else {
        g.graph->replay();
    }
    done();
}

#else  // a LibTorch without CUDA

bool graphsApply(const TrainSession&) { return false; }

struct StepGraph::Impl {};

StepGraph::StepGraph(torch::Device)
{
    throw Error(ErrorKind::Runtime, "CUDA graphs need a LibTorch built with CUDA");
}

StepGraph::~StepGraph() = default;

void StepGraph::run(const std::vector<std::int64_t>&, AdamW&, double, c10::function_ref<void(bool)>,
                    c10::function_ref<void()>, c10::function_ref<void()>)
{}

#endif

GraphedStep::GraphedStep(TrainSession& s) : m_s(s), m_graph(s.device) {}

GraphedStep::~GraphedStep() = default;

StepResult GraphedStep::run(const torch::Tensor& xs, const torch::Tensor& ys, double lr,
                            double maxNorm, const std::function<void()>& meanwhile)
{
    const auto fill = [&](bool newShape) {
        if (newShape) {
            m_xs = torch::empty(xs.sizes(), xs.options().device(m_s.device));
            m_ys = torch::empty(ys.sizes(), ys.options().device(m_s.device));
        }
        m_xs.copy_(xs);
        m_ys.copy_(ys);
    };
    // forward, loss, backward, clipping, update: what the graph holds.
    const auto body = [&] {
        std::tie(m_pred, m_loss) = forwardLoss(m_s, m_xs, m_ys);
        m_loss.backward();
        m_s.optimizer->clipGradNorm(maxNorm);  // on the device, no synchronisation: capturable
        m_gradNorm = m_s.optimizer->deviceNorm();
        m_s.optimizer->applyStep();
        m_pred = m_pred.detach();
        m_loss = m_loss.detach();
    };
    double loss = 0;
    m_graph.run(xs.sizes().vec(), *m_s.optimizer, lr, fill, body, [&] {
        if (meanwhile)  // the replay is queued; the host draws while the device computes
            meanwhile();
        loss = m_loss.item<double>();
    });
    return {loss, m_pred, m_gradNorm};
}

}  // namespace lengen::engine::training
