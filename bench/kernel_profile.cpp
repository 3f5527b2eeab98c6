// Kineto's events reduced to a table per name. On a GPU each device event (kernel, memcpy,
// memset; the kernels of a CUDA graph's replay are recorded one by one) counts its own duration.
// On a CPU ops nest (aten::linear holds aten::addmm), so each op's children are subtracted from it
// per thread: a row is the op's self time, and the rows add up to the traced time once.

#include "kernel_profile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/version.h>

namespace lengen::bench {
namespace {

namespace prof = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;

// LibTorch 2 reports nanoseconds; 1.13 (Debian) microseconds.
std::uint64_t startNs(const prof::KinetoEvent& e)
{
#if TORCH_VERSION_MAJOR >= 2
    return e.startNs();
#else
    return e.startUs() * 1000;
#endif
}

std::uint64_t durationNs(const prof::KinetoEvent& e)
{
#if TORCH_VERSION_MAJOR >= 2
    return e.durationNs();
#else
    return e.durationUs() * 1000;
#endif
}

struct Span {
    std::uint64_t thread, start, end;
    std::string name;
};

// Self time per name: spans sorted by (thread, start, longest first), a stack of open parents.
void addSelfTimes(std::vector<Span> spans, std::map<std::string, ProfileRow>& rows)
{
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
        return a.thread != b.thread ? a.thread < b.thread
               : a.start != b.start ? a.start < b.start
                                    : a.end > b.end;
    });
    std::vector<std::pair<const Span*, std::int64_t>> open;  // span, its self ns so far
    auto close = [&](const Span& s, std::int64_t selfNs) {
        auto& r = rows[s.name];
        r.name = s.name;
        r.calls += 1;
        r.totalMs += std::max<std::int64_t>(selfNs, 0) / 1e6;
    };
    for (const auto& s : spans) {
        while (!open.empty() &&
               (open.back().first->thread != s.thread || open.back().first->end <= s.start)) {
            close(*open.back().first, open.back().second);
            open.pop_back();
        }
        if (!open.empty())
            open.back().second -=
                static_cast<std::int64_t>(std::min(s.end, open.back().first->end) - s.start);
        open.emplace_back(&s, static_cast<std::int64_t>(s.end - s.start));
    }
    for (; !open.empty(); open.pop_back())
        close(*open.back().first, open.back().second);
}

}  // namespace

KernelProfile profileSteps(const std::function<void()>& step, int steps, bool cuda)
{
    KernelProfile p;
    const torch::profiler::impl::ProfilerConfig config(
        torch::profiler::impl::ProfilerState::KINETO);
    std::set<ActivityType> activities{ActivityType::CPU};
    if (cuda)
        activities.insert(ActivityType::CUDA);
    try {  // whether Kineto was built in is known only at run time (USE_KINETO is Torch's own)
        prof::prepareProfiler(config, activities);
        prof::enableProfiler(config, activities);
    } catch (const c10::Error& e) {
        p.available = false;
        p.why = e.what_without_backtrace();
        return p;
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i)
        step();
    p.wallMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const auto result = prof::disableProfiler();

    std::map<std::string, ProfileRow> rows;
    std::vector<Span> spans;
    for (const auto& e : result->events()) {
        const bool device = e.deviceType() != c10::DeviceType::CPU;
        if (device != cuda)
            continue;
        if (device) {
            auto& r = rows[e.name()];
            r.name = e.name();
            r.calls += 1;
            r.totalMs += durationNs(e) / 1e6;
        } else {
            spans.push_back({e.startThreadId(), startNs(e), startNs(e) + durationNs(e), e.name()});
        }
    }
    addSelfTimes(std::move(spans), rows);
    for (auto& [name, row] : rows) {
        p.busyMs += row.totalMs;
        p.rows.push_back(std::move(row));
    }
    std::sort(p.rows.begin(), p.rows.end(),
              [](const ProfileRow& a, const ProfileRow& b) { return a.totalMs > b.totalMs; });
    return p;
}

void printProfile(const KernelProfile& p, int steps, int top, bool cuda)
{
    if (!p.available) {
        std::printf("profile: the profiler would not start (%s)\n", p.why.c_str());
        return;
    }
    std::printf("profile over %d step(s): %.3f ms wall per step, %s %.3f ms per step (%.0f %%)\n",
                steps, p.wallMs / steps, cuda ? "device busy" : "ops' self time", p.busyMs / steps,
                100 * p.busyMs / std::max(p.wallMs, 1e-9));
    std::printf("  %8s  %9s  %6s  %s\n", "calls/st", "ms/step", "share", cuda ? "kernel" : "op");
    const int n = std::min<int>(top, static_cast<int>(p.rows.size()));
    for (int i = 0; i < n; ++i) {
        const auto& r = p.rows[i];
        // Whole names for long lists (tools/gpu/kernel_kinds.py sorts them by kind).
        std::string name =
            top < 100 && r.name.size() > 110 ? r.name.substr(0, 107) + "..." : r.name;
        std::printf("  %8.1f  %9.4f  %5.1f%%  %s\n", double(r.calls) / steps, r.totalMs / steps,
                    100 * r.totalMs / std::max(p.busyMs, 1e-9), name.c_str());
    }
}

}  // namespace lengen::bench
