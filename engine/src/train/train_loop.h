#pragma once
// The state of one training run in memory and the loop that advances it (reference §5.6).
// Everything a checkpoint must restore lives in TrainSession.

#include <memory>
#include <torch/torch.h>
#include <utility>

#include "data/tasks.h"
#include "io/run_store.h"
#include "lengen/engine/config.h"
#include "lengen/engine/observer.h"
#include "lengen/engine/run_control.h"
#include "model/icl_model.h"
#include "torch_compat.h"
#include "train/adamw.h"

namespace lengen::engine::training {

struct TrainSession {
    RunConfig config;
    torch::Device device{torch::kCPU};
    compat::Precision precision = compat::Precision::Fp32;  ///< matrix products on a GPU
    SessionSwitches switches;  ///< layer path, CUDA graphs (lengen/engine/session.h)
    /// This session's CPU threads (train/threads.h), handed to the model's kernel policy;
    /// null: one thread. Declared before the model, so it outlives it.
    std::shared_ptr<const model::kernels::KernelContext> kernels;
    model::InContextModel model{nullptr};
    std::unique_ptr<AdamW> optimizer;
    std::unique_ptr<data::TaskSampler> sampler;
    at::Generator gen;  ///< the run's only source of randomness (CPU)
    /// With the next batch drawn ahead (SessionSwitches::prefetchBatch): `gen`'s state before
    /// those draws, what a checkpoint after this step saves; undefined otherwise.
    torch::Tensor genBeforeAhead;
    std::int64_t stepsDone = 0;  ///< completed optimisation steps
    double wallOffset = 0;       ///< training seconds before this process (resume)
    std::unique_ptr<io::RunWriter> writer;
    RunStarted started;
};

/// Builds model, optimiser and sampler for `config` on `device`; initialises the weights from
/// a generator seeded with `seed` (which then drives the data). The model computes under
/// chooseKernelPolicy(device, s.kernels, s.switches) (model/kernel_policy.h).
void setupSession(TrainSession& s, const RunConfig& config, std::uint64_t seed,
                  const std::string& device);

/// AdamW's settings from a run config (setupSession's, and the members' stacked optimiser's).
AdamWOptions adamwOptions(const RunConfig& config);

/// Forward and loss of one batch under the session's precision (bf16 autocast on a GPU):
/// pred [B, N], loss [] float32. The one definition the eager loop, the graphed step and
/// bench_step share.
std::pair<torch::Tensor, torch::Tensor> forwardLoss(TrainSession& s, const torch::Tensor& xs,
                                                    const torch::Tensor& ys,
                                                    const torch::Tensor& positions = {});

/// One step's prompts from the run's generator, in the order every path draws them (B fresh
/// functions, then their xs): xs [B, N, D], ys [B, N] on the CPU. The single run, the members
/// and bench_step share it, so they draw the same prompts.
std::pair<torch::Tensor, torch::Tensor> drawPrompts(TrainSession& s, int nDims, int nPoints);

/// Randomized positions (Ruoss et al. 2023): `tokens` distinct positions of 0..range-1,
/// uniform over the subsets, ascending, int64 [tokens] on the CPU, drawn from `gen` (Floyd's
/// sampling: `tokens` draws whatever the range).
torch::Tensor drawPositions(at::Generator& gen, std::int64_t tokens, std::int64_t range);

/// Learning rate at scheduler step k: linear warm-up to the peak over warmupSteps(), then
/// linear decay to 0 at max_steps. k = 0 gives 0, as in the reference (§9.16).
double learningRateAt(const RunConfig& config, std::int64_t k);

/// mean_i max(d_t - i, 0) over i < N: least squares' expected error on noiseless linear
/// regression, the denominator of excess_loss (§5.6 step 6).
double baselineLoss(int nDims, int nPoints);

io::CheckpointState captureCheckpoint(TrainSession& s, double wallSeconds);
void restoreCheckpoint(TrainSession& s, const io::CheckpointState& state, const std::string& path);

/// Steps per second as the log and the progress line report them: an exponential moving
/// average of the step's duration (weight 0.05 for the newest). The first step carries one-time
/// costs (allocations, first touches of buffers, thread pools starting), so the second step's
/// duration starts the average again; until a step has ended, the current step's time so far
/// stands in (the first log row said 0 steps/s and every curve ramped up from it: issue 80,
/// defect 27).
class StepRate {
public:
    void stepEnded(double seconds)
    {
        m_seconds = m_steps < 2 ? seconds : 0.95 * m_seconds + 0.05 * seconds;
        ++m_steps;
    }
    /// `sinceStart`: seconds the current step has run (read before any step ended).
    double perSecond(double sinceStart) const
    {
        const double s = m_steps > 0 ? m_seconds : sinceStart;
        return s > 0 ? 1.0 / s : 0.0;
    }
    double stepSeconds() const { return m_seconds; }

private:
    double m_seconds = 0;
    int m_steps = 0;
};

/// What one logged step measured; logRecord() turns it into the log row.
struct LoggedStep {
    std::int64_t step = 0;
    double loss = 0;
    torch::Tensor pred, ys;  ///< [B, N] each: the per-position metric reads them
    int nDims = 0, nPoints = 0;
    double lr = 0, gradNorm = 0, wallSeconds = 0, stepsPerSecond = 0;
};
LogRecord logRecord(TrainSession& s, const LoggedStep& l);

/// Writes the checkpoint of the session's state; when the disk refuses it, Error(Io) saying
/// which earlier checkpoint (`lastCheckpoint`) survives.
void writeCheckpointOrExplain(TrainSession& s, double wallSeconds, std::int64_t lastCheckpoint);

/// Runs steps stepsDone..max_steps-1, logging, checkpointing and honouring `control`.
RunSummary runTraining(TrainSession& s, RunControl& control, TrainObserver& observer);

}  // namespace lengen::engine::training
