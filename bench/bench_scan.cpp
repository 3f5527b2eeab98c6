// bench_scan [T] [batch] [inner] [state] [reps]: Mamba's selective scan alone, forward and
// backward, at one block's size (default the standard Mamba at N = 51: T = 102, batch 64,
// E = 512, N = 16): the position-by-position loop, the parallel scan (model/parallel_scan.h)
// and, on the CPU, the vectorised kernel. Prints one JSON line with the median milliseconds of
// each and the parallel scan's largest relative difference from the loop in y and in every
// gradient. LENGEN_BENCH_DEVICE=cuda runs it on a GPU (tools/gpu/stage2.sh).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "model/kernel_context.h"
#include "model/parallel_scan.h"
#include "model/selective_scan.h"
#include "torch_compat.h"

using namespace lengen::engine;

namespace {

using ScanFn = std::function<torch::Tensor(const std::vector<torch::Tensor>&)>;

struct Timed {
    double ms = 0;
    torch::Tensor y;
    std::vector<torch::Tensor> grads;
};

// Forward and backward `reps` times after one warm-up; the median wall time of a rep.
Timed time(const ScanFn& scan, const std::vector<torch::Tensor>& in, const torch::Tensor& w,
           int reps, const torch::Device& device)
{
    Timed out;
    std::vector<double> ms;
    for (int r = 0; r <= reps; ++r) {
        compat::synchronize(device);
        const auto t0 = std::chrono::steady_clock::now();
        auto y = scan(in);
        auto g = torch::autograd::grad({(y * w).sum()}, in);
        compat::synchronize(device);
        const auto t1 = std::chrono::steady_clock::now();
        if (r > 0)
            ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        out.y = y.detach();
        out.grads = g;
    }
    std::sort(ms.begin(), ms.end());
    out.ms = ms[ms.size() / 2];
    return out;
}

double relDiff(const torch::Tensor& a, const torch::Tensor& b)
{
    return ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item<double>();
}

std::string fmt(double x)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", x);
    return text;
}

}  // namespace

int main(int argc, char** argv)
{
    auto arg = [&](int i, long fallback) { return argc > i ? std::atol(argv[i]) : fallback; };
    if (argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
        std::puts("usage: bench_scan [T=102] [batch=64] [inner=512] [state=16] [reps=5]\n"
                  "  LENGEN_BENCH_DEVICE=cpu|cuda (default cpu)");
        return 0;
    }
    const long t = arg(1, 102), b = arg(2, 64), e = arg(3, 512), n = arg(4, 16);
    const int reps = static_cast<int>(arg(5, 5));
    if (t < 1 || b < 1 || e < 1 || n < 1 || reps < 1 || t * b * e * n > (1L << 31)) {
        std::fprintf(stderr,
                     "bench_scan: sizes must be positive and T*batch*inner*state <= 2^31\n");
        return 2;
    }
    const char* deviceEnv = std::getenv("LENGEN_BENCH_DEVICE");
    const torch::Device device(deviceEnv ? deviceEnv : "cpu");
    torch::set_num_threads(1);

    // Inputs as a trained block sees them: delta = softplus(...) around 0.01-0.1, A = -(1..N).
    torch::manual_seed(0);
    auto opt = torch::TensorOptions(torch::kFloat32).device(device);
    std::vector<torch::Tensor> in = {torch::randn({b, t, e}, opt),
                                     torch::softplus(torch::randn({b, t, e}, opt) - 3.0),
                                     -torch::arange(1, n + 1, opt).repeat({e, 1}),
                                     torch::randn({b, t, n}, opt),
                                     torch::randn({b, t, n}, opt),
                                     torch::ones({e}, opt)};
    for (auto& x : in)
        x.requires_grad_();
    auto w = torch::randn({b, t, e}, opt);

    model::kernels::KernelContext context(1);
    auto loop = time(
        [](const auto& x) { return model::selectiveScanNaive(x[0], x[1], x[2], x[3], x[4], x[5]); },
        in, w, reps, device);
    auto parallel = time(
        [](const auto& x) {
            return model::selectiveScanParallel(x[0], x[1], x[2], x[3], x[4], x[5]);
        },
        in, w, reps, device);
    // The parallel scan's chunk length (8 in the model) at a few values.
    std::string chunks;
    for (std::int64_t q : {4, 16, 32}) {
        const double ms =
            time(
                [q](const auto& x) {
                    return model::selectiveScanParallel(x[0], x[1], x[2], x[3], x[4], x[5], q);
                },
                in, w, reps, device)
                .ms;
        chunks +=
            (chunks.empty() ? "\"" : ", \"") + std::to_string(q) + "\": " + std::to_string(ms);
    }
    std::string kernel = "null";
    if (device.is_cpu())
        kernel = std::to_string(time(
                                    [&](const auto& x) {
                                        return model::selectiveScan(context, x[0], x[1], x[2], x[3],
                                                                    x[4], x[5]);
                                    },
                                    in, w, reps, device)
                                    .ms);

    const char* names[] = {"v", "delta", "A", "B", "C", "D"};
    std::string grads;
    for (size_t i = 0; i < in.size(); ++i)
        grads += std::string(i ? ", " : "") + "\"d" + names[i] +
                 "\": " + fmt(relDiff(parallel.grads[i], loop.grads[i]));
    std::printf(
        "{\"bench\": \"scan\", \"device\": \"%s\", \"T\": %ld, \"batch\": %ld, \"inner\": %ld, "
        "\"state\": %ld, \"loop_ms\": %.3f, \"parallel_ms\": %.3f, \"cpu_kernel_ms\": %s, "
        "\"speedup\": %.2f, \"parallel_ms_by_chunk\": {%s}, \"rel_diff\": {\"y\": %.3g, %s}}\n",
        device.str().c_str(), t, b, e, n, loop.ms, parallel.ms, kernel.c_str(),
        loop.ms / parallel.ms, chunks.c_str(), relDiff(parallel.y, loop.y), grads.c_str());
    return 0;
}
