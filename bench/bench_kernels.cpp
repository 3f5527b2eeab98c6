// The fused device kernels of issue 58 (engine/src/device) against the written-out ops, on the
// GPU: largest relative differences forward and backward, and the time of each, forward and
// backward, one JSON line per kernel and type. The CPU-reference check for the GPU machines,
// which have no Qt to run tst_model; stage d of tools/gpu/stage2.sh runs it.
//   bench_kernels [ROWS=25728] [HIDDEN=256] [INTERMEDIATE=1024] [REPS=50]
// (the defaults: the standard config at N = 201, batch 64 x 402 tokens). Exit 0 when every
// difference is within float rounding (float32 1e-5 forward, 1e-4 backward; bfloat16 2e-2),
// 1 when one is not, 77 without a GPU or without the kernels.

#include <cstdio>
#include <cstdlib>

#include "device/device_check.h"

int main(int argc, char** argv)
{
    const long rows = argc > 1 ? std::atol(argv[1]) : 25728;
    const int hidden = argc > 2 ? std::atoi(argv[2]) : 256;
    const int inter = argc > 3 ? std::atoi(argv[3]) : 1024;
    const int reps = argc > 4 ? std::atoi(argv[4]) : 50;
    const auto checks = lengen::engine::device::checkDeviceKernels(rows, hidden, inter, reps);
    if (checks.empty()) {
        std::fprintf(stderr, "bench_kernels: no GPU, or this build has no device kernels\n");
        return 77;
    }
    bool ok = true;
    for (const auto& c : checks) {
        const bool bf16 = c.dtype == "bfloat16";
        const bool within = c.forward <= (bf16 ? 2e-2 : 1e-5) && c.backward <= (bf16 ? 2e-2 : 1e-4);
        ok = ok && within;
        std::printf("{\"bench\": \"device_kernels\", \"kernel\": \"%s\", \"dtype\": \"%s\", "
                    "\"rows\": %ld, \"forward_rel\": %.3g, \"backward_rel\": %.3g, \"within\": %s, "
                    "\"fused_ms\": %.4f, \"ops_ms\": %.4f}\n",
                    c.kernel.c_str(), c.dtype.c_str(), rows, c.forward, c.backward,
                    within ? "true" : "false", c.fusedMs, c.opsMs);
    }
    return ok ? 0 : 1;
}
