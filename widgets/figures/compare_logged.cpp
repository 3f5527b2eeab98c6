#include "compare_logged.h"

#include <algorithm>
#include <iterator>

#include "lengen/engine/run_file.h"

namespace lengen::ui {

namespace {

constexpr const char* kPrefix = "training: ";

// Each entry: Compare's name after the prefix, the log's column, the y label, whether y is
// drawn on a log scale.
struct LoggedEntry {
    const char* name;
    std::vector<double> engine::TrainLog::*column;
    const char* label;
    bool logY;
};
const std::vector<LoggedEntry>& entries()
{
    using L = engine::TrainLog;
    static const std::vector<LoggedEntry> all{
        {"loss", &L::loss, "training loss", true},
        {"excess loss", &L::excessLoss, "excess loss", true},
        {"grad norm", &L::gradNorm, "gradient norm", true},
        {"learning rate", &L::learningRate, "learning rate", false},
        {"steps/s", &L::stepsPerSecond, "steps per second", false},
        {"wall clock", &L::wallSeconds, "wall clock (s)", false},
    };
    return all;
}

const LoggedEntry* entryOf(const std::string& method)
{
    if (method.rfind(kPrefix, 0) != 0)
        return nullptr;
    const std::string name = method.substr(std::string(kPrefix).size());
    for (const auto& e : entries())
        if (name == e.name)
            return &e;
    return nullptr;
}

}  // namespace

std::vector<std::string> loggedCompareMethods()
{
    std::vector<std::string> out;
    for (const auto& e : entries())
        out.push_back(kPrefix + std::string(e.name));
    return out;
}

bool isLoggedMethod(const std::string& method) { return entryOf(method) != nullptr; }

std::optional<LoggedRun> readLoggedRun(const std::string& run, const std::string& method)
{
    const auto* entry = entryOf(method);
    if (!entry)
        return std::nullopt;
    const auto log = engine::readTrainLog(engine::locateRunFile(run));
    auto column = log.*(entry->column);
    column.resize(log.step.size(), std::nan(""));
    if (std::none_of(column.begin(), column.end(), [](double v) { return std::isfinite(v); }))
        return std::nullopt;  // an older log without the column: said as missing
    LoggedRun r;
    r.result.method = method;
    r.result.source = "lengen";
    engine::EvalCurve curve;
    curve.model = curve.label = entry->name;
    curve.stats.mean = std::move(column);
    r.result.curves.push_back(std::move(curve));
    r.steps = log.step;
    return r;
}

std::vector<std::int64_t> alignLoggedRuns(std::vector<engine::EvalResult>& results,
                                          std::vector<std::vector<std::int64_t>> steps,
                                          std::vector<std::string>& notes)
{
    if (steps.empty())
        return {};
    // The steps every run logged (runs of other lengths or logging intervals share fewer): a
    // group's mean is taken at the same steps, never row against row.
    std::vector<std::int64_t> common = steps.front();
    for (const auto& s : steps) {
        std::vector<std::int64_t> both;
        std::set_intersection(common.begin(), common.end(), s.begin(), s.end(),
                              std::back_inserter(both));
        common = std::move(both);
    }
    bool cut = false;
    for (size_t i = 0; i < results.size(); ++i) {
        auto& values = results[i].curves.front().stats.mean;
        std::vector<double> kept;
        kept.reserve(common.size());
        size_t row = 0;
        for (const auto step : common) {  // both ascending: one pass
            while (row < steps[i].size() && steps[i][row] < step)
                ++row;
            const bool here = row < steps[i].size() && steps[i][row] == step && row < values.size();
            kept.push_back(here ? values[row] : std::nan(""));
        }
        cut = cut || kept.size() < values.size();
        values = std::move(kept);
    }
    if (cut)
        notes.push_back("drawn at the " + std::to_string(common.size()) +
                        " steps every run logged");
    return common;
}

void loggedAxes(plots::FigureSpec& f, const std::string& method,
                const std::vector<std::int64_t>& steps)
{
    const auto* entry = entryOf(method);
    f.x.label = "step";
    f.y.label = entry ? entry->label : method;
    f.y.log = entry && entry->logY;
    for (auto& s : f.series) {
        s.x.assign(steps.begin(),
                   steps.begin() + std::ptrdiff_t(std::min(steps.size(), s.y.size())));
        s.y.resize(s.x.size());
        if (!s.bandLow.empty()) {
            s.bandLow.resize(s.x.size());
            s.bandHigh.resize(s.x.size());
        }
    }
}

}  // namespace lengen::ui
