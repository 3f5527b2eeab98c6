#include "compare_differences.h"

#include <cstdint>
#include <set>
#include <tuple>

namespace lengen::figures {

std::vector<engine::ConfigDifference> compareDifferences(const std::vector<ComparedRun>& runs,
                                                         const std::string& method)
{
    if (runs.size() < 2)
        return {};
    std::vector<engine::RunConfig> configs;
    for (const auto& r : runs)
        configs.push_back(r.config);
    auto diffs = engine::configDifferences(configs);
    std::vector<engine::ConfigDifference> lead;
    // What each run trained on (issue 52): two runs of one config can differ here (one stopped
    // early). Listed where the runs differ; all stopping alike short of the curriculum is the
    // figure's "train length" marker, not a difference (it read "points 7, 7, 7, 7").
    for (const auto& [key, pick, end] :
         {std::tuple{"trained on: points", &engine::ReachedCurriculum::points,
                     &engine::RunConfig::trainPoints},
          std::tuple{"trained on: dims", &engine::ReachedCurriculum::dims,
                     &engine::RunConfig::inputDims}}) {
        engine::ConfigDifference d;
        d.key = key;
        std::set<std::string> seen;
        for (const auto& r : runs) {
            const int v = r.reached.points > 0 ? r.reached.*pick : (r.config.*end)();
            d.values.push_back(std::to_string(v));
            d.notApplied.emplace_back();
            seen.insert(d.values.back());
        }
        if (seen.size() > 1)
            lead.push_back(std::move(d));
    }
    // How each run's curve of this method was evaluated, where that differs: a curve averaged
    // over 128 and 1280 prompts is not one measurement (the legend flags it too).
    for (const auto& [key, pick] :
         {std::pair{"evaluation: prompts",
                    +[](const engine::EvalResult& r) { return std::uint64_t(r.prompts); }},
          {"evaluation: seed", +[](const engine::EvalResult& r) { return r.seed; }},
          {"evaluation: points",
           +[](const engine::EvalResult& r) { return std::uint64_t(r.nPoints); }}}) {
        engine::ConfigDifference d;
        d.key = key;
        std::set<std::string> seen;
        for (const auto& r : runs) {
            const auto& e = r.evaluated;
            d.values.push_back(e ? std::to_string(pick(*e)) : std::string());
            d.notApplied.push_back(e ? std::string() : "not evaluated with " + method);
            if (e)
                seen.insert(d.values.back());
        }
        if (seen.size() > 1)
            lead.push_back(std::move(d));
    }
    diffs.insert(diffs.begin(), lead.begin(), lead.end());
    return diffs;
}

}  // namespace lengen::figures
