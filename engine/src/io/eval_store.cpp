// Reading stored evaluation results, and importing the reference's metrics.json (§6.6) so
// that curves computed by the Python code can be shown next to LenGen's.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "io/analysis_store.h"
#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"

namespace fs = std::filesystem;

namespace lengen::engine {

namespace {

EvalResult readMethod(hid_t parent, const std::string& method, const std::string& path)
{
    io::H5Lock lock(io::h5Mutex());
    auto g = io::openGroup(parent, method, path);
    const auto bad = [&](const std::string& what) {
        return Error(ErrorKind::RunFile,
                     "evaluation '" + method + "' in " + path + ": " + what + " (damaged file)");
    };
    // Counts are read once, range-checked, then narrowed: printing and plotting index every
    // curve up to n_points.
    const auto count = [&](const char* name, std::int64_t least) {
        const auto v = io::intAttr(g.id(), name, least, path);
        if (v < least || v > 100'000'000)
            throw bad(std::string(name) + " is " + std::to_string(v));
        return static_cast<int>(v);
    };
    EvalResult r;
    r.method = method;
    r.checkpointStep = io::intAttr(g.id(), "checkpoint_step", 0, path);
    r.prompts = count("prompts", 0);
    r.seed = io::hasAttribute(g.id(), "seed") ? io::readUIntAttribute(g.id(), "seed", path) : 0;
    r.nPoints = count("n_points", 1);
    r.trainPoints = count("train_points", 0);
    r.trainedPoints = io::hasAttribute(g.id(), "trained_points") ? count("trained_points", 1) : 0;
    r.dims = count("dims", 0);
    r.zeroEstimator = io::doubleAttr(g.id(), "zero_estimator", r.dims, path);
    r.classification = io::intAttr(g.id(), "classification", 0, path) != 0;
    r.source = io::stringAttr(g.id(), "source", path);
    if (io::hasAttribute(g.id(), "intervention")) {
        r.intervention = io::stringAttr(g.id(), "intervention", path);
        r.interventionParams = io::stringAttr(g.id(), "parameters", path);
        if (r.intervention.empty())
            throw bad("its intervention attribute is empty");
    }
    for (const auto& key : io::readOrder(g.id(), path))
        r.curves.push_back(io::readCurve(g.id(), key, path));
    for (const auto& c : r.curves)
        if (c.stats.mean.size() != size_t(r.nPoints))
            throw bad("curve '" + c.model + "' has " + std::to_string(c.stats.mean.size()) +
                      " positions, n_points says " + std::to_string(r.nPoints));
    return r;
}

std::vector<double> numbers(const nlohmann::ordered_json& j, const std::string& where)
{
    if (!j.is_array())
        throw Error(ErrorKind::Config, where + ": expected a list of numbers");
    std::vector<double> out;
    for (const auto& v : j) {
        if (!v.is_number())
            throw Error(ErrorKind::Config, where + ": expected a list of numbers");
        out.push_back(v.get<double>());
    }
    return out;
}

std::string safeName(std::string s)
{
    for (auto& c : s)
        if (c == '/')
            c = '_';
    return s.empty() ? "_" : s;
}

}  // namespace

namespace io {

StoredEvaluations readStoredEvaluations(const std::string& run)
{
    const auto path = analysisFileFor(run);
    StoredEvaluations out;
    if (!fs::exists(path))
        return out;
    auto file = io::openAnalysis(path);
    io::H5Lock lock(io::h5Mutex());
    if (io::exists(file.id(), "eval")) {
        auto g = io::openGroup(file.id(), "eval", path);
        for (const auto& m : io::memberNames(g.id()))
            out.plain.push_back(readMethod(g.id(), m, path));
    }
    if (io::exists(file.id(), "imported")) {
        auto imp = io::openGroup(file.id(), "imported", path);
        for (const auto& label : io::memberNames(imp.id())) {
            auto g = io::openGroup(imp.id(), label, path);
            for (const auto& m : io::memberNames(g.id()))
                out.imported.push_back(readMethod(g.id(), m, path));
        }
    }
    if (io::exists(file.id(), "interventions")) {
        auto all = io::openGroup(file.id(), "interventions", path);
        for (const auto& spec : io::memberNames(all.id())) {
            auto g = io::openGroup(all.id(), spec, path);
            std::vector<EvalResult> these;
            for (const auto& m : io::memberNames(g.id())) {
                these.push_back(readMethod(g.id(), m, path));
                if (these.back().intervention != spec)
                    throw Error(ErrorKind::RunFile,
                                "evaluation '" + m + "' under '" + spec + "' in " + path +
                                    " names the intervention '" + these.back().intervention +
                                    "' (damaged file)");
            }
            out.interventions.emplace_back(spec, std::move(these));
        }
    }
    io::TrainedLength trained(run);  // results stored before they recorded it
    auto fill = [&](std::vector<EvalResult>& results) {
        for (auto& r : results)
            if (r.trainedPoints == 0)
                r.trainedPoints = trained.at(r.checkpointStep, r.trainPoints);
    };
    fill(out.plain);
    fill(out.imported);
    for (auto& [spec, results] : out.interventions)
        fill(results);
    return out;
}

}  // namespace io

AnalysisContents storedAnalysisContents(const std::string& run)
{
    const auto path = analysisFileFor(run);
    AnalysisContents out;
    if (!fs::exists(path))
        return out;
    auto file = io::openAnalysis(path);
    io::H5Lock lock(io::h5Mutex());
    if (io::exists(file.id(), "eval")) {
        out.evalMethods = io::memberNames(io::openGroup(file.id(), "eval", path).id());
    }
    if (io::exists(file.id(), "probes")) {
        auto probes = io::openGroup(file.id(), "probes", path);
        for (const char* kind : {"attention", "duplicated", "serial_position"})
            if (io::exists(probes.id(), kind))
                out.probes.push_back(kind);
    }
    if (io::exists(file.id(), "imported"))
        out.importedLabels = io::memberNames(io::openGroup(file.id(), "imported", path).id());
    if (io::exists(file.id(), "interventions"))
        out.interventions = io::memberNames(io::openGroup(file.id(), "interventions", path).id());
    if (io::exists(file.id(), "intervention_probes"))
        out.probeInterventions =
            io::memberNames(io::openGroup(file.id(), "intervention_probes", path).id());
    return out;
}

std::vector<std::string> importMetricsJson(const std::string& jsonPath, const std::string& run,
                                           const std::string& label)
{
    std::ifstream in(jsonPath);
    if (!in)
        throw Error(ErrorKind::Io, "cannot read " + jsonPath);
    nlohmann::ordered_json doc;
    try {
        doc = nlohmann::ordered_json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
        throw Error(ErrorKind::Config,
                    jsonPath + ": not valid JSON (byte " + std::to_string(e.byte) + ")", e.what());
    }
    if (!doc.is_object() || doc.empty())
        throw Error(ErrorKind::Config, jsonPath + ": expected {method: {model: {mean, std, "
                                                  "bootstrap_low, bootstrap_high}}}");
    const auto runFile = locateRunFile(run);
    const auto info = readRunInfo(runFile);
    const auto cfg = storedRunConfig(info.configYaml, runFile);
    io::AnalysisWriter writer(analysisFileFor(run), info.runId);
    std::vector<std::string> methods;
    for (const auto& [method, models] : doc.items()) {
        const std::string where = jsonPath + ": " + method;
        if (!models.is_object())
            throw Error(ErrorKind::Config, where + ": expected an object of models");
        auto grp = writer.group("imported/" + safeName(label) + "/" + safeName(method), true);
        io::H5Lock lock(io::h5Mutex());
        const auto& p = writer.path();
        std::string order;
        std::int64_t n = 0;
        for (const auto& [model, stats] : models.items()) {
            CurveStats s;
            for (const auto& [key, field] : {std::pair{"mean", &s.mean},
                                             {"std", &s.std},
                                             {"bootstrap_low", &s.bootstrapLow},
                                             {"bootstrap_high", &s.bootstrapHigh}}) {
                if (!stats.contains(key))
                    throw Error(ErrorKind::Config, where + "." + model + ": missing '" + key + "'");
                *field = numbers(stats[key], where + "." + model + "." + key);
            }
            n = static_cast<std::int64_t>(s.mean.size());
            io::writeCurve(grp.id(), safeName(model), model + " (" + label + ")", s, p);
            order += (order.empty() ? "" : "\n") + safeName(model);
        }
        io::writeAttribute(grp.id(), "order", order, p);
        io::writeAttribute(grp.id(), "source", "metrics.json:" + fs::absolute(jsonPath).string(),
                           p);
        io::writeAttribute(grp.id(), "n_points", n, p);
        io::writeAttribute(grp.id(), "train_points", std::int64_t{cfg.trainPoints()}, p);
        io::writeAttribute(
            grp.id(), "trained_points",
            std::int64_t{info.reached.points > 0 ? info.reached.points : cfg.trainPoints()}, p);
        io::writeAttribute(grp.id(), "dims", std::int64_t{cfg.inputDims()}, p);
        io::writeAttribute(grp.id(), "zero_estimator", std::vector<double>{double(cfg.inputDims())},
                           p);
        io::writeAttribute(grp.id(), "classification", std::int64_t{cfg.isClassification()}, p);
        methods.push_back(method);
    }
    writer.commit();
    return methods;
}

}  // namespace lengen::engine
