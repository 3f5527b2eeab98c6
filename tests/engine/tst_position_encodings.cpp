// Position encodings beyond RoPE/NoPE/ALiBi (reference §4.4–4.7, Appendix A): YaRN ramps,
// mscale and frequency ratios, dynamic YaRN thresholds and s', PI = RoPE at p / s, YaRN with
// factor 1 = RoPE, dynamic variants below threshold = RoPE, stateful compat mode, FIRE at
// initialisation, and causality of every PE in a full model.

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include "lengen/engine/encodings.h"
#include "model/fire.h"
#include "model/icl_model.h"
#include "model/kerple.h"
#include "model/position_encoding.h"
#include "model/rotary_variants.h"
#include "model/t5_bias.h"
#include "test_support.h"

using namespace lengen::engine;
using namespace lengen::engine::model;

namespace {

bool near(double a, double b, double tol) { return std::abs(a - b) <= tol; }

// Rotated q at position p (one head vector of size d), through any rotary PE.
torch::Tensor rotatedAt(RotaryImpl& pe, const torch::Tensor& q0, std::int64_t p)
{
    auto q = q0.clone(), k = q0.clone();
    PositionSpan s;
    s.q = torch::tensor({p}, torch::kLong);
    s.k = s.q;
    s.q0 = s.k0 = s.maxPos = p;
    pe.rotate(q, k, s);
    return q;
}

}  // namespace

class TestPositionEncodings final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }
    void yarnGoldenNumbers();
    void dynamicYarnThresholdAndScale();
    void piEqualsRopeAtScaledPositions();
    void identityCases();
    void rotaryTablesOfASpan();
    void statefulCompatKeepsTheLastTable();
    void fireAtInitialisation();
    void everyEncodingIsCausal();
    void t5BucketsAndBias();
    void learnedBiasesAgreeWithTheirPapers();
};

void TestPositionEncodings::yarnGoldenNumbers()
{
    auto t32 = yarnTables(32, 10000, 102, 2.029851);
    QCOMPARE(t32.low, 0.0);
    QCOMPARE(t32.high, 5.0);
    QVERIFY(near(t32.mscale, 1.070796, 1e-6));
    const std::vector<double> ratio32 = {1, .8985, .7971, .6956, .5941, .4926, .4926, .4926};
    const auto theta32 = RotaryImpl::baseFrequencies(32, 10000);
    for (size_t i = 0; i < ratio32.size(); ++i)
        QVERIFY2(near(t32.invFreq[i] / theta32[i], ratio32[i], 1e-4),
                 qPrintable(QString::number(i)));
    auto t64 = yarnTables(64, 10000, 102, 8.0);
    QCOMPARE(t64.low, 0.0);
    QCOMPARE(t64.high, 10.0);
    QVERIFY(near(t64.mscale, 1.207944, 1e-6));
    auto s8 = yarnTables(32, 10000, 102, 8.0);
    const std::vector<double> ratio8 = {1, .825, .65, .475, .3, .125, .125};
    for (size_t i = 0; i < ratio8.size(); ++i)
        QVERIFY(near(s8.invFreq[i] / theta32[i], ratio8[i], 1e-9));
    QVERIFY(near(yarnTables(32, 10000, 102, 19.428571).mscale, 1.296674, 1e-6));
}

void TestPositionEncodings::dynamicYarnThresholdAndScale()
{
    const double factor = 102.0 / 201 / 2 * 8;  // the shipped configs' derived factor
    DynamicYarnImpl dyn(32, 10000, factor, 102, false);
    QVERIFY(near(dyn.constants().at("threshold_tokens")[0], 207.045, 1e-3));
    // s' = T / 207.045 and its mscale, through the frequencies the PE actually uses.
    for (auto [tokens, sPrime, mscale] : std::vector<std::array<double, 3>>{
             {222, 1.0722, 1.00697}, {402, 1.9416, 1.06635}, {3216, 15.533, 1.2743}}) {
        auto expected = yarnTables(32, 10000, 102, tokens / (factor * 102));
        QVERIFY(near(tokens / (factor * 102), sPrime, 1e-4 * sPrime));  // spec gives 5 digits
        QVERIFY(near(expected.mscale, mscale, 1e-4));
        const auto q0 = torch::randn({1, 1, 1, 32});
        YarnImpl reference(32, 10000, tokens / (factor * 102), 102);
        // At the last position of a T-token sequence, dynamic == static YaRN with s'.
        const auto p = static_cast<std::int64_t>(tokens) - 1;
        QVERIFY(torch::allclose(rotatedAt(dyn, q0, p), rotatedAt(reference, q0, p), 1e-5, 1e-5));
    }
}

void TestPositionEncodings::piEqualsRopeAtScaledPositions()
{
    LinearPiImpl pi(16, 10000, 4.0);
    RotaryImpl rope(16, 10000);
    const auto q0 = torch::randn({1, 1, 1, 16});
    for (std::int64_t p : {0, 4, 12, 400})
        QVERIFY(torch::allclose(rotatedAt(pi, q0, p), rotatedAt(rope, q0, p / 4), 1e-5, 1e-5));
    QVERIFY(!torch::allclose(rotatedAt(pi, q0, 6), rotatedAt(rope, q0, 6), 1e-4, 1e-4));
}

void TestPositionEncodings::rotaryTablesOfASpan()
{
    // A span of consecutive positions reads the cached tables' rows as a view; positions given
    // one by one are gathered (index_select). Both give the rows of positions 5..11, for every
    // rotary encoding, and RoPE's are cos(p theta^(-2j/d)) and sin(...), j < d/2, twice.
    const auto consecutive = PositionSpan::contiguous(5, 7, torch::kCPU);
    const auto given = PositionSpan::at(torch::arange(5, 12, torch::kLong), torch::kCPU);
    QVERIFY(consecutive.consecutive && !given.consecutive);
    int rotary = 0;
    for (const auto& e : lengen::engine::encodingTable()) {
        if (e.backbone != lengen::engine::Backbone::Llama ||
            e.kind != lengen::engine::PositionKind::Rotary)
            continue;
        auto module = makePositionEncoding(
            lengen::test::loadOne(lengen::test::tinyConfig("linear_regression", e.type)));
        const auto [cosView, sinView] = module->rotaryTables(consecutive);
        const auto [cosRows, sinRows] = module->rotaryTables(given);
        QVERIFY2(torch::equal(cosView, cosRows) && torch::equal(sinView, sinRows), e.type.c_str());
        ++rotary;
    }
    QVERIFY(rotary >= 5);  // RoPE, PI, YaRN, dynamic YaRN, dynamic NTK, xPos
    RotaryImpl rope(8, 10000.0);
    // A span built by hand that says "consecutive" but holds one position throughout (as
    // LM-Infinite's capped queries once did): its tables are the rows it names, all equal.
    PositionSpan capped;
    capped.q = torch::full({7}, 5, torch::kLong);
    capped.k = capped.q;
    capped.q0 = capped.k0 = 5;
    capped.maxPos = 11;
    const auto cappedCos = rope.rotaryTables(capped).first;
    QVERIFY(torch::equal(cappedCos, rope.rotaryTables(consecutive).first[0].expand({7, 8})));
    const auto [cos, sin] = rope.rotaryTables(consecutive);  // [7, 8]
    QCOMPARE(cos.sizes(), (std::vector<std::int64_t>{7, 8}));
    for (int p = 0; p < 7; ++p)
        for (int j = 0; j < 8; ++j) {
            const double angle = (5 + p) * std::pow(10000.0, -2.0 * (j % 4) / 8);
            QVERIFY(near(cos[p][j].item<double>(), std::cos(angle), 1e-6));
            QVERIFY(near(sin[p][j].item<double>(), std::sin(angle), 1e-6));
        }
}

void TestPositionEncodings::identityCases()
{
    RotaryImpl rope(32, 10000);
    YarnImpl yarnOne(32, 10000, 1.0, 102);            // factor 1: plain RoPE
    DynamicYarnImpl dyn(32, 10000, 2.0, 102, false);  // threshold 204 tokens
    DynamicNtkImpl ntk(32, 10000, 2.0, 102, false);   // threshold 102 tokens
    const auto q0 = torch::randn({1, 1, 1, 32});
    for (std::int64_t p : {0, 7, 101}) {
        const auto expected = rotatedAt(rope, q0, p);
        QVERIFY(torch::allclose(rotatedAt(yarnOne, q0, p), expected, 1e-6, 1e-6));
        QVERIFY(torch::allclose(rotatedAt(dyn, q0, p), expected, 1e-6, 1e-6));
        QVERIFY(torch::allclose(rotatedAt(ntk, q0, p), expected, 1e-6, 1e-6));
    }
    QVERIFY(!torch::allclose(rotatedAt(dyn, q0, 300), rotatedAt(rope, q0, 300), 1e-4, 1e-4));
    QVERIFY(!torch::allclose(rotatedAt(ntk, q0, 150), rotatedAt(rope, q0, 150), 1e-4, 1e-4));
}

void TestPositionEncodings::statefulCompatKeepsTheLastTable()
{
    RotaryImpl rope(32, 10000);
    DynamicYarnImpl stateless(32, 10000, 2.0, 102, false), stateful(32, 10000, 2.0, 102, true);
    const auto q0 = torch::randn({1, 1, 1, 32});
    // (At exactly the threshold s' = 1, so '>' and '>=' cannot be told apart by the output.)
    rotatedAt(stateful, q0, 999);  // a long sequence fires it...
    rotatedAt(stateless, q0, 999);
    // ...and a later short one reuses the stale table in compat mode only.
    QVERIFY(!torch::allclose(rotatedAt(stateful, q0, 10), rotatedAt(rope, q0, 10), 1e-4, 1e-4));
    QVERIFY(torch::allclose(rotatedAt(stateless, q0, 10), rotatedAt(rope, q0, 10), 1e-6, 1e-6));
}

void TestPositionEncodings::fireAtInitialisation()
{
    FireImpl fire(4, 32);
    auto params = fire.named_parameters();
    QCOMPARE(params["mlp.0.weight"].sizes().vec(), (std::vector<std::int64_t>{32, 1}));
    QCOMPARE(params["mlp.2.weight"].sizes().vec(), (std::vector<std::int64_t>{4, 32}));
    QVERIFY(!params["init_L"].requires_grad());
    QVERIFY(near(std::log(0.1 * 512 + 1), 3.95508, 1e-5));  // psi(512) of Appendix A
    // With a single hidden unit that passes r through, the bias is r = psi(i-j) / psi(512).
    torch::NoGradGuard noGrad;
    params["mlp.0.weight"].fill_(0).index_put_({0, 0}, 1.0);
    params["mlp.0.bias"].zero_();
    params["mlp.2.weight"].fill_(0).index_put_({torch::indexing::Slice(), 0}, 1.0);
    params["mlp.2.bias"].zero_();
    auto bias = fire.logitBias(PositionSpan::contiguous(0, 20, torch::kCPU));  // [4, 20, 20]
    QCOMPARE(bias.sizes().vec(), (std::vector<std::int64_t>{4, 20, 20}));
    const double expected = std::log(0.1 * 7 + 1) / (std::log(0.1 * 512 + 1) + 1e-6);
    QVERIFY(near(bias[2][19][12].item<double>(), expected, 1e-6));
    QCOMPARE(bias[0][5][5].item<float>(), 0.f);
    QVERIFY(fire.constants().at("mlp_width")[0] == 32);
}

void TestPositionEncodings::everyEncodingIsCausal()
{
    // Every Llama encoding of the table, and each builds the kind of module its row says.
    for (const auto& e : lengen::engine::encodingTable()) {
        if (e.backbone != lengen::engine::Backbone::Llama)
            continue;
        const std::string pe = e.type;
        const auto config =
            lengen::test::loadOne(lengen::test::tinyConfig("linear_regression", pe));
        auto module = makePositionEncoding(config);
        const auto span = PositionSpan::contiguous(0, 6, torch::kCPU);
        QCOMPARE(module->rotaryTables(span).first.defined(),
                 e.kind == lengen::engine::PositionKind::Rotary);
        QCOMPARE(module->logitBias(span).defined() || module->readsContent(),
                 e.kind ==
                     lengen::engine::PositionKind::Bias);  // CoPE's bias comes from the content
        auto model =
            lengen::test::initialisedModel(lengen::test::tinyConfig("linear_regression", pe));
        model->eval();
        auto gen = at::make_generator<at::CPUGeneratorImpl>(1);
        auto xs = torch::randn({2, 8, 3}, gen, torch::kFloat32);
        auto ys = torch::randn({2, 8}, gen, torch::kFloat32);
        QVERIFY2(lengen::test::isCausalAt(model, xs, ys, 6), pe.c_str());
    }
}

// T5's buckets (transformers' _relative_position_bucket, bidirectional=False): 32 buckets,
// max_distance 128: distances 0..15 exact, then 16 + floor(ln(n/16) / ln 8 * 16), at most 31.
// Worked by hand: n = 20: ln 1.25 / ln 8 * 16 = 1.72 -> 17; n = 31: 5.09 -> 21; n = 127: 15.94
// -> 31; 128 and beyond -> 31. The bias of (i, j) is the table's row of bucket(max(i - j, 0)).
void TestPositionEncodings::t5BucketsAndBias()
{
    const auto n =
        torch::tensor({0, 1, 15, 16, 17, 20, 31, 32, 63, 64, 127, 128, 1000}, torch::kLong);
    const auto b = T5BiasImpl::buckets(n, 32, 128);
    const std::vector<std::int64_t> want{0, 1, 15, 16, 16, 17, 21, 21, 26, 26, 31, 31, 31};
    QCOMPARE(std::vector<std::int64_t>(b.data_ptr<std::int64_t>(),
                                       b.data_ptr<std::int64_t>() + b.numel()),
             want);
    T5BiasImpl t5(2, 32, 128);
    {
        torch::NoGradGuard noGrad;
        t5.parameters()[0].copy_(
            torch::arange(64, torch::kFloat32).view({32, 2}));  // row r: (2r, 2r + 1)
    }
    const auto bias = t5.logitBias(PositionSpan::contiguous(0, 40, torch::kCPU));  // [2, 40, 40]
    QCOMPARE(bias.sizes().vec(), (std::vector<std::int64_t>{2, 40, 40}));
    QCOMPARE(bias[0][39][19].item<float>(), 2.f * 17);     // distance 20 -> bucket 17
    QCOMPARE(bias[1][39][8].item<float>(), 2.f * 21 + 1);  // distance 31 -> bucket 21
    QCOMPARE(bias[0][5][9].item<float>(), 0.f);  // a later key: distance 0 (masked anyway)
    // Gradients reach the table: only the buckets used.
    t5.logitBias(PositionSpan::contiguous(0, 5, torch::kCPU)).sum().backward();
    const auto g = t5.parameters()[0].grad();
    QCOMPARE(g[0][0].item<float>(), 15.f);  // distance 0: 5 diagonal + 10 later keys
    QCOMPARE(g[4][1].item<float>(), 1.f);   // distance 4: (4, 0) only
    QCOMPARE(g[5][0].item<float>(), 0.f);
}

namespace {

nlohmann::json rowsOf(const torch::Tensor& t)  // [R, C] float -> [[...], ...]
{
    const auto c = t.detach().contiguous();
    nlohmann::json rows = nlohmann::json::array();
    for (std::int64_t r = 0; r < c.size(0); ++r)
        rows.push_back(
            std::vector<float>(c[r].data_ptr<float>(), c[r].data_ptr<float>() + c.size(1)));
    return rows;
}

// Runs tests/interop/relative_bias_check.py on a module's bias for positions 0..tokens-1.
void checkBias(PositionEncodingImpl& pe, nlohmann::json fx, int tokens, const std::string& name)
{
    const auto bias = pe.logitBias(PositionSpan::contiguous(0, tokens, torch::kCPU));  // [H, T, T]
    fx["tokens"] = tokens;
    fx["bias"] = nlohmann::json::array();
    for (std::int64_t h = 0; h < bias.size(0); ++h)
        fx["bias"].push_back(rowsOf(bias[h]));
    const auto path = lengen::test::scratchDir("relative-bias") + "/" + name + ".json";
    std::ofstream(path) << fx.dump();
    const auto res = lengen::test::runProgram(
        lengen::test::pythonPath(),
        {QString::fromStdString(lengen::test::sourcePath("tests/interop/relative_bias_check.py")),
         QString::fromStdString(path)});
    qInfo().noquote() << res.out.trimmed();
    QVERIFY2(res.code == 0, qPrintable(res.out + res.err));
}

}  // namespace

// Each learned relative bias against an implementation written by others from the paper:
// T5's with transformers' bucketing in the PyPI job (where transformers is installed), the
// paper's bucketing otherwise, over 300 tokens (past max_distance 128) and with 8 buckets up to
// 20 (every boundary moved); KERPLE's two kernels with random parameters in their ranges.
void TestPositionEncodings::learnedBiasesAgreeWithTheirPapers()
{
    for (const auto& [buckets, distance] : std::vector<std::pair<int, int>>{{32, 128}, {8, 20}}) {
        T5BiasImpl t5(3, buckets, distance);
        auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
        {
            torch::NoGradGuard noGrad;
            t5.parameters()[0].copy_(torch::randn({buckets, 3}, gen, torch::kFloat32));
        }
        checkBias(t5,
                  {{"kind", "t5"},
                   {"num_buckets", buckets},
                   {"max_distance", distance},
                   {"table", rowsOf(t5.parameters()[0])}},
                  300, "t5-" + std::to_string(buckets));
    }
    for (const auto kernel : {KerpleImpl::Kernel::Log, KerpleImpl::Kernel::Power}) {
        KerpleImpl kerple(4, kernel);
        auto gen = at::make_generator<at::CPUGeneratorImpl>(9);
        {
            torch::NoGradGuard
                noGrad;  // p in (0, 2.5): the power kernel's projection clamps above 2
            kerple.named_parameters()["bias_p"].copy_(torch::rand({4}, gen) * 2.5);
            kerple.named_parameters()["bias_a"].copy_(torch::rand({4}, gen));
        }
        const auto bias =
            kerple.logitBias(PositionSpan::contiguous(0, 4, torch::kCPU));  // projects
        (void)bias;
        const auto p = kerple.named_parameters()["bias_p"], a = kerple.named_parameters()["bias_a"];
        if (kernel == KerpleImpl::Kernel::Power)
            QVERIFY(p.max().item<float>() <= 2.f);
        QVERIFY(a.min().item<float>() >= float(KerpleImpl::kEps));
        const std::string kind = kernel == KerpleImpl::Kernel::Log ? "kerple_log" : "kerple_power";
        checkBias(kerple,
                  {{"kind", kind},
                   {"p", std::vector<float>(p.data_ptr<float>(), p.data_ptr<float>() + 4)},
                   {"a", std::vector<float>(a.data_ptr<float>(), a.data_ptr<float>() + 4)}},
                  200, kind);
    }
    // A model's KERPLE parameters start as the paper's code draws them, from the run's generator.
    auto model = lengen::test::initialisedModel(
        lengen::test::tinyConfig("linear_regression", "kerple_power"), 1);
    int seen = 0;
    for (const auto& item : model->named_parameters()) {
        const auto& name = item.key();
        const float hi = name.find("rotary_emb.bias_p") != std::string::npos   ? 2.f
                         : name.find("rotary_emb.bias_a") != std::string::npos ? 1.f
                                                                               : 0.f;
        if (hi == 0.f)
            continue;
        ++seen;
        QVERIFY2(item.value().min().item<float>() > 0.f && item.value().max().item<float>() < hi,
                 name.c_str());
        QVERIFY2(item.value().max().item<float>() != item.value().min().item<float>(),
                 name.c_str());
    }
    QCOMPARE(seen, 4);  // 2 layers x (p, a)
}

QTEST_APPLESS_MAIN(TestPositionEncodings)
#include "tst_position_encodings.moc"
