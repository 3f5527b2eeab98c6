// Time per training-step phase (sampling, forward + loss, backward, optimiser) for a config,
// with `threads` BLAS threads and one Torch thread. Usage: bench_step CONFIG [steps] [threads]
// [points]
// Prints milliseconds per phase and steps/s; bench/README.md records the figures.

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <memory>

#include <torch/csrc/autograd/profiler_legacy.h>

#include "train/train_loop.h"

using namespace lengen::engine;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_step CONFIG [steps=200] [threads=1] [points]\n");
        return 64;
    }
    const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
    const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
    // The engine's policy (trainer.cpp): BLAS gets the threads, Torch's own pool one.
    torch::set_num_threads(1);
    if (auto* f = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
        f(threads);
    auto config = loadConfigFile(argv[1]).runs.at(0);
    training::TrainSession s;
    training::setupSession(s, config, 1, "cpu");
    const auto& cur = config.task.curriculum;
    // The final (largest) step shape, or `points` in-context points if given.
    const int dims = cur.dims.end, points = argc > 4 ? std::atoi(argv[4]) : cur.points.end;
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
    for (int i = -warmup; i < steps; ++i) {
        if (i == 0 && std::getenv("LENGEN_PROFILE"))
            profile = std::make_unique<torch::autograd::profiler::RecordProfile>(
                std::getenv("LENGEN_PROFILE"));
        auto since = Clock::now();
        double local[4];
        auto fn = s.sampler->sample(s.gen);
        auto xs = fn->sampleXs(points, dims, s.gen);
        auto ys = fn->evaluate(xs);
        local[0] = lap(since);
        auto loss = s.sampler->loss(s.model->forward(xs, ys).predictions, ys);
        local[1] = lap(since);
        loss.backward();
        (void)loss.item<double>();
        local[2] = lap(since);
        s.optimizer->clipGradNorm(config.effectiveMaxGradNorm());
        s.optimizer->step(1e-4);
        s.optimizer->zeroGrad();
        local[3] = lap(since);
        if (i >= 0)
            for (int k = 0; k < 4; ++k)
                t[k] += local[k];
    }
    profile.reset();
    const double total = t[0] + t[1] + t[2] + t[3];
    std::printf("%s: %d steps at N=%d, D=%d, %d thread(s)\n", argv[1], steps, points, dims, threads);
    const char* names[] = {"sample", "forward", "backward", "optimiser"};
    for (int k = 0; k < 4; ++k)
        std::printf("  %-10s %7.3f ms  (%4.1f %%)\n", names[k], t[k] / steps, 100 * t[k] / total);
    std::printf("  total      %7.3f ms  = %.1f steps/s\n", total / steps, 1000.0 * steps / total);
    return 0;
}
