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

#include <memory>

#include "train/train_loop.h"

namespace lengen::engine::training {

/// Whether `s` can train through CUDA graphs: a CUDA device, a LibTorch with graphs and the
/// fused AdamW (PyTorch 2.x with CUDA), no dropout (its masks come from the CPU generator), and
/// LENGEN_CUDA_GRAPHS not set to 0.
bool graphsApply(const TrainSession& s);

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
    /// rate `lr`, with the gradients clipped to `maxNorm` (<= 0: not clipped).
    StepResult run(const torch::Tensor& xs, const torch::Tensor& ys, double lr, double maxNorm);

    struct Impl;

private:
    std::unique_ptr<Impl> m;
};

}  // namespace lengen::engine::training
