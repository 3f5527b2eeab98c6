#pragma once
// The training step on a GPU as one CUDA graph: forward, loss, backward, gradient clipping and
// the fused AdamW update, captured once per prompt length and replayed. At the reference's
// sizes a step is a few thousand small kernels whose launch cost on the host, not the GPU's
// arithmetic, set the pace (16 steps/s eager at N = 11 on an H100, docs/gpu.md).
//
// Per shape: two eager steps on the graph's stream (they fill every cache the forward keeps:
// causal mask, rotary tables, ALiBi bias), then a capture and from then on replays. The data
// stays sampled on the CPU from the run's generator and is copied into the graph's inputs, so
// a graphed run draws the same prompts as an eager one.

#include <c10/util/FunctionRef.h>

#include <functional>
#include <memory>

#include "train/train_loop.h"

namespace lengen::engine::training {

/// Whether `s` can train through CUDA graphs: a CUDA device, a LibTorch with graphs and the
/// fused AdamW (PyTorch 2.x with CUDA), fixed positions, and LENGEN_CUDA_GRAPHS not set to 0.
bool graphsApply(const TrainSession& s);

/// The capture protocol that one run's step (GraphedStep) and the members' step
/// (member_loop.cpp) share: per input shape, warm-up steps run eagerly on the graph's stream,
/// then one is captured, then the graph is replayed.
class StepGraph {
public:
    /// Synchronises `device` first: the graph's stream starts after everything queued so far
    /// (weights, optimiser state).
    explicit StepGraph(torch::Device device);
    ~StepGraph();
    StepGraph(const StepGraph&) = delete;
    StepGraph& operator=(const StepGraph&) = delete;

    /// One step on inputs of `shape`. On the graph's stream: `fill(newShape)` copies the step's
    /// inputs into the caller's buffers (newShape: the shape changed, the caller allocates them
    /// first; the old graph and its gradients are gone); then `optimizer` takes `lr`; then
    /// `body` (forward, backward, clipping, optimizer.applyStep) runs eagerly, is captured, or
    /// its graph is replayed. The gradients are undefined when an eager or captured body
    /// starts. `done` runs last on the graph's stream (reading outputs back synchronises it).
    void run(const std::vector<std::int64_t>& shape, AdamW& optimizer, double lr,
             c10::function_ref<void(bool newShape)> fill, c10::function_ref<void()> body,
             c10::function_ref<void()> done);

    struct Impl;

private:
    std::unique_ptr<Impl> m;
};

struct StepResult {
    double loss = 0;         ///< synchronised: the step is complete when run() returns
    torch::Tensor pred;      ///< [B, N] on the device; valid until the next run()
    torch::Tensor gradNorm;  ///< [] norm before clipping, as pred; undefined if not clipped
};

class GraphedStep {
public:
    explicit GraphedStep(TrainSession& s);
    ~GraphedStep();
    GraphedStep(const GraphedStep&) = delete;
    GraphedStep& operator=(const GraphedStep&) = delete;

    /// One optimisation step on prompts xs [B, N, D], ys [B, N] (CPU or device) at learning
    /// rate `lr`, with the gradients clipped to `maxNorm` (<= 0: not clipped). `meanwhile`
    /// (when set) runs on the host after the step is launched and before its loss is read
    /// back: the next batch is drawn while the device works.
    StepResult run(const torch::Tensor& xs, const torch::Tensor& ys, double lr, double maxNorm,
                   const std::function<void()>& meanwhile = {});

private:
    TrainSession& m_s;
    StepGraph m_graph;
    torch::Tensor m_xs, m_ys;      // the graph's inputs [B, N, D], [B, N]
    torch::Tensor m_pred, m_loss;  // its outputs [B, N], []
    torch::Tensor m_gradNorm;      // [] before clipping; undefined when clipping is off
};

}  // namespace lengen::engine::training
