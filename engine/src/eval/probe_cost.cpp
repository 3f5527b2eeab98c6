// The probes' cost model and the observer that weighs their progress by it (probe_cost.h).

#include "eval/probe_cost.h"

#include <algorithm>
#include <numeric>

#include "eval/probe_layouts.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/probes.h"

namespace lengen::engine::eval {

namespace {

// Points at which the pairs cost what the points do; the fit of probe_cost.h's figures (the
// per-point time grows 3.2x from 30 to 400 points).
constexpr double kPairPoints = 128;

std::vector<double> layoutCosts(std::int64_t prompts, const std::vector<Layout>& layouts)
{
    std::vector<double> out;
    for (const auto& l : layouts)
        out.push_back(layoutCost(prompts, std::int64_t(l.indices.size())));
    return out;
}

}  // namespace

double layoutCost(std::int64_t prompts, std::int64_t points)
{
    const double n = double(std::max<std::int64_t>(1, points));
    return double(std::max<std::int64_t>(1, prompts)) * n * (1 + n / kPairPoints);
}

std::vector<int> noiseCounts(const ProbeOptions& o)
{
    std::vector<int> counts = o.noiseCounts;
    if (counts.empty())
        for (int c = 5; c <= 20; ++c)
            counts.push_back(c);
    return counts;
}

std::vector<std::vector<double>> probeUnitCosts(const ProbeOptions& o, std::int64_t trainPoints,
                                                std::int64_t dims, bool attentionRuns)
{
    std::vector<std::vector<double>> stages;
    if (o.attention) {
        std::vector<double> units;
        if (attentionRuns)
            for (const auto& setting : attentionSettings(trainPoints, o.longPoints, o.extraLengths))
                units.push_back(layoutCost(o.attentionPrompts, setting.points));
        stages.push_back(units);
    }
    if (!o.duplicated && !o.serialPosition)
        return stages;
    ProbeSizes s;
    try {
        s = resolveSizes(trainPoints, dims, o.testLength, o.instructionPoints, o.answerPoints,
                         o.targetPoints);
    } catch (const Error&) {
        // Refused when its stage comes, after the attention probe as before: no units here.
        stages.resize(stages.size() + size_t(o.duplicated) + size_t(o.serialPosition));
        return stages;
    }
    if (o.duplicated) {
        auto units = layoutCosts(o.prompts, countSweepLayouts(s, noiseCounts(o)));
        units.push_back(layoutCost(o.prompts, s.testLength));  // random points
        for (const auto& part : {instNoiseTargetLayouts(s), instructionPositionLayouts(s)}) {
            const auto costs = layoutCosts(o.prompts, part);
            units.insert(units.end(), costs.begin(), costs.end());
        }
        stages.push_back(units);
    }
    if (o.serialPosition)
        stages.push_back(layoutCosts(o.prompts, serialPositionLayouts(s)));
    return stages;
}

CostWeightedObserver::CostWeightedObserver(AnalysisObserver& inner,
                                           std::vector<std::vector<double>> unitCosts)
    : m_inner(inner), m_costs(std::move(unitCosts))
{
    for (const auto& stage : m_costs) {
        m_before.push_back(m_total);
        m_total += std::accumulate(stage.begin(), stage.end(), 0.0);
    }
}

double CostWeightedObserver::fraction(int stage, std::int64_t done) const
{
    if (m_total <= 0 || stage < 0)
        return 0;
    if (size_t(stage) >= m_costs.size())
        return 1;
    const auto& units = m_costs[size_t(stage)];
    const auto behind = std::min<size_t>(units.size(), size_t(std::max<std::int64_t>(0, done)));
    return std::min(1.0, (m_before[size_t(stage)] +
                          std::accumulate(units.begin(), units.begin() + long(behind), 0.0)) /
                             m_total);
}

void CostWeightedObserver::onStage(int index, int count, const std::string& name)
{
    m_stage = index;
    m_inner.onFraction(fraction(index, 0));
    m_inner.onStage(index, count, name);
}

void CostWeightedObserver::onProgress(const std::string& stage, std::int64_t done,
                                      std::int64_t total)
{
    m_inner.onFraction(fraction(m_stage, done));
    m_inner.onProgress(stage, done, total);
}

}  // namespace lengen::engine::eval
