// bench_attention [T] [heads] [d] [batch] [reps]: the fused layers' causal attention kernels
// (model/cpu_kernels.h: attentionForward, attentionBackward) alone on one thread, at one
// layer's size (default the quick Llama presets: T = 18, 2 heads of 32, batch 32; the standard
// size is 102 8 32 32, one part of its batch). Prints one JSON line: the median microseconds
// of a forward and of a backward, and the multiply-adds of the causal triangle per second.
// No Torch: the kernels take raw float buffers.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "model/cpu_kernels.h"

namespace k = lengen::engine::model::kernels;

namespace {

template <class Fn>
double medianMicros(int reps, Fn&& fn)
{
    std::vector<double> us;
    for (int r = 0; r <= reps; ++r) {  // the first is a warm-up
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        const auto t1 = std::chrono::steady_clock::now();
        if (r > 0)
            us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
}

}  // namespace

int main(int argc, char** argv)
{
    auto arg = [&](int i, int fallback) { return argc > i ? std::atoi(argv[i]) : fallback; };
    const int t = arg(1, 18), heads = arg(2, 2), d = arg(3, 32), batch = arg(4, 32),
              reps = arg(5, 200);
    if (t < 1 || heads < 1 || d < 1 || batch < 1 || reps < 1) {
        std::fprintf(stderr, "usage: bench_attention [T] [heads] [d] [batch] [reps]\n");
        return 2;
    }
    const int h = heads * d;
    const k::AttentionShape shape{batch, t, heads, d, 1.0f / std::sqrt(static_cast<float>(d))};
    const std::int64_t rows = std::int64_t(batch) * t;
    std::mt19937 gen(7);
    std::normal_distribution<float> normal;
    std::vector<float> qkv(rows * 3 * h), dout(rows * h), out(rows * h), dqkv(rows * 3 * h);
    std::vector<float> probs(std::int64_t(batch) * heads * k::attentionProbsPerItem(t));
    for (auto& v : qkv)
        v = normal(gen);
    for (auto& v : dout)
        v = normal(gen);

    const double fwd = medianMicros(reps, [&] {
        k::attentionForward(shape, qkv.data(), nullptr, 0, probs.data(), out.data());
    });
    const double bwd = medianMicros(reps, [&] {
        k::attentionBackward(shape, qkv.data(), probs.data(), dout.data(), dqkv.data(), nullptr, 0);
    });
    // Multiply-adds over the causal triangle: 2 products forward (q k^T, p v), 4 backward.
    const double tri = double(t) * (t + 1) / 2 * d * heads * batch;
    std::printf("{\"t\": %d, \"heads\": %d, \"d\": %d, \"batch\": %d, \"forward_us\": %.1f, "
                "\"backward_us\": %.1f, \"forward_gmacs\": %.2f, \"backward_gmacs\": %.2f, "
                "\"check\": %.6g}\n",
                t, heads, d, batch, fwd, bwd, 2 * tri / fwd / 1e3, 4 * tri / bwd / 1e3,
                double(out[out.size() / 2]) + double(dqkv[dqkv.size() / 3]));
    return 0;
}
