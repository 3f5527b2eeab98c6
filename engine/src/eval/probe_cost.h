#pragma once
// The probes' progress weighed by what each part costs. Their stages and units count alike in
// the progress reports ("duplicated: count sweep, 5 of 24"), but a count-sweep layout of 30
// points runs in a twentieth of the time of a 400-point one: weighed by count, the bar raced
// through the cheap units and stood on the dear ones while its ETA climbed (issue 80, defect
// 22: 0:33 -> 1:14 at 64 %). The cost model here gives the job's share done by cost.

#include <cstdint>
#include <vector>

#include "lengen/engine/analysis.h"

namespace lengen::engine {
struct ProbeOptions;
}

namespace lengen::engine::eval {

/// What forwarding `prompts` prompts of `points` points and bootstrapping their per-position
/// curve costs, in arbitrary units: linear in the points (the MLPs, the bootstrap) plus their
/// pairs (attention). Fitted to `lengen probe --all` on the quick preset (conjunction, 200
/// steps, 2 cores, 2026-12-07): about 1.7 ms a point for 100 prompts at 30 points, 4-7 ms at
/// 400.
double layoutCost(std::int64_t prompts, std::int64_t points);

/// Each stage's units and their costs, in the order probeRun reports them: attention (its
/// settings; none where `attentionRuns` is false), duplicated (count sweep, random points,
/// instruction + noise + target, instruction position), serial position; only the stages
/// `o` asks for. `trainPoints`, `dims`: the run's. Where the layouts refuse the sizes, the
/// duplicated and serial-position stages have no units (they fail with their own message when
/// they come, after the attention probe).
std::vector<std::vector<double>> probeUnitCosts(const ProbeOptions& o, std::int64_t trainPoints,
                                                std::int64_t dims, bool attentionRuns);

/// The noise counts of the duplicated count sweep: the options' own, else 5..20 (§8.1).
std::vector<int> noiseCounts(const ProbeOptions& o);

/// Forwards every call to `inner`, and before each stage start and progress report tells it
/// the job's share done with each unit weighed by its cost (`unitCosts[stage][unit]`; a report
/// of `done` units has the first `done` of its stage behind it).
class CostWeightedObserver final : public AnalysisObserver {
public:
    CostWeightedObserver(AnalysisObserver& inner, std::vector<std::vector<double>> unitCosts);
    void onStage(int index, int count, const std::string& name) override;
    void onProgress(const std::string& stage, std::int64_t done, std::int64_t total) override;
    void onWarning(const std::string& message) override { m_inner.onWarning(message); }
    void onFraction(double ofJob) override { m_inner.onFraction(ofJob); }

    /// The share of the job's cost behind `done` units of stage `stage` (0..1).
    double fraction(int stage, std::int64_t done) const;

private:
    AnalysisObserver& m_inner;
    std::vector<std::vector<double>> m_costs;
    std::vector<double> m_before;  ///< the cost of the stages before each
    double m_total = 0;
    int m_stage = 0;
};

}  // namespace lengen::engine::eval
