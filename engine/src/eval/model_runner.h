#pragma once
// A run's trained model, loaded for evaluation and probes, and a forward that keeps within a
// memory budget: prompts go through in micro-batches, and when even one prompt's attention
// scores exceed the budget, query rows are computed a block at a time. Results are the same
// as one big forward (per-prompt computations are independent).

#include <torch/torch.h>

#include <string>

#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/run_file.h"
#include "model/icl_model.h"

namespace lengen::engine::eval {

struct LoadedRun {
    std::string runFile;
    RunFileInfo info;
    RunConfig config;
    /// The evaluation's CPU threads, the model's kernel policy holds them (train/threads.h).
    std::shared_ptr<const model::kernels::KernelContext> kernels;
    model::InContextModel model{nullptr};
    torch::Device device{torch::kCPU};
    std::int64_t checkpointStep = 0;
};

/// Builds the run's model from its stored config and loads the latest checkpoint, in eval
/// mode on the requested device. Error(RunFile) when the run has no checkpoint.
LoadedRun loadRun(const std::string& run, const AnalysisOptions& options);

struct ForwardPlan {
    std::int64_t microBatch = 1;  ///< prompts per forward
    std::int64_t queryChunk = 0;  ///< attention query rows per block (0 = all)
    double bytesPerPrompt = 0;    ///< the estimate the plan was made from
};

/// Largest micro-batch (up to `batch`) whose estimated peak memory at `tokens` tokens fits
/// `budgetBytes`; past one prompt, the query chunk that fits.
ForwardPlan planForward(const RunConfig& config, std::int64_t batch, std::int64_t tokens,
                        double budgetBytes, bool gpu = false);

/// The forward's budget in bytes for `--memory-budget` MiB (<= 0: automatic). On the CPU the
/// automatic budget is 2 GiB; on a GPU it is half the device memory free now, and an explicit
/// budget is capped there too (the planner's estimate leaves out the allocator's slack).
double forwardBudgetBytes(const torch::Device& device, double requestedMiB);

/// Model predictions [B, N] (CPU float32) for xs [B, N, D], ys [B, N] (CPU), following `plan`,
/// optionally under a forward-level intervention (eval/interventions.h for all of them).
torch::Tensor predict(LoadedRun& run, const torch::Tensor& xs, const torch::Tensor& ys,
                      const ForwardPlan& plan, const model::Intervention* edit = nullptr);

/// Run display name as the reference's legends write it ("RoPE", "ALiBi", "Mamba", ...).
std::string modelKey(const RunConfig& config);

}  // namespace lengen::engine::eval
