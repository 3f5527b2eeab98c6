#include "compare_logged.h"

#include <QString>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "lengen/engine/run_file.h"

namespace lengen::ui {

namespace {

constexpr const char* kPrefix = "training: ";

// Each entry: Compare's name after the prefix, the log's column, the y label, whether y is
// drawn on a log scale, whether smoothing applies (a measurement's noise; a schedule or a
// clock has none, and an EMA would only bend it: the learning rate's peak came out low).
struct LoggedEntry {
    const char* name;
    std::vector<double> engine::TrainLog::*column;
    const char* label;
    bool logY;
    bool smoothable;
};
const std::vector<LoggedEntry>& entries()
{
    using L = engine::TrainLog;
    static const std::vector<LoggedEntry> all{
        {"loss", &L::loss, "training loss", true, true},
        {"excess loss", &L::excessLoss, "excess loss", true, true},
        {"grad norm", &L::gradNorm, "gradient norm", true, true},
        {"learning rate", &L::learningRate, "learning rate", false, false},
        {"steps/s", &L::stepsPerSecond, "steps per second", false, true},
        {"wall clock", &L::wallSeconds, "wall clock (s)", false, false},
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

bool isSmoothable(const std::string& method)
{
    const auto* entry = entryOf(method);
    return entry && entry->smoothable;
}

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
    r.seconds = log.wallSeconds;
    r.seconds.resize(log.step.size(), std::nan(""));
    return r;
}

std::vector<std::int64_t> alignLoggedRuns(std::vector<engine::EvalResult>& results,
                                          std::vector<std::vector<std::int64_t>> steps)
{
    if (steps.empty())
        return {};
    // The steps any run logged: each run is drawn to its own last step, as TensorBoard and W&B
    // draw it (issue 80, defect 3: cut to the steps every run logged, a 1,500-step run stopped
    // at 400 beside 400-step runs, and shrank while another run was training). A run has NaN
    // where it logged nothing (drawn across, never as zero); a group's mean is taken at the
    // same steps over the runs that logged them, never row against row.
    std::vector<std::int64_t> all;
    for (const auto& s : steps) {
        std::vector<std::int64_t> either;
        std::set_union(all.begin(), all.end(), s.begin(), s.end(), std::back_inserter(either));
        all = std::move(either);
    }
    for (size_t i = 0; i < results.size(); ++i) {
        auto& values = results[i].curves.front().stats.mean;
        values = valuesAtSteps(values, steps[i], all);
    }
    return all;
}

std::vector<double> valuesAtSteps(const std::vector<double>& values,
                                  const std::vector<std::int64_t>& steps,
                                  const std::vector<std::int64_t>& common)
{
    std::vector<double> kept;
    kept.reserve(common.size());
    size_t row = 0;
    for (const auto step : common) {  // both ascending: one pass
        while (row < steps.size() && steps[row] < step)
            ++row;
        const bool here = row < steps.size() && steps[row] == step && row < values.size();
        kept.push_back(here ? values[row] : std::nan(""));
    }
    return kept;
}

std::vector<double> emaOf(const std::vector<double>& raw, double alpha)
{
    std::vector<double> ema(raw.size());
    double acc = std::nan("");
    for (size_t i = 0; i < raw.size(); ++i) {
        if (std::isfinite(raw[i]))
            acc = std::isnan(acc) ? raw[i] : alpha * acc + (1 - alpha) * raw[i];
        ema[i] = acc;
    }
    return ema;
}

const char* loggedXName(LoggedX x)
{
    switch (x) {
    case LoggedX::Relative: return "relative";
    case LoggedX::Wall: return "wall";
    case LoggedX::Step: break;
    }
    return "step";
}

std::optional<LoggedX> loggedXFromName(const std::string& name)
{
    for (const auto x : {LoggedX::Step, LoggedX::Relative, LoggedX::Wall})
        if (name == loggedXName(x))
            return x;
    return std::nullopt;
}

std::string scaleSeconds(std::vector<std::vector<double>>& columns)
{
    double largest = 0;
    for (const auto& c : columns)
        for (const double v : c)
            if (std::isfinite(v))
                largest = std::max(largest, std::abs(v));
    const auto [unit, seconds] = largest < 120    ? std::pair{"s", 1.0}
                                 : largest < 7200 ? std::pair{"min", 60.0}
                                                  : std::pair{"h", 3600.0};
    for (auto& c : columns)
        for (double& v : c)
            v /= seconds;
    return unit;
}

void loggedAxes(plots::FigureSpec& f, const std::string& method, const LoggedXAxis& x,
                double smoothing)
{
    const auto* entry = entryOf(method);
    f.x.label = x.label;
    f.y.label = entry ? entry->label : method;
    if (smoothing > 0 && isSmoothable(method))  // in the title: a y label this long was cut
        f.title += ", EMA " + QString::number(smoothing, 'f', 2).toStdString();
    f.y.log = entry && entry->logY;
    for (size_t i = 0; i < f.series.size(); ++i) {
        auto& s = f.series[i];
        const auto& xs = i < x.perSeries.size() ? x.perSeries[i] : std::vector<double>{};
        plots::Series kept = s;
        kept.x.clear();
        kept.y.clear();
        kept.bandLow.clear();
        kept.bandHigh.clear();
        for (size_t p = 0; p < std::min(xs.size(), s.y.size()); ++p) {
            if (!std::isfinite(xs[p]))
                continue;  // no clock at this row: no place on a time axis
            if (!std::isfinite(s.y[p]))
                continue;  // a step this run did not log (another run did): drawn across
            kept.x.push_back(xs[p]);
            kept.y.push_back(s.y[p]);
            if (p < s.bandLow.size() && p < s.bandHigh.size()) {
                kept.bandLow.push_back(s.bandLow[p]);
                kept.bandHigh.push_back(s.bandHigh[p]);
            }
        }
        s = std::move(kept);
    }
}

}  // namespace lengen::ui
