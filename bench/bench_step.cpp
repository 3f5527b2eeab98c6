// Time per training-step phase (sampling, forward + loss, backward, optimiser) for a config or a
// run file (its config and weights), with `threads` BLAS threads and one Torch thread.
// Usage: bench_step CONFIG|RUN.h5 [steps] [threads] [points]
// Prints the MSE of the model on a fixed batch first (the same formula as bench/pytorch_step.py,
// so that bench/vs_pytorch.sh compares the two models' math), then milliseconds per phase and
// steps/s; bench/README.md records the figures. LENGEN_FUSED=0 times the straightforward path.
// LENGEN_BENCH_DEVICE=cuda runs on a GPU (data sampled on the CPU and copied, as in training),
// LENGEN_BENCH_PRECISION=tf32|bf16 its matrix products (tools/gpu/check.sh). LENGEN_BENCH_TOP=K
// then profiles a few more steps and prints the top K kernels (GPU) or ops (CPU) by time.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <torch/csrc/autograd/profiler_legacy.h>

#include "kernel_profile.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/session.h"
#include "lengen/engine/trainer.h"
#include "model/cpu_kernels.h"
#include "torch_compat.h"
#include "train/graph_step.h"
#include "train/threads.h"
#include "train/train_loop.h"

using namespace lengen::engine;
using Clock = std::chrono::steady_clock;

namespace {

// xs[i,j,k] = sin(1 + 0.37 i + 1.31 j + 2.17 k) for k < dims (else 0), w[i,k] =
// cos(0.5 + 0.71 i + 1.9 k), ys = sum_k xs w: computed in double, used as float32.
std::pair<torch::Tensor, torch::Tensor> fixedBatch(std::int64_t b, std::int64_t n, std::int64_t d,
                                                   std::int64_t dims)
{
    auto opt = torch::TensorOptions(torch::kFloat64);
    auto i = torch::arange(b, opt).view({b, 1, 1});
    auto j = torch::arange(n, opt).view({1, n, 1});
    auto k = torch::arange(d, opt).view({1, 1, d});
    auto xs = torch::sin(1 + 0.37 * i + 1.31 * j + 2.17 * k) * (k < dims).to(torch::kFloat64);
    auto w = torch::cos(0.5 + 0.71 * i + 1.9 * k);
    auto ys = (xs * w).sum(-1);
    return {xs.to(torch::kFloat32), ys.to(torch::kFloat32)};
}

bool endsWith(const std::string& s, const std::string& tail)
{
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

int main(int argc, char** argv)
try {
    const char* usage = "usage: bench_step CONFIG|RUN.h5 [steps=200] [threads=1] [points]\n";
    if (argc < 2) {
        std::fprintf(stderr, "%s", usage);
        return 64;
    }
    if (std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help") {
        std::printf("%s", usage);
        return 0;
    }
    const std::string source = argv[1];
    const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
    const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
    training::TrainSession s;
    RunConfig config;
    const char* deviceEnv = std::getenv("LENGEN_BENCH_DEVICE");
    const std::string device = resolveDevice(deviceEnv ? deviceEnv : "cpu");
    const char* precisionEnv = std::getenv("LENGEN_BENCH_PRECISION");
    s.precision = compat::parsePrecision(precisionEnv ? precisionEnv : "fp32");
    // The engine's policy (threads.cpp): the kernel context gets the threads, BLAS too, Torch's
    // own pool one; freed heap memory is kept for the next step. The switches come from the
    // environment, read here as the CLI's main() reads them.
    s.switches = sessionSwitchesFromEnvironment();
    applyProcessPolicy(s.switches);
    if (endsWith(source, ".h5")) {  // a run: its config and its checkpoint's weights
        const auto info = readRunInfo(source);
        config = storedRunConfig(info.configYaml, source);
        s.kernels = training::makeKernelContext(threads, config.model.hiddenSize, s.switches);
        training::setupSession(s, config, info.seed, device);
        training::restoreCheckpoint(s, io::readCheckpoint(source), source);
    } else {
        config = loadConfigFile(source).runs.at(0);
        s.kernels = training::makeKernelContext(threads, config.model.hiddenSize, s.switches);
        training::setupSession(s, config, 1, device);
    }
    compat::applyMatmulPrecision(s.precision, s.device);
    const auto& cur = config.task.curriculum;
    // The final (largest) step shape, or `points` in-context points if given.
    const int dims = cur.dims.end, points = argc > 4 ? std::atoi(argv[4]) : cur.points.end;
    {
        torch::NoGradGuard noGrad;
        auto [xs, ys] = fixedBatch(config.training.batchSize, points, config.model.nInDims, dims);
        xs = xs.to(s.device), ys = ys.to(s.device);
        auto pred = s.model->forward(xs, ys).predictions;
        std::printf("loss0 %.9g\n", (pred - ys).square().mean().item<double>());
    }
    double t[4] = {0, 0, 0, 0};
    auto lap = [](Clock::time_point& since) {
        const auto now = Clock::now();
        const double ms = std::chrono::duration<double, std::milli>(now - since).count();
        since = now;
        return ms;
    };
    // LENGEN_PROFILE=trace.json: a Chrome trace of every op of the timed steps.
    std::unique_ptr<torch::autograd::profiler::RecordProfile> profile;
    const int warmup = std::min(20, std::max(2, steps / 10));
    // On a GPU with graphs (graph_step.h) the step is one replay: its time is under "forward".
    std::unique_ptr<training::GraphedStep> graphed;
    if (training::graphsApply(s))
        graphed = std::make_unique<training::GraphedStep>(s);
    // One batch [B, N, D], [B, N] on the CPU, as training draws it.
    auto draw = [&] { return training::drawPrompts(s, dims, points); };
    // LENGEN_PREFETCH=1 with graphs: the next batch drawn while the replay runs, as training
    // does (issue 74); "sample" then times only taking the batch drawn ahead.
    std::optional<std::pair<torch::Tensor, torch::Tensor>> ahead;
    // One step; `local` gets its phases' milliseconds.
    auto step = [&](double* local) {
        auto since = Clock::now();
        auto [xs, ys] = ahead ? *ahead : draw();
        ahead.reset();
        if (!graphed)
            xs = xs.to(s.device), ys = ys.to(s.device);
        local[0] = lap(since);
        if (graphed) {
            std::function<void()> drawNext;
            if (s.switches.prefetchBatch)
                drawNext = [&] { ahead = draw(); };
            (void)graphed->run(xs, ys, 1e-4, config.effectiveMaxGradNorm(), drawNext);
            local[1] = lap(since);
        } else {
            // A run with randomized positions draws them every step, as training does.
            const auto positions = config.training.randomPositions > 0
                                       ? training::drawPositions(s.gen, 2 * std::int64_t(points),
                                                                 config.training.randomPositions)
                                       : torch::Tensor();
            auto loss = training::forwardLoss(s, xs, ys, positions).second;
            local[1] = lap(since);
            loss.backward();
            (void)loss.item<double>();
            local[2] = lap(since);
            s.optimizer->clipGradNorm(config.effectiveMaxGradNorm());
            s.optimizer->step(1e-4);
            s.optimizer->zeroGrad();
            compat::synchronize(s.device);
            local[3] = lap(since);
        }
    };
    for (int i = -warmup; i < steps; ++i) {
        if (i == 0 && std::getenv("LENGEN_PROFILE"))
            profile = std::make_unique<torch::autograd::profiler::RecordProfile>(
                std::getenv("LENGEN_PROFILE"));
        double local[4] = {0, 0, 0, 0};
        step(local);
        if (i >= 0)
            for (int k = 0; k < 4; ++k)
                t[k] += local[k];
    }
    profile.reset();
    const double total = t[0] + t[1] + t[2] + t[3];
    std::printf("%s: %d steps at N=%d, D=%d, %d thread(s), %s, %s, %s layers%s%s%s\n", argv[1],
                steps, points, dims, threads, s.device.str().c_str(),
                compat::precisionName(s.precision),
                model::layerPathName(s.model->kernelPolicy().path), graphed ? ", CUDA graph" : "",
                s.device.is_cpu() ? ", products on " : "",
                s.device.is_cpu() ? model::kernels::gemmBackend() : "");
    const char* names[] = {"sample", "forward", "backward", "optimiser"};
    for (int k = 0; k < 4; ++k)
        std::printf("  %-10s %7.3f ms  (%4.1f %%)\n", names[k], t[k] / steps, 100 * t[k] / total);
    std::printf("  total      %7.3f ms  = %.1f steps/s\n", total / steps, 1000.0 * steps / total);
    std::printf("steps/s %.3f\n", 1000.0 * steps / total);
    // LENGEN_BENCH_TOP=K: K more steps' worth of kernels (device) or ops (CPU), after the timing.
    if (const char* top = std::getenv("LENGEN_BENCH_TOP"); top && std::atoi(top) > 0) {
        const int n = std::min(steps, 20);
        double local[4];
        const auto p = lengen::bench::profileSteps([&] { step(local); }, n, s.device.is_cuda());
        lengen::bench::printProfile(p, n, std::atoi(top), s.device.is_cuda());
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_step: %s\n", e.what());
    return 2;
}
