// Training-free length extension (docs/interventions.md) on trained quick-preset runs: each
// intervention at its identity setting equals the plain forward bit for bit, every one keeps
// causality, refusals name the backbone or PE, results are stored per (method, intervention)
// and survive an interruption, and an independent PyTorch implementation
// (tests/interop/interventions_ref.py, written from the papers) agrees per position.

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "data/tasks.h"
#include "eval/eval_methods.h"
#include "eval/interventions.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/encodings.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/probes.h"
#include "lengen/engine/trainer.h"
#include "test_support.h"

using namespace lengen::engine;
namespace fs = std::filesystem;

namespace {

// Cancels the evaluation when its `stopAt`-th unit begins.
class StopAtStage : public AnalysisObserver {
public:
    StopAtStage(RunControl& c, int stopAt) : m_control(c), m_stopAt(stopAt) {}
    void onStage(int index, int, const std::string&) override
    {
        if (index == m_stopAt)
            m_control.requestCancel();
    }

private:
    RunControl& m_control;
    int m_stopAt;
};

// The quick preset of `pe`, cut to 40 steps.
RunConfig quickConfig(const std::string& pe)
{
    auto config =
        loadConfigFile(lengen::test::sourcePath("configs/quick/linear_regression_" + pe + ".yaml"))
            .runs.at(0);
    config.training.maxSteps = 40;
    return config;
}

// A quick preset trained for a few steps (the weights' values do not matter here, their
// shapes and the forward's paths do).
std::string quickRun(const std::string& pe)
{
    static std::map<std::string, std::string> made;
    if (made.count(pe))
        return made[pe];
    return made[pe] = lengen::test::trainConfig(quickConfig(pe),
                                                lengen::test::scratchDir("interventions-" + pe), 3);
}

AnalysisOptions cpu()
{
    AnalysisOptions o;
    o.device = "cpu";
    o.threads = 1;
    return o;
}

struct Prompts {
    torch::Tensor xs, ys;  // [B, N, D], [B, N]
};

Prompts prompts(const RunConfig& cfg, std::int64_t n, std::uint64_t seed = 5)
{
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    data::TaskSampler sampler(cfg.task.name, data::TaskShape{4, cfg.inputDims()});
    auto f = sampler.sample(gen);
    Prompts p;
    p.xs = f->sampleXs(n, cfg.inputDims(), gen);
    p.ys = f->evaluate(p.xs);
    return p;
}

torch::Tensor run(eval::LoadedRun& r, const Prompts& p, const std::string& spec)
{
    const auto edit =
        eval::resolveIntervention(parseInterventions(spec).at(0), r.config, p.xs.size(1));
    const auto plan = eval::planForward(r.config, p.xs.size(0), 2 * p.xs.size(1), 1e9);
    return eval::predictWith(r, p.xs, p.ys, plan, edit, 1e9);
}

torch::Tensor plain(eval::LoadedRun& r, const Prompts& p)
{
    return eval::predict(r, p.xs, p.ys,
                         eval::planForward(r.config, p.xs.size(0), 2 * p.xs.size(1), 1e9));
}

// The interventions that change a long forward of a run, with non-default values where a
// default would be an identity: every candidate the intervention table does not refuse for it.
std::vector<std::string> activeFor(const RunConfig& config)
{
    std::vector<std::string> out;
    for (const char* s : {"truncate", "segments", "segments:weight=size", "lambda",
                          "lambda:global=4,local=10,cap=6", "window", "logit_scale", "longheads",
                          "longheads:chunk=4,budget=12", "mamba_dt", "pi", "ntk", "dynamic_ntk",
                          "dynamic_ntk:alpha=2", "yarn", "yarn:factor=3,beta_fast=16,beta_slow=2"})
        if (interventionRefusal(parseInterventions(s).at(0), config).empty())
            out.push_back(s);
    return out;
}

std::vector<std::string> activeFor(const std::string& pe) { return activeFor(quickConfig(pe)); }

}  // namespace

class TestInterventions final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void parsesTheSharedSyntax();
    void tableDrivesParsingAndResolution();
    void originalLengthIsAParameter();
    void refusesWhatDoesNotApply();
    void identitySettingsAreBitwisePlain();
    void everyInterventionIsCausal();
    void interventionsChangeLongPredictions();
    void storedPerMethodAndInterventionAndKeptOnInterrupt();
    void cliPairsWithTheStoredEvaluation();
    void probesUnderAnIntervention();
    void pytorchReferenceAgrees();
    void randomPositionsAtTestTime();
};

void TestInterventions::parsesTheSharedSyntax()
{
    const auto specs = parseInterventions("lambda:global=2,local=train,yarn, truncate");
    QCOMPARE(specs.size(), size_t(3));
    QCOMPARE(specs[0].text(), std::string("lambda:global=2,local=train"));
    QCOMPARE(specs[1].text(), std::string("yarn"));
    QCOMPARE(specs[2].name, std::string("truncate"));
    QCOMPARE(parseInterventions("yarn,yarn").size(), size_t(1));
    for (const char* bad : {"yarm", "yarn:factor", "yarn:beta=3", "global=2",
                            "yarn:factor=1,factor=2", "window:local="}) {
        try {
            parseInterventions(bad);
            QFAIL(bad);
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Config);
        }
    }
    const auto cfg = eval::loadRun(quickRun("rope"), cpu()).config;  // 9 training points
    const auto yarn = describeIntervention(parseInterventions("yarn").at(0), cfg, 72);
    QVERIFY2(yarn.find("factor=8") != std::string::npos, yarn.c_str());
    QCOMPARE(describeIntervention(parseInterventions("lambda").at(0), cfg, 72),
             std::string("global=2, local=18, cap=18"));
    for (const char* bad : {"yarn:factor=-1", "window:local=0", "window:local=2.5",
                            "segments:weight=median", "longheads:chunk=10,budget=12"})
        try {
            describeIntervention(parseInterventions(bad).at(0), cfg, 72);
            QFAIL(bad);
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Config);
        }
}

// Every row of the table: its name parses, every parameter it lists is accepted, its example
// parses to itself and resolves on a run it applies to, and it has a summary and a colour.
void TestInterventions::tableDrivesParsingAndResolution()
{
    const auto rope = eval::loadRun(quickRun("rope"), cpu()).config;
    const auto mamba = eval::loadRun(quickRun("mamba"), cpu()).config;
    QCOMPARE(interventionNames().size(), interventionTable().size());
    for (const auto& row : interventionTable()) {
        QCOMPARE(parseInterventions(row.name).at(0).name, row.name);
        QVERIFY2(!row.summary.empty(), row.name.c_str());
        QVERIFY2(row.color.size() == 7 && row.color[0] == '#', row.name.c_str());
        for (const auto& param : row.params)
            QCOMPARE(parseInterventions(row.name + ":" + param.key + "=2").at(0).params.at(0).first,
                     param.key);
        const auto example = parseInterventions(row.example);
        QCOMPARE(example.size(), size_t(1));
        QCOMPARE(example[0].name, row.name);
        auto randomRope = rope;  // random_positions applies to runs trained with them
        randomRope.training.randomPositions = 144;
        const auto& config = row.scope == InterventionScope::Recurrent         ? mamba
                             : row.scope == InterventionScope::RandomPositions ? randomRope
                                                                               : rope;
        QVERIFY2(interventionRefusal(example[0], config).empty(), row.example.c_str());
        QVERIFY2(!describeIntervention(example[0], config, 72).empty(), row.example.c_str());
        QCOMPARE(findIntervention(row.name), &row);
    }
    QVERIFY(!findIntervention("rerope"));
}

// yarn, pi, ntk and dynamic_ntk take the original length L: the training length in tokens by
// default (18 on the quick preset), `config` for max_position_embeddings (the reference's YaRN,
// 26 there), or a number. It sets the default factor (eval tokens / L) and YaRN's ramp.
void TestInterventions::originalLengthIsAParameter()
{
    auto r = eval::loadRun(quickRun("rope"), cpu());
    QCOMPARE(r.config.model.maxPositionEmbeddings, 26);
    auto describe = [&](const std::string& spec) {
        return describeIntervention(parseInterventions(spec).at(0), r.config, 72);  // 144 tokens
    };
    QCOMPARE(describe("yarn"),
             std::string("factor=8, beta_fast=32, beta_slow=1, mscale=1.20794, original=18"));
    QCOMPARE(describe("yarn:original=train"), describe("yarn"));
    QCOMPARE(describe("yarn:original=config"),
             std::string("factor=5.53846, beta_fast=32, beta_slow=1, mscale=1.17117, original=26"));
    QCOMPARE(describe("pi:original=36"), std::string("factor=4, original=36"));
    QCOMPARE(describe("dynamic_ntk:original=config"), std::string("alpha=1, original=26"));
    for (const char* bad : {"yarn:original=1", "yarn:original=maybe", "ntk:original=2.5"})
        try {
            describe(bad);
            QFAIL(bad);
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("original=") != std::string::npos, e.what());
        }
    // The forward reads it: the reference's L gives other predictions than the default, and
    // L written as the training length is the default bit for bit.
    const auto p = prompts(r.config, 72);
    const auto byTrain = run(r, p, "yarn");
    QVERIFY(torch::equal(run(r, p, "yarn:original=18"), byTrain));
    QVERIFY(!torch::allclose(run(r, p, "yarn:original=config"), byTrain));
    QVERIFY(!torch::allclose(run(r, p, "yarn:original=config,factor=8"), byTrain));
}

void TestInterventions::refusesWhatDoesNotApply()
{
    const auto alibi = eval::loadRun(quickRun("alibi"), cpu()).config;
    const auto mamba = eval::loadRun(quickRun("mamba"), cpu()).config;
    const auto yarnOnAlibi = interventionRefusal(parseInterventions("yarn").at(0), alibi);
    QVERIFY2(yarnOnAlibi.find("yarn") != std::string::npos &&
                 yarnOnAlibi.find("ALiBi") != std::string::npos,
             yarnOnAlibi.c_str());
    QVERIFY(!interventionRefusal(parseInterventions("mamba_dt").at(0), alibi).empty());
    QVERIFY(!interventionRefusal(parseInterventions("lambda").at(0), mamba).empty());
    QVERIFY(interventionRefusal(parseInterventions("segments").at(0), mamba).empty());
    QCOMPARE(applicableInterventions(mamba),
             (std::vector<std::string>{"none", "truncate", "segments", "mamba_dt"}));
    // The CLI: exit 2 with both names, nothing stored.
    const auto r =
        lengen::test::runLengen({"eval", QString::fromStdString(quickRun("alibi")), "--methods",
                                 "standard", "--intervention", "yarn", "--prompts", "4", "-q"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("yarn") && r.err.contains("ALiBi"), qPrintable(r.err));
    QVERIFY(!fs::exists(analysisFileFor(quickRun("alibi"))));
}

void TestInterventions::identitySettingsAreBitwisePlain()
{
    for (const std::string pe : {"rope", "alibi", "fire", "mamba"}) {
        auto r = eval::loadRun(quickRun(pe), cpu());
        const std::int64_t train = r.config.trainPoints();
        // At the training length every default is an identity.
        const auto shortP = prompts(r.config, train);
        const auto ref = plain(r, shortP);
        for (const auto& spec : applicableInterventions(r.config))
            QVERIFY2(torch::equal(run(r, shortP, spec), ref), (pe + " " + spec).c_str());
        // Beyond it: factor 1, windows and budgets that cover the prompt.
        const auto longP = prompts(r.config, 3 * train);
        const auto longRef = plain(r, longP);
        const std::string t = std::to_string(6 * train);
        std::vector<std::string> ids{"segments:points=" + std::to_string(3 * train),
                                     "truncate:points=" + std::to_string(3 * train)};
        if (pe == "mamba") {
            ids.push_back("mamba_dt:factor=1");
        } else {
            for (const auto& s : {"window:local=" + t, "lambda:local=" + t, "longheads:budget=" + t,
                                  "logit_scale:length=" + t})
                ids.push_back(s);
            if (pe == "rope")
                for (const char* s : {"pi:factor=1", "ntk:factor=1", "yarn:factor=1,mscale=1"})
                    ids.push_back(s);
        }
        for (const auto& spec : ids)
            QVERIFY2(torch::equal(run(r, longP, spec), longRef), (pe + " " + spec).c_str());
    }
}

void TestInterventions::everyInterventionIsCausal()
{
    // Every encoding of the table with every intervention it takes (GPT-2's positions end
    // before 3x the training length). Under the sanitizer a sample: each intervention once, on
    // the first encoding that takes it (200 pairs of forwards and 18 trainings took 200 s
    // there; the encodings' own code is the sanitized tst_position_encodings').
    std::set<std::string> seen;
    for (const auto& e : encodingTable()) {
        const std::string pe = e.name;
        if (pe == "gpt2")
            continue;
        std::vector<std::string> specs;
        for (const auto& spec : activeFor(pe))
            if (seen.insert(spec).second || !lengen::test::kUnderSanitizer)
                specs.push_back(spec);
        if (specs.empty())
            continue;
        auto r = eval::loadRun(quickRun(pe), cpu());
        const auto p = prompts(r.config, 3 * r.config.trainPoints());
        const std::int64_t at = 2 * r.config.trainPoints() + 1;
        auto changed = p;
        changed.xs = p.xs.clone();
        changed.ys = p.ys.clone();
        changed.xs.select(1, at).add_(1.5);
        changed.ys.select(1, at - 1).add_(-2.0);
        for (const auto& spec : specs) {
            const auto a = run(r, p, spec), b = run(r, changed, spec);
            QVERIFY2(torch::equal(a.slice(1, 0, at), b.slice(1, 0, at)), (pe + " " + spec).c_str());
            QVERIFY2(!torch::allclose(a.slice(1, at), b.slice(1, at)), (pe + " " + spec).c_str());
        }
    }
}

void TestInterventions::interventionsChangeLongPredictions()
{
    // A test that could not fail if an intervention were silently ignored.
    for (const std::string pe : {"rope", "alibi", "mamba"}) {
        auto r = eval::loadRun(quickRun(pe), cpu());
        const auto p = prompts(r.config, 4 * r.config.trainPoints());
        const auto ref = plain(r, p);
        for (const auto& spec : activeFor(pe)) {
            const auto out = run(r, p, spec);
            QCOMPARE(out.sizes(), ref.sizes());
            QVERIFY2(torch::isfinite(out).all().item<bool>(), (pe + " " + spec).c_str());
            QVERIFY2(!torch::allclose(out, ref), (pe + " " + spec).c_str());
        }
    }
}

// `lengen eval --intervention` on a run with a stored plain evaluation takes its prompts, seed
// and OOD factor (the studio's pairing, now the engine's), unless the command line names them.
void TestInterventions::cliPairsWithTheStoredEvaluation()
{
    const auto dir = lengen::test::scratchDir("pairing");
    fs::copy(fs::path(quickRun("alibi")).parent_path(), dir + "/run", fs::copy_options::recursive);
    fs::remove(dir + "/run/analysis.h5");
    const QString runDir = QString::fromStdString(dir + "/run");
    auto r = lengen::test::runLengen(
        {"eval", runDir, "--methods", "standard,ood_length", "--prompts", "16", "--seed", "7",
         "--ood-factor", "3", "--bootstrap", "10", "--no-baselines", "--threads", "1", "-q"});
    QCOMPARE(r.code, 0);
    r = lengen::test::runLengen({"eval", runDir, "--methods", "ood_length", "--intervention",
                                 "window", "--bootstrap", "10", "--threads", "1"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.contains("paired with the stored plain evaluation: 16 prompts, seed 7, 3×"),
             qPrintable(r.err));
    r = lengen::test::runLengen({"eval", runDir, "--methods", "ood_length", "--intervention",
                                 "truncate", "--prompts", "8", "--bootstrap", "10", "--threads",
                                 "1"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.contains("paired with the stored plain evaluation: seed 7, 3×"),
             qPrintable(r.err));
    int checked = 0;
    for (const auto& e : readEvaluations(dir + "/run")) {
        if (e.intervention == "window") {
            QCOMPARE(e.prompts, 16);
            QCOMPARE(e.seed, std::uint64_t(7));
            QCOMPARE(e.nPoints, 3 * e.trainPoints);
            ++checked;
        }
        if (e.intervention == "truncate") {  // its own prompts, the stored seed and length
            QCOMPARE(e.prompts, 8);
            QCOMPARE(e.seed, std::uint64_t(7));
            QCOMPARE(e.nPoints, 3 * e.trainPoints);
            ++checked;
        }
        // The plain evaluation done again beside them keeps the stored length (a default 8x
        // replaced the stored 3x before).
        if (e.intervention.empty() && e.method == "ood_length") {
            QCOMPARE(e.nPoints, 3 * e.trainPoints);
            ++checked;
        }
    }
    QCOMPARE(checked, 3);
}

void TestInterventions::storedPerMethodAndInterventionAndKeptOnInterrupt()
{
    const auto runFile = quickRun("nope");
    EvalOptions o;
    o.methods = {"standard", "ood_length"};
    o.prompts = 8;
    o.batchSize = 8;
    o.oodFactor = 3;
    o.common = cpu();
    o.common.bootstrapTrials = 20;
    o.interventions = {"window", "truncate"};
    // Units: standard, standard+window, standard+truncate, ood_length, ood_length+window, ...
    RunControl control;
    StopAtStage stop(control, 4);
    const auto cut = evaluateRun(runFile, o, control, stop);
    QVERIFY(cut.cancelled);
    QCOMPARE(cut.computed, (std::vector<std::string>{"standard", "standard+window",
                                                     "standard+truncate", "ood_length"}));
    auto stored = readEvaluations(runFile);
    QCOMPARE(stored.size(), size_t(4));
    RunControl again;
    AnalysisObserver quiet;
    const auto rest = evaluateRun(runFile, o, again, quiet);
    QCOMPARE(rest.computed, (std::vector<std::string>{"ood_length+window", "ood_length+truncate"}));
    QCOMPARE(rest.skipped.size(), size_t(4));
    stored = readEvaluations(runFile);  // a fresh read of the file: what a reopen sees
    QCOMPARE(stored.size(), size_t(6));
    const EvalResult* plainOod = nullptr;
    const EvalResult* window = nullptr;
    for (const auto& e : stored) {
        if (e.method == "ood_length" && e.intervention.empty())
            plainOod = &e;
        if (e.method == "ood_length" && e.intervention == "window")
            window = &e;
    }
    QVERIFY(plainOod && window);
    QCOMPARE(window->curves.size(), size_t(1));  // the model only; baselines are the plain ones
    QCOMPARE(window->curves[0].label, std::string("NoPE + window"));
    QCOMPARE(window->interventionParams, std::string("local=18"));
    QCOMPARE(window->nPoints, plainOod->nPoints);
    // Same prompts: identical up to the window, different beyond it.
    const auto& a = plainOod->curves[0].stats.mean;
    const auto& b = window->curves[0].stats.mean;
    for (size_t k = 0; k < 9; ++k)
        QCOMPARE(a[k], b[k]);
    QVERIFY(a.back() != b.back());
    const auto contents = analysisContents(runFile);
    QCOMPARE(contents.interventions, (std::vector<std::string>{"truncate", "window"}));
}

void TestInterventions::probesUnderAnIntervention()
{
    const auto runFile = quickRun("alibi");
    ProbeOptions o;
    o.attention = true;
    o.attentionPrompts = 2;
    o.longPoints = 30;
    o.mapPrompts = 1;
    o.common = cpu();
    o.common.bootstrapTrials = 10;
    o.intervention = "lambda:global=2,local=8";
    RunControl control;
    AnalysisObserver quiet;
    QCOMPARE(probeRun(runFile, o, control, quiet).computed, std::vector<std::string>{"attention"});
    QVERIFY(readAttentionSettings(runFile).empty());  // the plain results are untouched
    const auto settings = readAttentionSettings(runFile, o.intervention);
    QVERIFY(!settings.empty());
    // The Λ shape in the stored map of the long setting: the last query sees tokens 0, 1 and
    // the last 8, nothing between.
    for (const auto& s : settings) {
        if (s.name != "long")
            continue;
        const int q = s.query;
        const auto row =
            readAttentionTile(runFile, "long", 0, 0, 0, q, q + 1, 0, s.tokens, o.intervention);
        QVERIFY(row[0] > 0 && row[1] > 0);
        for (int j = 2; j <= q - 8; ++j)
            QCOMPARE(row[size_t(j)], 0.0f);
        QVERIFY(row[size_t(q)] > 0 && row[size_t(q - 7)] > 0);
    }
    QVERIFY(fs::exists(fs::path(runFile).parent_path() / attentionMapsName(o.intervention)));
}

void TestInterventions::pytorchReferenceAgrees()
{
    const QString python = lengen::test::pythonPath();
    const auto probe = lengen::test::runProgram(python, {"-c", "import torch, yaml"});
    if (probe.code != 0)
        QSKIP("needs a Python with torch and yaml (python3-torch, python3-yaml)");
    // Under the sanitizer one encoding: the Python side is not sanitized, and the C++ side
    // (export-run, the forwards) is the same for each.
    std::vector<std::string> encodings{"rope", "alibi", "fire", "nope", "mamba"};
    if (lengen::test::kUnderSanitizer)
        encodings = {"alibi"};
    for (const std::string& pe : encodings) {
        const auto runFile = quickRun(pe);
        auto r = eval::loadRun(runFile, cpu());
        const auto dir = lengen::test::scratchDir("interventions-ref-" + pe);
        const auto exported =
            lengen::test::runLengen({"export-run", QString::fromStdString(runFile), "--out",
                                     QString::fromStdString(dir + "/ref"), "-q"});
        QVERIFY2(exported.code == 0, qPrintable(exported.err));
        const auto p = prompts(r.config, 4 * r.config.trainPoints(), 9);
        // Nested lists [B][N][D] / [B][N], doubles.
        std::function<nlohmann::json(const torch::Tensor&)> toJson = [&](const torch::Tensor& t) {
            nlohmann::json j = nlohmann::json::array();
            if (t.dim() == 1) {
                auto c = t.contiguous().to(torch::kDouble);
                for (std::int64_t i = 0; i < c.size(0); ++i)
                    j.push_back(c[i].item<double>());
                return j;
            }
            for (std::int64_t i = 0; i < t.size(0); ++i)
                j.push_back(toJson(t[i]));
            return j;
        };
        // "factor=8, beta_fast=32" -> {"factor": 8, "beta_fast": 32} (numbers where numeric).
        auto paramsJson = [](const std::string& text) {
            nlohmann::json j = nlohmann::json::object();
            std::stringstream in(text);
            std::string item;
            while (std::getline(in, item, ',')) {
                const auto eq = item.find('=');
                if (eq == std::string::npos)
                    continue;
                auto key = item.substr(0, eq);
                key.erase(0, key.find_first_not_of(' '));
                const auto value = item.substr(eq + 1);
                char* end = nullptr;
                const double v = std::strtod(value.c_str(), &end);
                if (end != value.c_str() && *end == '\0' && v == std::floor(v) &&
                    std::abs(v) < 1e15)
                    j[key] = static_cast<std::int64_t>(v);  // counts stay integers
                else if (end != value.c_str() && *end == '\0')
                    j[key] = v;
                else
                    j[key] = value;
            }
            return j;
        };
        nlohmann::json fx;
        fx["xs"] = toJson(p.xs);
        fx["ys"] = toJson(p.ys);
        fx["train_points"] = r.config.trainPoints();
        std::vector<std::string> cases{"none"};
        for (const auto& s : activeFor(pe))
            cases.push_back(s);
        for (const auto& spec : cases) {
            const auto parsed = parseInterventions(spec).at(0);
            const auto edit = eval::resolveIntervention(parsed, r.config, p.xs.size(1));
            nlohmann::json c;
            c["name"] = spec;
            c["kind"] = parsed.name;
            c["params"] = paramsJson(edit.description);
            c["predictions"] = toJson(run(r, p, spec));
            fx["cases"].push_back(c);
        }
        std::ofstream(dir + "/fixture.json") << fx.dump();
        const auto res = lengen::test::runProgram(
            python,
            {QString::fromStdString(lengen::test::sourcePath("tests/interop/interventions_ref.py")),
             "check", QString::fromStdString(dir + "/ref"),
             QString::fromStdString(dir + "/fixture.json")},
            600000);
        qInfo().noquote() << pe.c_str() << "\n" << res.out;
        QVERIFY2(res.code == 0, qPrintable(res.out + res.err));
    }
}

// random_positions reads a run trained with randomized positions at test positions drawn the
// same way: refused for a run trained at 0..T-1; a prompt that fills the range is the plain
// forward bit for bit; a prompt's positions do not depend on the batch it comes in; a shorter
// prompt is read elsewhere than 0..T-1; a range shorter than the prompt is refused by name.
void TestInterventions::randomPositionsAtTestTime()
{
    const auto spec = parseInterventions("random_positions").at(0);
    auto plainRun = eval::loadRun(quickRun("rope"), cpu());
    QVERIFY(interventionRefusal(spec, plainRun.config).find("positions 0..T-1") !=
            std::string::npos);
    auto config = quickConfig("rope");
    config.training.randomPositions = 40;
    auto r = eval::loadRun(
        lengen::test::trainConfig(config, lengen::test::scratchDir("interventions-random"), 3),
        cpu());
    QVERIFY(interventionRefusal(spec, r.config).empty());
    const auto full = prompts(r.config, 20);  // 40 tokens: the whole range
    QVERIFY(torch::equal(run(r, full, "random_positions"), plain(r, full)));
    const auto p = prompts(r.config, 9);  // 18 tokens of 40
    const auto all = run(r, p, "random_positions");
    QVERIFY(!torch::allclose(all, plain(r, p)));
    Prompts firstTwo{p.xs.slice(0, 0, 2), p.ys.slice(0, 0, 2)};
    QVERIFY(torch::equal(run(r, firstTwo, "random_positions"), all.slice(0, 0, 2)));
    QVERIFY(!torch::equal(run(r, p, "random_positions:seed=1"), all));
    try {
        eval::resolveIntervention(parseInterventions("random_positions:range=10").at(0), r.config,
                                  9);
        QFAIL("a range shorter than the prompt");
    } catch (const Error& e) {
        QVERIFY2(std::string(e.what()).find("range=10") != std::string::npos, e.what());
    }
}

QTEST_GUILESS_MAIN(TestInterventions)
#include "tst_interventions.moc"
