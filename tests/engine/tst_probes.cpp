// Probes (reference §7–§8): the assembled layouts against hand-computed ones, and the stored
// results of probeRun on a tiny trained run (attention rows are causal distributions, full
// maps read back tile by tile, every curve and span present).

#include <algorithm>
#include <filesystem>

#include "eval/probe_cost.h"
#include "eval/probe_layouts.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/probes.h"
#include "lengen/engine/trainer.h"
#include "test_support.h"

using namespace lengen::engine;
using namespace lengen::engine::eval;
namespace fs = std::filesystem;

namespace {

using Idx = std::vector<std::int64_t>;

Idx seq(std::int64_t first, std::int64_t count)
{
    Idx v(static_cast<size_t>(count));
    for (std::int64_t i = 0; i < count; ++i)
        v[static_cast<size_t>(i)] = first + i;
    return v;
}
Idx rep(std::int64_t index, std::int64_t count) { return Idx(static_cast<size_t>(count), index); }
Idx cat(std::initializer_list<Idx> parts)
{
    Idx out;
    for (const auto& p : parts)
        out.insert(out.end(), p.begin(), p.end());
    return out;
}

const Layout& named(const std::vector<Layout>& all, const std::string& name)
{
    for (const auto& l : all)
        if (l.name == name)
            return l;
    throw std::runtime_error("no layout " + name);
}

class Silent : public AnalysisObserver {};

// What a probe run reports of each stage: (part, done, total) per progress report.
class Recording : public AnalysisObserver {
public:
    void onProgress(const std::string& stage, std::int64_t done, std::int64_t total) override
    {
        reports.push_back({stage, done, total, fraction});
    }
    void onFraction(double ofJob) override { fraction = ofJob; }
    struct Report {
        std::string stage;
        std::int64_t done, total;
        double fraction;  ///< the share of the job's cost said before it (-1: none)
    };
    std::vector<Report> reports;
    double fraction = -1;
};

}  // namespace

class TestProbes final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void defaultSizesFollowTheReference();
    void countSweepLayout();
    void instructionNoiseTargetLayouts();
    void instructionPositionLayouts();
    void serialPositionLayouts();
    void impossibleSizesAreConfigErrors();
    void probeRunStoresEveryProbe();
    void progressIsWeighedByCost();
    void attentionUnderRandomPositions();
};

void TestProbes::defaultSizesFollowTheReference()
{
    // Worked sizes of spec §8.4: D = 20, N = 51 -> instruction 40, answer 20, target 10.
    const auto s = resolveSizes(51, 20, 400, 0, 0, 0);
    QCOMPARE(s.instruction, std::int64_t{40});
    QCOMPARE(s.answer, std::int64_t{20});
    QCOMPARE(s.target, std::int64_t{10});
    QCOMPARE(s.noiseIndex(), std::int64_t{39});
    QCOMPARE(resolveSizes(51, 5, 400, 0, 0, 0).target, std::int64_t{3});  // ceil(5 / 2)
    QCOMPARE(named(eval::serialPositionLayouts(s), "middle").indices.size(), size_t(2 * 165 + 70));
}

void TestProbes::countSweepLayout()
{
    // D = 2, N = 8: instruction x_0..x_3, noise = x_3, target = x_7.
    const auto s = resolveSizes(8, 2, 20, 0, 0, 0);
    const auto c3 = named(countSweepLayouts(s, {3, 10}), "c=3");
    QCOMPARE(c3.indices, cat({seq(0, 5), rep(3, 3), seq(7, 1)}));
    QCOMPARE(c3.spans.at("noise"), (std::pair<std::int64_t, std::int64_t>{5, 8}));
    QCOMPARE(c3.spans.at("target"), (std::pair<std::int64_t, std::int64_t>{8, 9}));
    const auto c10 = named(countSweepLayouts(s, {3, 10}), "c=10");  // more noise than points
    QCOMPARE(c10.indices, cat({rep(3, 10), seq(7, 1)}));
}

void TestProbes::instructionNoiseTargetLayouts()
{
    const auto s = resolveSizes(8, 2, 20, 0, 0, 0);  // L = 20, 2D = 4, M_t = 1
    const auto all = instNoiseTargetLayouts(s);
    QCOMPARE(named(all, "begin").indices, cat({seq(0, 4), rep(3, 4), seq(7, 1)}));
    QCOMPARE(named(all, "middle").indices, cat({seq(0, 4), rep(3, 7), seq(7, 1)}));
    QCOMPARE(named(all, "end").indices, cat({seq(0, 4), rep(3, 15), seq(7, 1)}));
    QCOMPARE(named(all, "end").spans.at("target").first, std::int64_t{19});  // L - M_t
    QCOMPARE(named(all, "middle").spans.at("target").first, std::int64_t{11});
}

void TestProbes::instructionPositionLayouts()
{
    const auto s = resolveSizes(8, 2, 20, 0, 0, 0);
    const auto all = eval::instructionPositionLayouts(s);
    QCOMPARE(named(all, "all_duplicated").indices, rep(3, 20));
    QCOMPARE(named(all, "begin").indices, cat({seq(0, 4), rep(3, 16)}));
    QCOMPARE(named(all, "middle").indices, cat({rep(3, 8), seq(0, 4), rep(3, 8)}));
    QCOMPARE(named(all, "end").indices, cat({rep(3, 16), seq(0, 4)}));
    QCOMPARE(named(all, "middle").spans.at("instruction"),
             (std::pair<std::int64_t, std::int64_t>{8, 12}));
}

void TestProbes::serialPositionLayouts()
{
    // D = 2, N = 8, L = 20: R = 20 - 4 - 2 - 1 = 13; answer = x_6, x_7; target = x_7.
    const auto s = resolveSizes(8, 2, 20, 0, 0, 0);
    const auto all = eval::serialPositionLayouts(s);
    QCOMPARE(named(all, "begin").indices, cat({seq(0, 4), seq(6, 2), rep(3, 13), seq(7, 1)}));
    QCOMPARE(named(all, "middle").indices,
             cat({seq(0, 4), rep(3, 6), seq(6, 2), rep(3, 6), seq(7, 1)}));
    QCOMPARE(named(all, "end").indices, cat({seq(0, 4), rep(3, 13), seq(6, 2), seq(7, 1)}));
    QCOMPARE(named(all, "middle").spans.at("answer"),
             (std::pair<std::int64_t, std::int64_t>{10, 12}));
    QCOMPARE(named(all, "end").spans.at("target"), (std::pair<std::int64_t, std::int64_t>{19, 20}));
}

void TestProbes::impossibleSizesAreConfigErrors()
{
    QVERIFY_THROWS_EXCEPTION(Error, resolveSizes(8, 5, 400, 0, 0, 0));  // 2D = 10 > N
    QVERIFY_THROWS_EXCEPTION(Error, resolveSizes(8, 2, 6, 0, 0, 0));    // L too short
    QVERIFY_THROWS_EXCEPTION(Error, resolveSizes(8, 2, 20, 0, 2, 3));   // target > answer
}

void TestProbes::probeRunStoresEveryProbe()
{
    auto config = lengen::test::loadOne(lengen::test::tinyConfig());  // D = 3, N = 7
    const auto run = lengen::test::trainConfig(config, lengen::test::scratchDir("probes"), 5);

    ProbeOptions o;
    o.attention = o.duplicated = o.serialPosition = true;
    o.prompts = 10;
    o.testLength = 30;
    o.noiseCounts = {2, 4};
    o.instructionPoints = 4;  // 2D = 6 would leave no room at N = 7
    o.attentionPrompts = 6;
    o.longPoints = 20;
    o.extraLengths = {12};
    o.mapPrompts = 2;
    o.mapMaxTokens = 30;  // long (40 tokens) keeps rows only
    o.common.bootstrapTrials = 20;
    o.common.device = "cpu";
    o.common.threads = 1;
    Recording recording;
    RunControl control;
    const auto summary = probeRun(run, o, control, recording);
    QCOMPARE(summary.computed,
             (std::vector<std::string>{"attention", "duplicated", "serial_position"}));
    // Issue 80, defect 22: the duplicated probe counts its units across its parts (count sweep,
    // random points, instruction + noise + target, instruction position) as one stage: one
    // total, done growing through every part (each part counted from 0, and the bar stood at
    // the first part's end while the other two ran).
    std::vector<Recording::Report> duplicated;
    for (const auto& r : recording.reports)
        if (r.stage.rfind("duplicated: ", 0) == 0)
            duplicated.push_back(r);
    QVERIFY(duplicated.size() >= 4);
    for (size_t i = 0; i < duplicated.size(); ++i) {
        QCOMPARE(duplicated[i].total, duplicated.front().total);
        QCOMPARE(duplicated[i].done, std::int64_t(i));
    }
    QCOMPARE(duplicated.back().done + 1, duplicated.front().total);
    // The share by cost comes with every report and only grows; each stage reports the units
    // the cost plan has for it (else the plan weighs other work than what runs).
    const auto plan = eval::probeUnitCosts(o, 7, 3, true);
    QCOMPARE(plan.size(), size_t(3));
    QCOMPARE(plan[1].size(), size_t(duplicated.front().total));
    double last = 0;
    for (const auto& r : recording.reports) {
        QVERIFY2(r.fraction >= last && r.fraction < 1, r.stage.c_str());
        last = r.fraction;
        if (r.stage.rfind("attention: ", 0) == 0)
            QCOMPARE(plan[0].size(), size_t(r.total));
        if (r.stage == "serial position")
            QCOMPARE(plan[2].size(), size_t(r.total));
    }

    const auto settings = readAttentionSettings(run);
    QCOMPARE(settings.size(), size_t(4));  // duplicated, long, points=12, train
    for (const auto& s : settings) {
        QCOMPARE(s.query, s.tokens - 2);
        QCOMPARE(s.lastQueryMean.size(), size_t(s.layers * s.heads * s.tokens));
        for (int lh = 0; lh < s.layers * s.heads; ++lh) {
            double sum = 0;
            for (int k = 0; k < s.tokens; ++k)
                sum += s.lastQueryMean[size_t(lh * s.tokens + k)];
            QVERIFY(std::abs(sum - 1) < 1e-4);
            QCOMPARE(s.lastQueryMean[size_t(lh * s.tokens + s.tokens - 1)],
                     0.f);  // y_{N-1}: future
        }
        QCOMPARE(s.yAttention.size(), size_t(s.layers * s.points));
        QCOMPARE(s.mapPrompts, s.tokens <= 30 ? 2 : 0);
    }
    // A full map read one tile at a time: rows are distributions, zero right of the diagonal.
    const auto tile = readAttentionTile(run, "train", 1, 1, 1, 0, 14, 0, 14);
    for (int r = 0; r < 14; ++r) {
        double sum = 0;
        for (int c = 0; c < 14; ++c) {
            sum += tile[size_t(r * 14 + c)];
            if (c > r)
                QCOMPARE(tile[size_t(r * 14 + c)], 0.f);
        }
        QVERIFY(std::abs(sum - 1) < 2e-3);  // float16 storage
    }
    const auto part = readAttentionTile(run, "train", 1, 1, 1, 5, 7, 2, 6);
    QCOMPARE(part.size(), size_t(8));
    QCOMPARE(part[0], tile[size_t(5 * 14 + 2)]);
    QVERIFY_THROWS_EXCEPTION(Error, readAttentionTile(run, "train", 2, 0, 0, 0, 1, 0, 1));

    const auto groups = readProbeGroups(run);
    QCOMPARE(groups.size(), size_t(4));
    QCOMPARE(groups[0].path, std::string("duplicated/count_sweep"));
    QCOMPARE(groups[0].curves.size(), size_t(2));
    QCOMPARE(groups[0].curves[0].stats.mean.size(), size_t(7 - 2 + 2 + 2));  // N - c + c + M_t
    QCOMPARE(groups[1].curves[0].name, std::string("random"));
    QCOMPARE(groups[1].curves[0].stats.mean.size(), size_t(30));
    QCOMPARE(groups[2].curves[0].name, std::string("all_duplicated"));
    const auto& serial = groups[3];
    QCOMPARE(serial.path, std::string("serial_position"));
    QCOMPARE(serial.params.at("test_length"), 30.0);
    QCOMPARE(serial.model, std::string("RoPE"));
    for (const auto& c : serial.curves) {
        // R = 30 - 4 - 3 - 2 = 21 is odd: "middle" has 2 floor(R / 2) noise points, one fewer
        // (the reference's shipped sizes give 399 of 400 the same way).
        const double len = c.name == "middle" ? 29 : 30;
        QCOMPARE(c.stats.mean.size(), size_t(len));
        QCOMPARE(c.spans.at("target"), (std::pair<double, double>{len - 2, len}));
        double block = 0;
        for (int i = int(len) - 2; i < int(len); ++i)
            block += c.stats.mean[size_t(i)] / 2;
        QVERIFY(std::abs(c.values.at("target_mean") - block) <
                1e-5 * (1 + block));  // float32 metric
        QVERIFY(c.values.at("target_low") <= block && block <= c.values.at("target_high"));
    }
}

// The attention probe under random_positions reads each prompt at its own draw, as the
// evaluation does (it read 0..T-1 and stored that under the intervention's name); a prompt that
// fills the range has only 0..T-1, so there both agree.
void TestProbes::attentionUnderRandomPositions()
{
    auto config = lengen::test::loadOne(lengen::test::tinyConfig());  // N = 7: 14 tokens
    config.training.randomPositions = 64;
    const auto run =
        lengen::test::trainConfig(config, lengen::test::scratchDir("probes-random"), 5);
    ProbeOptions o;
    o.attention = true;
    o.attentionPrompts = 4;
    o.longPoints = 32;      // 64 tokens: the whole range
    o.extraLengths = {40};  // 80 tokens: beyond it, skipped under random_positions only
    o.mapPrompts = 1;
    o.mapMaxTokens = 64;
    o.common.bootstrapTrials = 5;
    o.common.device = "cpu";
    o.common.threads = 1;
    Silent silent;
    RunControl control;
    QCOMPARE(probeRun(run, o, control, silent).computed, std::vector<std::string>{"attention"});
    o.intervention = "random_positions";
    QCOMPARE(probeRun(run, o, control, silent).computed, std::vector<std::string>{"attention"});
    auto plain = readAttentionSettings(run);
    const auto drawn = readAttentionSettings(run, "random_positions");
    QCOMPARE(plain.size(), size_t(4));
    plain.erase(std::remove_if(plain.begin(), plain.end(),
                               [](const auto& s) { return s.name == "points=40"; }),
                plain.end());
    QCOMPARE(drawn.size(), plain.size());
    for (size_t i = 0; i < plain.size(); ++i) {
        QCOMPARE(drawn[i].name, plain[i].name);
        const bool fills = plain[i].tokens == 64;
        QVERIFY2((drawn[i].lastQueryMean == plain[i].lastQueryMean) == fills,
                 plain[i].name.c_str());
        const int t =
            plain[i].tokens;  // the whole map: RoPE sees only the gaps, few near the start
        const auto a = readAttentionTile(run, plain[i].name, 0, 0, 0, 0, t, 0, t);
        const auto b =
            readAttentionTile(run, plain[i].name, 0, 0, 0, 0, t, 0, t, "random_positions");
        QVERIFY2((a == b) == fills, plain[i].name.c_str());  // the stored maps too
    }
}

// Issue 80, defect 22: the probe's bar and ETA counted units alike, so the 16 short count-sweep
// layouts took two thirds of the duplicated stage's bar and the 400-point layouts after them
// stood on the last third while the ETA climbed. Weighed by cost, the count sweep is a sliver.
void TestProbes::progressIsWeighedByCost()
{
    ProbeOptions o;  // the defaults: lengen probe --all
    o.attention = o.duplicated = o.serialPosition = true;
    const auto plan = eval::probeUnitCosts(o, 13, 6, true);
    QCOMPARE(plan.size(), size_t(3));
    QCOMPARE(plan[0].size(), size_t(3));               // train, long, duplicated
    QCOMPARE(plan[1].size(), size_t(16 + 1 + 3 + 4));  // count sweep, random, the two parts
    QCOMPARE(plan[2].size(), size_t(3));               // begin, middle, end

    Recording inner;
    eval::CostWeightedObserver weighed(inner, plan);
    weighed.onStage(1, 3, "duplicated");
    weighed.onProgress("duplicated: random points", 16, 24);
    const double evenly = (1 + 16.0 / 24) / 3;  // 0.56: what counting units alike said
    QCOMPARE(inner.reports.back().fraction, weighed.fraction(1, 16));
    QVERIFY2(inner.reports.back().fraction - weighed.fraction(1, 0) <
                 0.1 * (weighed.fraction(2, 0) - weighed.fraction(1, 0)),
             "the count sweep takes under a tenth of the duplicated stage");
    QVERIFY(inner.reports.back().fraction < evenly - 0.1);
    QCOMPARE(weighed.fraction(0, 0), 0.0);
    QCOMPARE(weighed.fraction(3, 0), 1.0);
    // A model without attention maps: the attention stage costs nothing.
    QCOMPARE(eval::probeUnitCosts(o, 13, 6, false)[0].size(), size_t(0));
    // Sizes the layouts refuse (2D = 10 > N = 8, the defaults too): planned without units, not
    // refused before the attention probe runs (its own stage refuses them, as before).
    const auto refused = eval::probeUnitCosts(o, 8, 5, true);
    QCOMPARE(refused.size(), size_t(3));
    QCOMPARE(refused[0].size(), size_t(3));
    QVERIFY(refused[1].empty() && refused[2].empty());
}

QTEST_APPLESS_MAIN(TestProbes)
#include "tst_probes.moc"
