#include "run_figures.h"
#include "figure_provenance.h"

#include <algorithm>
#include <cmath>

#include <filesystem>
#include <map>

#include "figure_export.h"
#include "figures_internal.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/interventions.h"
#include "lengen/engine/probes.h"
#include "lengen/engine/run_file.h"

namespace lengen::figures {

using engine::Error;
using engine::ErrorKind;
using plots::FigureSpec;
using plots::Series;

namespace {

// The reference figures' colours for layouts (forest, tangerine, cerulean, charcoal).
const char* const kBegin = "#2E8B57";
const char* const kMiddle = "#F28500";
const char* const kEnd = "#007BA7";
const char* const kCharcoal = "#36454F";
const char* const kLightRed = "#E74C3C";

std::string capitalised(std::string s)
{
    if (!s.empty())
        s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    return s;
}

FigureSpec lossFigure(const std::string& run, const RunFacts& rf)
{
    const auto log = engine::readTrainLog(run);
    FigureSpec f;
    f.title =
        capitalised(rf.config.task.name) + " - " + rf.info.positionEncoding + "\ntraining loss";
    Series loss, excess;
    loss.name = "loss";
    excess.name = "excess loss";
    excess.dashed = true;
    for (size_t i = 0; i < log.step.size(); ++i) {
        loss.x.push_back(double(log.step[i]));
        loss.y.push_back(log.loss[i]);
        excess.x.push_back(double(log.step[i]));
        excess.y.push_back(log.excessLoss[i]);
    }
    f.series = {loss, excess};
    f.x.label = "step";
    f.y.label = rf.config.isClassification() ? "cross-entropy" : "mean squared error";
    f.y.log = !rf.config.isClassification();
    return f;
}

FigureSpec evalFigure(const engine::EvalResult& r, const RunFacts& rf)
{
    // The length the weights last trained on, not the curriculum's end (issue 52); the reader
    // fills it for results stored before it was recorded.
    const int trained = r.trainedPoints;
    FigureSpec f;
    f.title = capitalised(rf.config.task.name) + " - n_dim " + std::to_string(r.dims) + " - " +
              r.method + "\nmax_data_points " + std::to_string(r.trainPoints) +
              (trained != r.trainPoints ? " (trained on " + std::to_string(trained) + ")" : "") +
              " - " + std::to_string(r.prompts) + " prompts";
    for (const auto& c : r.curves)
        f.series.push_back(curveSeries(c.label, c.stats));
    errorAxes(f, r.classification, r.zeroEstimator, r.nPoints - 1);
    if (r.nPoints - 1 > trainLengthK(trained))  // only where the prompts go beyond it
        f.vlines.push_back({trainLengthK(trained), "train length"});
    return f;
}

// `withBand`: the figure of one intervention keeps its band; over the plain figure a dozen
// bands would hide each other, so there only the means are drawn.
void addIntervention(FigureSpec& f, const engine::EvalResult& e, bool withBand)
{
    if (e.curves.empty())
        return;
    auto series = curveSeries(e.curves.front().label, e.curves.front().stats);
    series.color = interventionColor(e.intervention);
    series.dashed = true;
    if (!withBand) {
        series.bandLow.clear();
        series.bandHigh.clear();
    }
    f.series.push_back(std::move(series));
}

const engine::ProbeGroup* group(const std::vector<engine::ProbeGroup>& all, const std::string& path)
{
    for (const auto& g : all)
        if (g.path == path)
            return &g;
    return nullptr;
}

const engine::ProbeCurve* curveNamed(const engine::ProbeGroup& g, const std::string& name)
{
    for (const auto& c : g.curves)
        if (c.name == name)
            return &c;
    return nullptr;
}

double param(const engine::ProbeGroup& g, const std::string& name)
{
    const auto it = g.params.find(name);
    return it == g.params.end() ? 0 : it->second;
}

FigureSpec probeBase(const engine::ProbeGroup& g, const std::string& title, double xMax)
{
    FigureSpec f;
    f.title = title;
    errorAxes(f, g.classification, param(g, "zero_estimator"), xMax);
    f.x.label = "# of in-context examples";
    f.spans.push_back(
        {-1, param(g, g.params.count("trained_points") ? "trained_points" : "train_points"),
         "#808080", 0.12, "train length"});
    return f;
}

FigureSpec countSweepFigure(const engine::ProbeGroup& g, const engine::ProbeCurve& c)
{
    auto f =
        probeBase(g, "duplicated attack on " + g.model + " - noise points: " + c.name.substr(2),
                  double(c.stats.mean.size()) - 1);
    f.series.push_back(curveSeries("Random points", c.stats, "#6C7A89"));
    if (c.spans.count("target")) {  // the target segment re-drawn in red
        const auto [t0, t1] = c.spans.at("target");
        Series t;
        t.name = "target";
        t.color = kLightRed;
        t.width = 3;
        for (size_t i = size_t(t0); i < size_t(t1) && i < c.stats.mean.size(); ++i) {
            t.x.push_back(double(i));
            t.y.push_back(c.stats.mean[i]);
        }
        f.series.push_back(t);
    }
    if (c.spans.count("noise")) {
        const double at = c.spans.at("noise").first;
        const double y =
            c.stats.mean.empty() ? 0 : c.stats.mean[std::min(size_t(at), c.stats.mean.size() - 1)];
        f.markers.push_back({at, y, std::to_string(int(at))});
    }
    return f;
}

FigureSpec layoutsFigure(const engine::ProbeGroup& g, const std::string& title,
                         const std::vector<std::pair<std::string, std::string>>& names,
                         const std::string& baseline, const std::string& baselineLabel,
                         const std::string& highlight)
{
    double xMax = 0;
    for (const auto& c : g.curves)
        xMax = std::max(xMax, double(c.stats.mean.size()) - 1);
    auto f = probeBase(g, title, xMax);
    if (const auto* b = curveNamed(g, baseline))
        f.series.push_back(curveSeries(baselineLabel, b->stats, kCharcoal));
    const char* colours[] = {kBegin, kMiddle, kEnd};
    int i = 0;
    for (const auto& [name, label] : names) {
        const auto* c = curveNamed(g, name);
        if (!c)
            continue;
        std::string l = label;
        if (highlight == "target" && c->spans.count("target"))  // the real target distance
            l += " (target at " + std::to_string(int(c->spans.at("target").first)) + ")";
        f.series.push_back(curveSeries(l, c->stats, colours[i % 3], false));
        if (c->spans.count(highlight))
            f.spans.push_back(
                {c->spans.at(highlight).first, c->spans.at(highlight).second, kLightRed, 0.12, ""});
        ++i;
    }
    return f;
}

FigureSpec lostInMiddleFigure(const engine::ProbeGroup& g, const RunFacts& rf)
{
    auto f = layoutsFigure(
        g, rf.config.task.name + " - lost in middle test on " + g.model,
        {{"begin", "ans at begin"}, {"middle", "ans at middle"}, {"end", "ans at end"}}, "", "",
        "");
    double t0 = 0, t1 = 0;
    for (const auto& c : g.curves)
        if (c.spans.count("target")) {
            t0 = std::max(t0, c.spans.at("target").first);
            t1 = std::max(t1, c.spans.at("target").second);
        }
    f.spans.push_back({t0, t1, kLightRed, 0.15, "target block"});
    f.zoom = plots::ZoomPanel{t0 - 15, t1, "Zoomed In"};
    f.widthInches = 8;
    f.heightInches = 5;
    f.legend = plots::LegendPlace::UpperLeft;
    return f;
}

}  // namespace

// One colour per intervention (the same in every figure), dashed: they read as variants of the
// model's solid curve, apart from the baselines' palette colours.
std::string interventionColor(const std::string& spec)
{
    const auto* info = engine::findIntervention(spec.substr(0, spec.find(':')));
    return info ? info->color : std::string("#444444");
}

std::vector<double> positions(size_t n, double scale)
{
    std::vector<double> x(n);
    for (size_t i = 0; i < n; ++i)
        x[i] = double(i) * scale;
    return x;
}

RunFacts facts(const std::string& run)
{
    RunFacts r;
    r.info = engine::readRunInfo(engine::locateRunFile(run));
    r.config = engine::storedRunConfig(r.info.configYaml, r.info.path);
    return r;
}

Series curveSeries(const std::string& name, const engine::CurveStats& st, const std::string& color,
                   bool band)
{
    Series s;
    s.name = name;
    s.x = positions(st.mean.size());
    s.y = st.mean;
    if (band) {
        s.bandLow = st.bootstrapLow;
        s.bandHigh = st.bootstrapHigh;
    }
    s.color = color;
    return s;
}

void errorAxes(FigureSpec& f, bool classification, double zero, double xMax)
{
    // The reference's §6.7 axes with §9.26 fixed: the zero-estimator line only where on scale.
    f.x.label = "in-context examples";
    f.x.min = -1;
    f.x.max = xMax + 0.1;
    if (classification) {
        f.y.label = "accuracy";
        f.y.min = -0.05;
        f.y.max = 1.05;
        f.legend = plots::LegendPlace::LowerRight;
    } else {
        f.y.label = "squared error";
        f.y.min = -0.1;
        f.y.max = 1.5 * zero;
        f.hlines.push_back({zero, "zero estimator"});
    }
}

std::string figureFileName(const std::string& figure)
{
    std::string n = figure;
    const bool atk = n.rfind("noise_points=", 0) == 0 || n == "inst+noise+tar" ||
                     n == "baseline_all_dup" || n == "change_inst_position" || n == "lost_in_mid";
    // '/' would make folders; ':' and ',' of an intervention's parameters trouble other
    // systems' file names: "ood_length+lambda:global=2,local=8" ->
    // "ood_length+lambda_global=2_local=8".
    for (auto& c : n)
        if (c == '/' || c == ':' || c == ',')
            c = '_';
    return atk ? "duplicated/" + n : n;
}

std::vector<std::string> exportAllFigures(const std::string& run, const std::string& dir,
                                          const std::vector<std::string>& formats, int dpi)
{
    namespace fs = std::filesystem;
    std::vector<std::string> written;
    for (const auto& f : availableFigures(run)) {
        const auto figure = makeFigure(run, f.name);
        for (const auto& ext : formats) {
            const auto format = plots::formatFromName(ext);
            if (!format)
                throw Error(ErrorKind::Usage,
                            "unknown format '" + ext + "' (png, svg, pdf, csv, tex)");
            const fs::path path = fs::path(dir) / (figureFileName(f.name) + "." + ext);
            std::error_code ec;
            fs::create_directories(path.parent_path(), ec);
            const QString out = QString::fromStdString(path.string());
            const auto r = figure.plot ? plots::exportFigure(*figure.plot, out, *format, dpi)
                                       : plots::exportHeatmap(*figure.heatmap, out, *format, dpi);
            if (!r.ok)
                throw Error(ErrorKind::Io, r.error.toStdString());
            written.push_back(path.string());
        }
        if (!formats.empty())  // what made it, once per figure (docs/figures.md)
            written.push_back(writeProvenance(
                (fs::path(dir) / (figureFileName(f.name) + "." + formats.front())).string(),
                figureProvenance(figure.sources, f.name, {})));
    }
    return written;
}

std::string runLegend(const engine::RunFileInfo& info)
{
    return info.positionEncoding + " seed " + std::to_string(info.seed) + " (" + info.runId + ")";
}

std::string tokenLabel(int token) { return (token % 2 ? "y_" : "x_") + std::to_string(token / 2); }

std::vector<FigureInfo> availableFigures(const std::string& run)
{
    std::vector<FigureInfo> out{
        {"loss", "training loss and excess loss by step", FigureKind::Training}};
    const auto evals = engine::readEvaluations(run);
    for (const auto& r : evals) {
        if (!r.intervention.empty())
            continue;
        const bool imported = r.source.rfind("metrics.json", 0) == 0;
        out.push_back({(imported ? "imported/" : "") + r.method,
                       "error per position, " + r.method + ", with baselines" +
                           (imported ? " (imported)" : ""),
                       FigureKind::Evaluation});
        if (imported || r.curves.empty())
            continue;
        // Then each intervention of the method that changes it (an identity is the same curve).
        for (const auto& e : evals)
            if (e.method == r.method && !e.intervention.empty() && !e.curves.empty() &&
                e.curves.front().stats.mean != r.curves.front().stats.mean)
                out.push_back({r.method + "+" + e.intervention,
                               "error per position, " + r.method + ", under " + e.intervention +
                                   ", with the untouched model and baselines",
                               FigureKind::Evaluation});
    }
    for (const auto& s : engine::readAttentionSettings(run)) {
        out.push_back({"attention/" + s.name, "last query's attention per head, " + s.name,
                       FigureKind::Probe});
        if (s.name == "long")
            out.push_back(
                {"avg_attention_score", "per-layer attention on y tokens", FigureKind::Probe});
        if (s.mapPrompts > 0)
            out.push_back({"attention_map/" + s.name, "full attention map (heatmap), " + s.name,
                           FigureKind::Heatmap});
    }
    for (const auto& g : engine::readProbeGroups(run)) {
        if (g.path == "duplicated/count_sweep")
            for (const auto& c : g.curves)
                out.push_back({"noise_points=" + c.name.substr(2), "duplicated attack, " + c.name,
                               FigureKind::Probe});
        else if (g.path == "duplicated/inst_noise_target")
            out.push_back({"inst+noise+tar", "instruction + noise + target", FigureKind::Probe});
        else if (g.path == "duplicated/instruction_position") {
            out.push_back({"baseline_all_dup", "all-duplicated baseline", FigureKind::Probe});
            out.push_back(
                {"change_inst_position", "instruction at begin / middle / end", FigureKind::Probe});
        } else if (g.path == "serial_position")
            out.push_back(
                {"lost_in_mid", "serial position (lost in the middle)", FigureKind::Probe});
    }
    return out;
}

DrawnEvaluation drawnEvaluation(const engine::EvalResult& r)
{
    DrawnEvaluation d;
    d.method = r.method;
    d.source = r.source;
    d.intervention = r.intervention;
    d.interventionParams = r.interventionParams;
    d.prompts = r.prompts;
    d.points = r.nPoints;
    d.trainPoints = r.trainPoints;
    d.trainedPoints = r.trainedPoints;
    d.seed = r.seed;
    d.checkpointStep = r.checkpointStep;
    for (const auto& c : r.curves)
        d.curves.push_back(c.label);
    return d;
}

namespace {

// Every intervention of `r`'s method over its figure, except those that equal the model
// here (at the training length most are identities: the same curve again).
void addChangingInterventions(Figure& out, const engine::EvalResult& r,
                              const std::vector<engine::EvalResult>& evals)
{
    for (const auto& e : evals)
        if (e.method == r.method && !e.intervention.empty() && !e.curves.empty() &&
            e.curves.front().stats.mean != r.curves.front().stats.mean) {
            addIntervention(*out.plot, e, false);
            out.sources.evaluations.push_back(drawnEvaluation(e));
        }
}

// The evaluation figure `name` names (a method, "imported/" one, or "method+intervention")
// into `out`; false when the run holds none of that name.
bool evaluationFigureInto(Figure& out, const std::string& run, const std::string& name,
                          const RunFacts& rf)
{
    auto& drawn = out.sources.evaluations;
    const auto evals = engine::readEvaluations(run);
    for (const auto& r : evals) {
        const bool imported = r.source.rfind("metrics.json", 0) == 0;
        if (!r.intervention.empty())
            continue;
        if (name == (imported ? "imported/" : "") + r.method) {
            out.plot = evalFigure(r, rf);
            drawn.push_back(drawnEvaluation(r));
            if (!imported && !r.curves.empty())
                addChangingInterventions(out, r, evals);
            return true;
        }
        for (const auto& e : evals)
            if (!imported && e.method == r.method && !e.intervention.empty() &&
                name == r.method + "+" + e.intervention) {
                out.plot = evalFigure(r, rf);
                addIntervention(*out.plot, e, true);
                drawn.push_back(drawnEvaluation(r));
                drawn.push_back(drawnEvaluation(e));
                out.plot->title += " - under " + e.intervention + " (" + e.interventionParams + ")";
                return true;
            }
    }
    return false;
}

// The attention figure or map `name` names, of the first stored setting that has it, into
// `out`; false when none has.
bool attentionFigureInto(Figure& out, const std::string& run, const std::string& name,
                         const MapSelection& map, const RunFacts& rf)
{
    for (const auto& s : engine::readAttentionSettings(run, map.intervention)) {
        if (name == "attention/" + s.name)
            out.plot = attentionFigure(s, rf);
        else if (name == "avg_attention_score" && s.name == "long")
            out.plot = averageAttentionFigure(s, rf);
        else if (name == "attention_map/" + s.name && s.mapPrompts > 0)
            out.heatmap = mapFigure(run, s, map, rf);
        if (out.plot || out.heatmap)
            return true;
    }
    return false;
}

// The probe figure `name` names into `out`, when the run holds its probe group.
void probeFigureInto(Figure& out, const std::string& run, const std::string& name,
                     const RunFacts& rf)
{
    const auto groups = engine::readProbeGroups(run);
    if (name.rfind("noise_points=", 0) == 0) {
        if (const auto* g = group(groups, "duplicated/count_sweep"))
            if (const auto* c = curveNamed(*g, "c=" + name.substr(13)))
                out.plot = countSweepFigure(*g, *c);
    } else if (name == "inst+noise+tar") {
        if (const auto* g = group(groups, "duplicated/inst_noise_target"))
            out.plot = layoutsFigure(*g, "duplicated attack on " + g->model,
                                     {{"begin", "begin"}, {"middle", "middle"}, {"end", "end"}},
                                     "random", "Random points", "target");
    } else if (name == "baseline_all_dup") {
        if (const auto* g = group(groups, "duplicated/instruction_position"))
            out.plot = layoutsFigure(*g, "duplicated attack on " + g->model, {}, "all_duplicated",
                                     "All duplicated", "");
    } else if (name == "change_inst_position") {
        if (const auto* g = group(groups, "duplicated/instruction_position"))
            out.plot = layoutsFigure(*g, "Changing inst on " + g->model,
                                     {{"begin", "instruction at begin"},
                                      {"middle", "instruction at middle"},
                                      {"end", "instruction at end"}},
                                     "all_duplicated", "All duplicated", "instruction");
    } else if (name == "lost_in_mid") {
        if (const auto* g = group(groups, "serial_position"))
            out.plot = lostInMiddleFigure(*g, rf);
    }
}

}  // namespace

Figure makeFigure(const std::string& run, const std::string& name, const MapSelection& map)
{
    const auto rf = facts(run);
    Figure out;
    out.sources.run = rf.info;
    if (name == "loss") {
        out.plot = lossFigure(run, rf);
        return out;
    }
    if (evaluationFigureInto(out, run, name, rf) || attentionFigureInto(out, run, name, map, rf))
        return out;
    probeFigureInto(out, run, name, rf);
    if (!out.plot && !out.heatmap)
        throw Error(ErrorKind::Usage, "no figure '" + name +
                                          "' for this run (see export --list; "
                                          "run `lengen eval` / `lengen probe` first)");
    return out;
}

}  // namespace lengen::figures
