// Sandwich, xPos and CoPE worked by hand on small cases, and randomized positions (Ruoss et al.
// 2023) tested for what they promise: the positions drawn in training are distinct, sorted and
// cover the range; an evaluation at the training length reads the plain positions 0..T-1; a
// GPT-2 learns positions up to the range. Whole-model checks against forwards written from the
// papers are in tst_independent_forwards.

#include <cmath>
#include <set>
#include <tuple>

#include "lengen/engine/config.h"
#include "lengen/engine/encodings.h"
#include "lengen/engine/errors.h"
#include "model/cope.h"
#include "model/icl_model.h"
#include "model/sandwich.h"
#include "model/xpos.h"
#include "test_support.h"
#include "train/train_loop.h"

using namespace lengen;
using namespace lengen::engine;
using namespace lengen::engine::model;

class TestRecentEncodings final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }
    void sandwichByHand();
    void xposDecaysWithTheDistanceOnly();
    void copeCountsGatesByHand();
    void randomPositionsCoverTheRange();
    void randomPositionsTrainAndEvaluatePlain();
    void randomPositionsNeedAnEncodingThatReadsThem();
    void everyEncodingReadsPositionsWithGaps();
    void newKeysAreCheckedAndRoundTrip();
};

// d' = 4: s(n) = cos(n / 100) + cos(n / 10000) - 2 (k = 1, 2); H = 2: scales 2/8 and 2/16.
void TestRecentEncodings::sandwichByHand()
{
    SandwichImpl pe(2, 4);
    const auto bias = pe.logitBias(PositionSpan::contiguous(0, 300, torch::kCPU));  // [2, 300, 300]
    for (const int n : {0, 1, 7, 250}) {
        const double s = std::cos(n / 100.0) + std::cos(n / 10000.0) - 2.0;
        QVERIFY(std::abs(bias[0][n][0].item<double>() - 0.25 * s) < 1e-6);
        QVERIFY(std::abs(bias[1][n + 40][40].item<double>() - 0.125 * s) < 1e-6);
    }
    QCOMPARE(bias[0][0][5].item<float>(), 0.f);  // a key after the query reads distance 0
    // Default width: 0 at distance 0 is the largest bias, and far keys get less than near
    // ones on average (a locality prior like ALiBi's, with the sinusoids' ripples).
    SandwichImpl wide(1, 128);
    const auto b = wide.logitBias(PositionSpan::contiguous(0, 40, torch::kCPU))[0][39];  // row 39
    QCOMPARE(b.max().item<float>(), 0.f);
    QCOMPARE(b[39].item<float>(), 0.f);
    QVERIFY(b.slice(0, 0, 20).mean().item<float>() < b.slice(0, 20, 39).mean().item<float>());
}

// q at n and k at m score sum_i zeta_i^((n-m)/gamma) * (RoPE's pair i term): shifting both
// keeps the score (whatever the span's centre), and the decay is the paper's.
void TestRecentEncodings::xposDecaysWithTheDistanceOnly()
{
    const int d = 8;
    XposImpl pe(d, 10000, 512);
    RotaryImpl rope(d, 10000);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
    const auto q0 = torch::randn({1, 1, 1, d}, gen), k0 = torch::randn({1, 1, 1, d}, gen);
    auto score = [&](PositionEncodingImpl& e, std::int64_t n, std::int64_t m, std::int64_t maxPos) {
        auto q = q0.clone(), k = k0.clone();
        PositionSpan s;
        s.q = torch::tensor({n}, torch::kLong);
        s.k = torch::tensor({m}, torch::kLong);
        s.q0 = n, s.k0 = m, s.maxPos = maxPos;
        e.rotate(q, k, s);
        return (q * k).sum().item<double>();
    };
    const double near = score(pe, 10, 7, 20), far = score(pe, 300, 297, 600);
    QVERIFY(std::abs(near - far) < 1e-4 * std::max(1.0, std::abs(near)));
    // Pair-wise: with q and k non-zero on pair i only, xPos = RoPE * zeta_i^(3/512).
    const auto zeta = XposImpl::zeta(d);
    for (int i = 0; i < d / 2; ++i) {
        auto mask = torch::zeros({1, 1, 1, d});
        mask[0][0][0][i] = 1;
        mask[0][0][0][i + d / 2] = 1;
        auto q = (q0 * mask), k = (k0 * mask);
        auto sx = [&](PositionEncodingImpl& e) {
            auto a = q.clone(), b = k.clone();
            PositionSpan s;
            s.q = torch::tensor({std::int64_t(40)}, torch::kLong);
            s.k = torch::tensor({std::int64_t(37)}, torch::kLong);
            s.q0 = 40, s.k0 = 37, s.maxPos = 40;
            e.rotate(a, b, s);
            return (a * b).sum().item<double>();
        };
        const double expected = sx(rope) * std::pow(zeta[size_t(i)], 3.0 / 512);
        QVERIFY2(std::abs(sx(pe) - expected) < 1e-5, qPrintable(QString::number(i)));
    }
    QCOMPARE(zeta.front(), 0.4 / 1.4);
}

// One head, d = 1, 3 tokens, npos_max 4, e = [10, 20, 30, 40], q = 1 for every query; logits
// z chosen so the gates are known: sigmoid(0) = 0.5, sigmoid(+inf) = 1. Row 2 with gates
// (1, 0.5, 0.5): p_20 = 2, p_21 = 1, p_22 = 0.5 -> bias 30, 20, 15.
void TestRecentEncodings::copeCountsGatesByHand()
{
    CopeImpl pe(1, 4);
    {
        torch::NoGradGuard noGrad;
        pe.named_parameters()["pos_emb"].copy_(torch::tensor({{10.f, 20.f, 30.f, 40.f}}));
    }
    const float inf = std::numeric_limits<float>::infinity();
    const auto q = torch::ones({1, 1, 3, 1});
    const auto z =
        torch::tensor({{1e4f, -inf, -inf}, {0.f, 0.f, -inf}, {1e4f, 0.f, 0.f}}).view({1, 1, 3, 3});
    const auto bias = pe.contentBias(q, z)[0][0];  // [3, 3]
    QVERIFY(std::abs(bias[2][0].item<float>() - 30.f) < 1e-4);
    QVERIFY(std::abs(bias[2][1].item<float>() - 20.f) < 1e-4);
    QVERIFY(std::abs(bias[2][2].item<float>() - 15.f) < 1e-4);
    QVERIFY(std::abs(bias[1][0].item<float>() - 20.f) < 1e-4);  // p = 1
    QVERIFY(std::abs(bias[0][0].item<float>() - 20.f) < 1e-4);  // gate 1: p = 1
    // Counts past npos_max - 1 are clamped there.
    const auto many =
        pe.contentBias(torch::ones({1, 1, 1, 1}), torch::full({1, 1, 1, 8}, 1e4f))[0][0][0];
    QVERIFY(std::abs(many[0].item<float>() - 40.f) < 1e-4);

    // Issue 52: the authors' repository divides the position logits by sqrt(d) as well
    // (patch.cope.divide_position_logits). d = 4, e's first row as above, q = 1: the same
    // counts give q.e[p] = 30, 20, 15, and halved (sqrt 4) 15, 10, 7.5.
    for (const bool divide : {false, true}) {
        CopeImpl wide(4, 4, divide);
        {
            torch::NoGradGuard noGrad;
            auto e = torch::zeros({4, 4});
            e[0] = torch::tensor({10.f, 20.f, 30.f, 40.f});
            wide.named_parameters()["pos_emb"].copy_(e);
        }
        const auto b = wide.contentBias(torch::ones({1, 1, 3, 4}), z)[0][0];
        const float scale = divide ? 0.5f : 1.f;
        for (const auto& [col, expected] : {std::pair{0, 30.f}, {1, 20.f}, {2, 15.f}})
            QVERIFY2(std::abs(b[2][col].item<float>() - expected * scale) < 1e-4,
                     qPrintable(QString("divide %1, column %2: %3")
                                    .arg(divide)
                                    .arg(col)
                                    .arg(b[2][col].item<float>())));
    }
}

void TestRecentEncodings::randomPositionsCoverTheRange()
{
    auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
    std::set<std::int64_t> seen;
    for (int draw = 0; draw < 400; ++draw) {
        const auto p = training::drawPositions(gen, 18, 144);
        QCOMPARE(p.numel(), std::int64_t(18));
        for (std::int64_t i = 0; i < 18; ++i) {
            const auto v = p[i].item<std::int64_t>();
            QVERIFY(v >= 0 && v < 144);
            if (i > 0)
                QVERIFY(v > p[i - 1].item<std::int64_t>());  // distinct and ascending
            seen.insert(v);
        }
    }
    QCOMPARE(seen.size(), size_t(144));  // 400 x 18 draws reach every position of the range
    // Every position equally likely: the first position's mean is (M - T) / (T + 1).
    double first = 0;
    for (int draw = 0; draw < 4000; ++draw)
        first += training::drawPositions(gen, 18, 144)[0].item<double>();
    QVERIFY(std::abs(first / 4000 - 126.0 / 19) < 0.5);
    // A huge range costs the same draws.
    QCOMPARE(training::drawPositions(gen, 4, 100000000).numel(), std::int64_t(4));
}

void TestRecentEncodings::randomPositionsTrainAndEvaluatePlain()
{
    // Training reads positions past the training length: a GPT-2's learned table is sized to
    // the range, and its rows beyond the prompt's length receive gradients.
    RunConfig gpt2 = test::loadOne(
        "model: {family: GPT2, max_length: [14], n_embd: 16, n_layer: 2, n_head: 2}\n"
        "task: {data: gaussian, name: linear_regression, curriculum: {dims: {start: 3, end: 3, "
        "increment: 0, interval: 10}, points: {start: 7, end: 7, increment: 0, interval: 10}}}\n"
        "training: {max_steps: 5, random_positions: {max_position: 64}}\n");
    QCOMPARE(gpt2.model.maxPositionEmbeddings, 64);
    training::TrainSession s;
    training::setupSession(s, gpt2, 3, "cpu");
    auto xs = torch::randn({2, 5, gpt2.model.nInDims});
    auto ys = torch::randn({2, 5});
    const auto positions =
        torch::tensor(std::vector<std::int64_t>{3, 9, 12, 20, 33, 40, 41, 50, 58, 63});
    auto [pred, loss] = training::forwardLoss(s, xs, ys, positions);
    loss.backward();
    torch::Tensor wpeGrad;
    for (const auto& item : s.model->named_parameters())
        if (item.key().find("wpe") != std::string::npos)
            wpeGrad = item.value().grad();
    QVERIFY(wpeGrad.defined());
    QVERIFY(wpeGrad[58].abs().sum().item<float>() > 0.f);  // the last example's x, past 14
    QCOMPARE(wpeGrad[62].abs().sum().item<float>(), 0.f);  // not drawn
    // An evaluation forward (no positions) is the forward at positions 0..T-1.
    s.model->eval();
    torch::NoGradGuard noGrad;
    ForwardOptions plain;
    plain.positions = torch::arange(10, torch::kLong);
    QVERIFY(torch::equal(s.model->forward(xs, ys).predictions,
                         s.model->forward(xs, ys, plain).predictions));
}

void TestRecentEncodings::randomPositionsNeedAnEncodingThatReadsThem()
{
    const auto with = [](const std::string& pe, int m) {
        return QString::fromStdString(test::tinyConfig("linear_regression", pe))
            .replace("per_device_train_batch_size",
                     QString("random_positions: {max_position: %1}\n  per_device_train_batch_size")
                         .arg(m))
            .toStdString();
    };
    for (const char* pe : {"nope", "cope"}) {
        try {
            test::loadOne(with(pe, 200));
            QFAIL(pe);
        } catch (const ConfigError& e) {
            QVERIFY2(QString(e.what()).contains("training.random_positions.max_position"),
                     e.what());
            QVERIFY2(QString(e.what()).contains("reads no token positions"), e.what());
        }
    }
    try {
        test::loadOne(with("alibi", 5));
        QFAIL("a range below the prompt");
    } catch (const ConfigError& e) {
        QVERIFY2(QString(e.what()).contains("below the longest training prompt"), e.what());
    }
    const auto ok = test::loadOne(with("xpos", 200));
    QCOMPARE(ok.training.randomPositions, std::int64_t(200));
    QVERIFY(toYaml(ok, YamlStyle::Resolved).find("random_positions: {max_position: 200}") !=
            std::string::npos);
    QCOMPARE(test::loadOne(with("nope", 0)).training.randomPositions, std::int64_t(0));  // 0 is off
    bool line = false;
    for (const auto& part : derivedSettings(ok))
        line = line || part.find("of 0…199 per step") != std::string::npos;
    QVERIFY(line);
}

// At randomized positions P (gaps, not starting at 0) every encoding that reads positions gives
// what it gives at 0..M-1 at those rows and columns: no PE assumes consecutive positions. ALiBi
// runs two draws of the same length and first position (its cache must not serve the second).
void TestRecentEncodings::everyEncodingReadsPositionsWithGaps()
{
    const std::vector<std::int64_t> drawA{1, 4, 5, 9, 13}, drawB{1, 2, 7, 8, 15};
    int checked = 0;
    for (const auto& e : encodingTable()) {
        if (e.backbone != Backbone::Llama || !e.readsPositions || e.lengthDependent)
            continue;
        const auto config = test::loadOne(test::tinyConfig("linear_regression", e.type));
        auto pe = makePositionEncoding(config);
        auto gen = at::make_generator<at::CPUGeneratorImpl>(2);
        {
            torch::NoGradGuard noGrad;  // learned biases away from their initial values
            for (auto& p : pe->parameters())
                p.copy_(torch::rand(p.sizes(), gen) + 0.1);
        }
        const auto full = PositionSpan::contiguous(0, 16, torch::kCPU);
        const auto d = config.model.hiddenSize / config.model.numHeads;
        const auto q16 = torch::randn({1, config.model.numHeads, 16, d}, gen),
                   k16 = torch::randn({1, config.model.numHeads, 16, d}, gen);
        for (const auto& draw : {drawA, drawB}) {
            const auto idx = torch::tensor(draw, torch::kLong);
            const auto span = PositionSpan::at(idx, torch::kCPU);
            QVERIFY(!span.consecutive);
            QCOMPARE(span.maxPos, draw.back());
            if (e.kind == PositionKind::Bias) {
                const auto expected = pe->logitBias(full).index_select(1, idx).index_select(2, idx);
                QVERIFY2(torch::allclose(pe->logitBias(span), expected, 1e-5, 1e-6),
                         e.name.c_str());
            } else {
                auto q = q16.clone(), k = k16.clone();
                pe->rotate(q, k, full);
                auto qs = q16.index_select(2, idx), ks = k16.index_select(2, idx);
                pe->rotate(qs, ks, span);
                // Scores, not vectors: xPos centres its decay on the forward's middle.
                const auto expected =
                    torch::matmul(q, k.transpose(-1, -2)).index_select(2, idx).index_select(3, idx);
                QVERIFY2(
                    torch::allclose(torch::matmul(qs, ks.transpose(-1, -2)), expected, 1e-4, 1e-5),
                    e.name.c_str());
            }
        }
        ++checked;
    }
    QCOMPARE(checked, 10);  // rope, alibi, fire, t5, kerple x2, sandwich, xpos, yarn, pi
}

void TestRecentEncodings::newKeysAreCheckedAndRoundTrip()
{
    auto patched = [](const std::string& pe, const std::string& extra) {
        return QString::fromStdString(test::tinyConfig("linear_regression", pe))
            .replace("    type: " + QString::fromStdString(pe) + "\n",
                     "    type: " + QString::fromStdString(pe) + "\n  " +
                         QString::fromStdString(extra) + "\n")
            .toStdString();
    };
    for (const auto& [pe, extra, key] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"sandwich", "sandwich: {dim: 7}", "patch.sandwich.dim"},
             {"xpos", "xpos: {scale_base: 0}", "patch.xpos.scale_base"},
             {"cope", "cope: {npos_max: 1}", "patch.cope.npos_max"}}) {
        try {
            test::loadOne(patched(pe, extra));
            QFAIL(extra.c_str());
        } catch (const ConfigError& err) {
            QVERIFY2(QString(err.what()).contains(QString::fromStdString(key)), err.what());
        }
    }
    // Non-default values survive the resolved YAML a run stores.
    const auto c = test::loadOne(patched("sandwich", "sandwich: {dim: 32}"));
    QCOMPARE(c.position.sandwichDim, 32);
    QCOMPARE(
        loadConfigText(toYaml(c, YamlStyle::Resolved), "<stored>").runs.at(0).position.sandwichDim,
        32);
    const auto x = test::loadOne(patched("xpos", "xpos: {scale_base: 64}"));
    QCOMPARE(loadConfigText(toYaml(x, YamlStyle::Resolved), "<stored>")
                 .runs.at(0)
                 .position.xposScaleBase,
             64.0);
    const auto p = test::loadOne(patched("cope", "cope: {npos_max: 12}"));
    QCOMPARE(loadConfigText(toYaml(p, YamlStyle::Resolved), "<stored>")
                 .runs.at(0)
                 .position.copeMaxPositions,
             12);
    QVERIFY(!p.position.copeDividePositionLogits);  // the paper's listing by default
    const auto divided =
        test::loadOne(patched("cope", "cope: {npos_max: 12, divide_position_logits: true}"));
    QVERIFY(divided.position.copeDividePositionLogits);
    QVERIFY(loadConfigText(toYaml(divided, YamlStyle::Resolved), "<stored>")
                .runs.at(0)
                .position.copeDividePositionLogits);
    QVERIFY(toYaml(p, YamlStyle::Resolved).find("divide_position_logits") == std::string::npos);
    // xPos past float32's range at the range's end; dynamic encodings would rescale in training.
    const auto random = [&](const std::string& yaml, int m) {
        return QString::fromStdString(yaml)
            .replace("per_device_train_batch_size",
                     QString("random_positions: {max_position: %1}\n  per_device_train_batch_size")
                         .arg(m))
            .toStdString();
    };
    for (const auto& [yaml, why] : std::vector<std::pair<std::string, std::string>>{
             {random(patched("xpos", "xpos: {scale_base: 64}"), 20000), "past float32's range"},
             {random(test::tinyConfig("linear_regression", "dynamic"), 200),
              "would rescale it in training"},
             {random(test::tinyConfig("linear_regression", "rope"), 2000000), "too large"}}) {
        try {
            test::loadOne(yaml);
            QFAIL(why.c_str());
        } catch (const ConfigError& err) {
            QVERIFY2(QString(err.what()).contains(QString::fromStdString(why)), err.what());
            QVERIFY2(QString(err.what()).contains("training.random_positions.max_position"),
                     err.what());
        }
    }
    auto gen = at::make_generator<at::CPUGeneratorImpl>(1);
    QVERIFY_THROWS_EXCEPTION(Error, training::drawPositions(gen, 20, 10));
}

QTEST_APPLESS_MAIN(TestRecentEncodings)
#include "tst_recent_encodings.moc"
