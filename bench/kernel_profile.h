// Where a step spends its time: the top device kernels (on a GPU) or CPU ops by self time (on a
// CPU), over a few steps run under Torch's Kineto profiler. bench_step prints them when
// LENGEN_BENCH_TOP=K is set (bench/README.md); the timed steps stay unprofiled.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lengen::bench {

struct ProfileRow {
    std::string name;  // kernel or op name, as the profiler reports it
    std::int64_t calls = 0;
    double totalMs = 0;  // device time (GPU) or self time (CPU) over all profiled steps
};

struct KernelProfile {
    bool available = true;         // false: the profiler would not start (nothing was recorded)
    std::string why;               // its message then
    std::vector<ProfileRow> rows;  // every name, largest total first
    double wallMs = 0;             // the profiled steps' wall time
    double busyMs = 0;             // sum of all rows (the device's busy time on a GPU)
};

// Runs `steps` calls of `step` under the profiler (CUDA activity too when `cuda`).
KernelProfile profileSteps(const std::function<void()>& step, int steps, bool cuda);

// The first `top` rows: calls and ms per step, share of the busy time, and the names (cut to
// 110 characters when `top` is under 100).
void printProfile(const KernelProfile& p, int steps, int top, bool cuda);

}  // namespace lengen::bench
