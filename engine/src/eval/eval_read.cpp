// A run's stored evaluations in the order every front end shows them: io reads the records as
// the file holds them (io/analysis_store.h); the methods' order (evalMethodsFor) and the
// interventions' (the documentation's, interventions.h) are this layer's facts (issue 73).

#include <algorithm>
#include <filesystem>

#include "io/analysis_store.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/interventions.h"
#include "lengen/engine/run_file.h"

namespace lengen::engine {

namespace {

// Position of a method in the canonical order (standard, ood_length, shifts); others after.
std::ptrdiff_t methodRank(const std::vector<std::string>& canonical, const std::string& method)
{
    return std::find(canonical.begin(), canonical.end(), method) - canonical.begin();
}

void sortMethods(std::vector<EvalResult>& results, const std::vector<std::string>& canonical)
{
    std::stable_sort(results.begin(), results.end(), [&](const auto& a, const auto& b) {
        return methodRank(canonical, a.method) < methodRank(canonical, b.method);
    });
}

}  // namespace

// The methods a task offers, in the order every front end lists them: the reference's
// standard prompts and the longer ones, then (regression only) the distribution shifts.
std::vector<std::string> evalMethodsFor(const std::string& task)
{
    static const char* const kScales[] = {"0.333", "0.5", "2", "3"};
    std::vector<std::string> methods{"standard", "ood_length"};
    if (isBooleanTaskName(task))
        return methods;
    methods.push_back("half_subspace");
    methods.push_back("skewed");
    for (const char* s : kScales)
        methods.push_back(std::string("scale-x=") + s);
    for (const char* s : kScales)
        methods.push_back(std::string("scale-y=") + s);
    return methods;
}

std::string analysisFileFor(const std::string& run)
{
    return (std::filesystem::path(locateRunFile(run)).parent_path() / "analysis.h5").string();
}

std::vector<EvalResult> readEvaluations(const std::string& run)
{
    auto stored = io::readStoredEvaluations(run);
    const auto canonical = evalMethodsFor("linear_regression");
    std::vector<EvalResult> out = std::move(stored.plain);
    sortMethods(out, canonical);
    out.insert(out.end(), stored.imported.begin(), stored.imported.end());
    // Interventions in the documentation's order (then as stored), not by name.
    const auto& names = interventionNames();
    auto nameRank = [&](const std::string& spec) {
        return std::find(names.begin(), names.end(), spec.substr(0, spec.find(':'))) -
               names.begin();
    };
    std::stable_sort(
        stored.interventions.begin(), stored.interventions.end(),
        [&](const auto& a, const auto& b) { return nameRank(a.first) < nameRank(b.first); });
    for (auto& [spec, these] : stored.interventions) {
        sortMethods(these, canonical);
        out.insert(out.end(), these.begin(), these.end());
    }
    return out;
}

AnalysisContents analysisContents(const std::string& run)
{
    auto out = storedAnalysisContents(run);
    const auto canonical = evalMethodsFor("linear_regression");  // canonical order first
    std::stable_sort(out.evalMethods.begin(), out.evalMethods.end(),
                     [&](const auto& a, const auto& b) {
                         return methodRank(canonical, a) < methodRank(canonical, b);
                     });
    return out;
}

}  // namespace lengen::engine
