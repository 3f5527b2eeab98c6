#include "eval/model_runner.h"

#include <algorithm>

#include "io/run_store.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/trainer.h"
#include "torch_compat.h"
#include "train/threads.h"

namespace lengen::engine::eval {

namespace {
constexpr double kScoreBlockBytes = 64.0 * 1024 * 1024;  // attention scores per row block
}

LoadedRun loadRun(const std::string& run, const AnalysisOptions& options)
{
    LoadedRun r;
    r.runFile = locateRunFile(run);
    r.info = readRunInfo(r.runFile);
    if (r.info.checkpointStep < 0)
        throw Error(ErrorKind::RunFile,
                    "the run has no checkpoint yet (train it first): " + r.runFile);
    r.config = storedRunConfig(r.info.configYaml, r.runFile);
    r.kernels =
        training::makeKernelContext(options.threads, r.config.model.hiddenSize, options.switches);
    r.device = torch::Device(resolveDevice(options.device));
    r.model = model::buildModel(r.config);
    r.model->setKernelPolicy(
        model::chooseKernelPolicy(r.device.is_cuda(), r.kernels, options.switches));
    const auto shapes = io::parameterShapes(r.model->named_parameters());
    const auto state = io::readCheckpoint(r.runFile, &shapes);
    torch::NoGradGuard noGrad;
    for (auto& item : r.model->named_parameters()) {
        const auto it = std::find_if(state.model.begin(), state.model.end(),
                                     [&](const auto& t) { return t.name == item.key(); });
        if (it == state.model.end() || it->value.sizes() != item.value().sizes())
            throw Error(ErrorKind::RunFile,
                        "checkpoint tensor '" + item.key() +
                            "' is missing or has the wrong shape: " + r.runFile);
        item.value().copy_(it->value);
    }
    r.checkpointStep = state.stepsDone;
    r.model->to(r.device);
    r.model->eval();
    return r;
}

ForwardPlan planForward(const RunConfig& c, std::int64_t batch, std::int64_t tokens,
                        double budgetBytes, bool gpu)
{
    const double t = double(tokens), hidden = c.model.hiddenSize;
    ForwardPlan plan;
    // Activations alive in one layer: ~8 [T, H] tensors plus the MLP's [T, 4H] ones (Llama's
    // SwiGLU holds 3), Mamba's scan state [T, 2H, n] and its projections: the CPU kernel keeps
    // a row's state, the GPU's parallel scan up to eight whole copies (parallel_scan.cpp).
    double act = t * (8 * hidden + 3 * std::max(c.model.intermediateSize, 4 * c.model.hiddenSize));
    if (c.model.backbone == Backbone::Mamba)
        act += t * 2 * hidden * ((gpu ? 8.0 : 3.0) * c.model.stateSize + 8);
    act *= 4;
    // Attention: scores, scores + bias + mask, probabilities: three [heads, T, T] float32.
    const double heads = c.model.backbone == Backbone::Mamba ? 0 : c.model.numHeads;
    const double attnPerRow = 3 * heads * t * 4;
    plan.bytesPerPrompt = act + attnPerRow * t;
    plan.microBatch =
        std::clamp<std::int64_t>(static_cast<std::int64_t>(budgetBytes / plan.bytesPerPrompt), 1,
                                 std::max<std::int64_t>(batch, 1));
    if (heads > 0 && plan.bytesPerPrompt > budgetBytes) {
        // One prompt still too big: limit query rows (the bias block [heads, rows, T] counts
        // as one more row's worth).
        const double rows = (budgetBytes - act) / (attnPerRow + heads * t * 4);
        plan.queryChunk = std::clamp<std::int64_t>(static_cast<std::int64_t>(rows), 1, tokens);
    } else if (!gpu && heads > 0 && double(plan.microBatch) * attnPerRow * t > kScoreBlockBytes) {
        // (CPU only) Within budget but huge: score blocks of a few hundred MB are allocated and
        // freed per layer, each a fresh mmap whose pages fault in again (18 M minor faults and 60 %
        // of the time at T = 3216). Blocks that stay in the allocator's reach are faster.
        const double rows = kScoreBlockBytes / (double(plan.microBatch) * attnPerRow);
        plan.queryChunk = std::clamp<std::int64_t>(static_cast<std::int64_t>(rows), 16, tokens);
        if (plan.queryChunk >= tokens)
            plan.queryChunk = 0;
    }
    return plan;
}

double forwardBudgetBytes(const torch::Device& device, double requestedMiB)
{
    constexpr double kMiB = 1024.0 * 1024.0, kCpuDefault = 2048 * kMiB;
    if (!device.is_cuda())
        return requestedMiB > 0 ? requestedMiB * kMiB : kCpuDefault;
    const auto memory = compat::cudaMemory(device.has_index() ? device.index() : -1);
    const double half = memory ? 0.5 * double(memory->freeBytes) : kCpuDefault;
    return requestedMiB > 0 ? std::min(requestedMiB * kMiB, half) : half;
}

torch::Tensor predict(LoadedRun& run, const torch::Tensor& xs, const torch::Tensor& ys,
                      const ForwardPlan& plan, const model::Intervention* edit)
{
    torch::NoGradGuard noGrad;
    const auto b = xs.size(0);
    std::vector<torch::Tensor> parts;
    model::ForwardOptions opt;
    opt.queryChunk = plan.queryChunk;
    opt.intervention = edit;
    for (std::int64_t b0 = 0; b0 < b; b0 += plan.microBatch) {
        const auto b1 = std::min(b, b0 + plan.microBatch);
        auto x = xs.slice(0, b0, b1).to(run.device), y = ys.slice(0, b0, b1).to(run.device);
        parts.push_back(run.model->forward(x, y, opt).predictions.to(torch::kCPU));
    }
    return torch::cat(parts, 0);
}

std::string modelKey(const RunConfig& config) { return config.peDisplayName(); }

}  // namespace lengen::engine::eval
