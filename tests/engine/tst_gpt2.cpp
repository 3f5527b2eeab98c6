// GPT-2 (reference §3.5): HF key names and Conv1D shapes, causality, learned positions that
// refuse prompts longer than n_positions, scaled c_proj initialisation, and dropout that is
// active only in training and reproducible from the run's generator.

#include <cmath>

#include "model/icl_model.h"
#include "test_support.h"

using namespace lengen::engine;
using namespace lengen::engine::model;

namespace {

const char* kGptConfig =
    "model: {family: GPT2, max_length: [16], n_embd: 32, n_layer: 2, n_head: 4}\n"
    "task: {data: gaussian, name: linear_regression, curriculum: {dims: {start: 3, end: 3,"
    " increment: 0, interval: 10}, points: {start: 6, end: 6, increment: 0, interval: 10}}}\n"
    "training: {max_steps: 5}\n";

InContextModel makeGpt(std::uint64_t seed = 1)
{
    return lengen::test::initialisedModel(kGptConfig, seed);
}

}  // namespace

class TestGpt2 final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }
    void keysAndShapes();
    void causalInEvalMode();
    void positionsBeyondTheTableAreRefused();
    void dropoutOnlyInTrainingAndReproducible();
    void dropoutOnTheGpuIsReproducible();
    void matchesAHandWrittenGpt2();
};

void TestGpt2::keysAndShapes()
{
    auto p = makeGpt()->named_parameters();
    std::set<std::string> names;
    for (const auto& item : p)
        names.insert(item.key());
    std::set<std::string> expected = {"input.weight", "output.weight", "transformer.wpe.weight",
                                      "transformer.ln_f.weight", "transformer.ln_f.bias"};
    for (int l = 0; l < 2; ++l)
        for (const char* leaf :
             {"ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj"})
            for (const char* kind : {".weight", ".bias"})
                expected.insert("transformer.h." + std::to_string(l) + "." + leaf + kind);
    QCOMPARE(names, expected);
    QCOMPARE(p["transformer.h.0.attn.c_attn.weight"].sizes().vec(),
             (std::vector<std::int64_t>{32, 96}));  // HF Conv1D: [in, out]
    QCOMPARE(p["transformer.wpe.weight"].sizes().vec(), (std::vector<std::int64_t>{16, 32}));
    const double cproj = p["transformer.h.1.mlp.c_proj.weight"].std().item<double>();
    QVERIFY(std::abs(cproj - 0.02 / std::sqrt(4.0)) < 0.002);  // 0.02 / sqrt(2 n_layer)
}

void TestGpt2::causalInEvalMode()
{
    auto model = makeGpt();
    model->eval();
    auto gen = at::make_generator<at::CPUGeneratorImpl>(2);
    auto xs = torch::randn({2, 6, 3}, gen, torch::kFloat32);
    auto ys = torch::randn({2, 6}, gen, torch::kFloat32);
    QVERIFY(lengen::test::isCausalAt(model, xs, ys, 3));
}

void TestGpt2::positionsBeyondTheTableAreRefused()
{
    auto model = makeGpt();
    model->eval();
    torch::NoGradGuard noGrad;
    model->forward(torch::zeros({1, 8, 3}), torch::zeros({1, 8}));  // 16 tokens: fits
    try {
        model->forward(torch::zeros({1, 9, 3}), torch::zeros({1, 9}));
        QFAIL("expected an error for 18 tokens with 16 positions");
    } catch (const Error& e) {
        QCOMPARE(e.kind(), ErrorKind::Runtime);
        QVERIFY2(QString(e.what()).contains("16 tokens"), e.what());
    }
}

void TestGpt2::dropoutOnlyInTrainingAndReproducible()
{
    auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
    auto xs = torch::randn({2, 6, 3}, gen, torch::kFloat32);
    auto ys = torch::randn({2, 6}, gen, torch::kFloat32);
    torch::NoGradGuard noGrad;
    auto a = makeGpt(7), b = makeGpt(7);
    a->train();
    b->train();
    auto ta = a->forward(xs, ys).predictions, tb = b->forward(xs, ys).predictions;
    QVERIFY(torch::equal(ta, tb));                               // same generator state
    QVERIFY(!torch::equal(ta, a->forward(xs, ys).predictions));  // fresh masks each time
    a->eval();
    QVERIFY(torch::equal(a->forward(xs, ys).predictions, a->forward(xs, ys).predictions));
}

void TestGpt2::dropoutOnTheGpuIsReproducible()
{
    if (!torch::cuda::is_available())
        QSKIP("needs a CUDA GPU and a LibTorch with CUDA");
    // On a GPU the masks are drawn there from the device's generator, seeded per step from the
    // run's (CPU) generator: the same generator state gives the same masks, each step fresh
    // ones, eval mode none.
    auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
    auto xs = torch::randn({2, 6, 3}, gen, torch::kFloat32).cuda();
    auto ys = torch::randn({2, 6}, gen, torch::kFloat32).cuda();
    torch::NoGradGuard noGrad;
    auto a = makeGpt(7), b = makeGpt(7);
    a->to(torch::kCUDA);
    b->to(torch::kCUDA);
    a->train();
    b->train();
    bool seededEach = true;
    const auto step = [&](InContextModel& m) {
        const auto seeded = m->seedDeviceDropout(torch::Device(torch::kCUDA, 0));
        seededEach = seededEach && seeded.owns_lock();
        return m->forward(xs, ys).predictions;
    };
    auto ta = step(a), tb = step(b);
    QVERIFY(torch::equal(ta, tb));
    QVERIFY(!torch::equal(ta, step(a)));
    QVERIFY(seededEach);
    a->eval();
    QVERIFY(!a->seedDeviceDropout(torch::Device(torch::kCUDA, 0)).owns_lock());
    QVERIFY(torch::equal(a->forward(xs, ys).predictions, a->forward(xs, ys).predictions));
}

// GPT-2 written out op by op from its definition (HF GPT2Model, pre-LN, gelu_new), one prompt
// at a time with explicit per-head loops, against the engine's batched module. Every parameter
// is randomised first, so a bias, LayerNorm or q/k/v layout mix-up cannot hide behind the
// initial zeros and ones.
void TestGpt2::matchesAHandWrittenGpt2()
{
    auto model = makeGpt(5);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
    {
        torch::NoGradGuard noGrad;
        for (auto& p : model->parameters())
            p.copy_(torch::randn(p.sizes(), gen) * 0.3);
    }
    model->eval();
    auto xs = torch::randn({2, 6, 3}, gen), ys = torch::randn({2, 6}, gen);
    torch::NoGradGuard noGrad;
    const auto got = model->forward(xs, ys).predictions;  // [2, 6]

    auto P = model->named_parameters();
    auto layerNorm = [](const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
        auto mu = x.mean(-1, true);
        auto var = (x - mu).pow(2).mean(-1, true);
        return (x - mu) / torch::sqrt(var + 1e-5) * w + b;
    };
    auto geluNew = [](const torch::Tensor& x) {
        return 0.5 * x * (1 + torch::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x.pow(3))));
    };
    const int hidden = 32, heads = 4, d = hidden / heads, t = 12;
    for (int b = 0; b < 2; ++b) {
        auto z = torch::zeros({t, 3});
        for (int i = 0; i < 6; ++i) {
            z[2 * i] = xs[b][i];
            z[2 * i + 1][0] = ys[b][i];
        }
        auto h = z.matmul(P["input.weight"].t()) + P["transformer.wpe.weight"].slice(0, 0, t);
        for (int l = 0; l < 2; ++l) {
            const std::string pre = "transformer.h." + std::to_string(l) + ".";
            auto a = layerNorm(h, P[pre + "ln_1.weight"], P[pre + "ln_1.bias"]);
            auto qkv = a.matmul(P[pre + "attn.c_attn.weight"]) + P[pre + "attn.c_attn.bias"];
            auto q = qkv.slice(1, 0, hidden), k = qkv.slice(1, hidden, 2 * hidden),
                 v = qkv.slice(1, 2 * hidden, 3 * hidden);
            std::vector<torch::Tensor> outs;
            for (int hd = 0; hd < heads; ++hd) {
                auto qh = q.slice(1, hd * d, (hd + 1) * d), kh = k.slice(1, hd * d, (hd + 1) * d),
                     vh = v.slice(1, hd * d, (hd + 1) * d);
                auto s = qh.matmul(kh.t()) / std::sqrt(double(d));
                s = s.masked_fill(torch::ones({t, t}).triu(1).to(torch::kBool), -1e30);
                outs.push_back(torch::softmax(s, -1).matmul(vh));
            }
            auto attn = torch::cat(outs, 1).matmul(P[pre + "attn.c_proj.weight"]) +
                        P[pre + "attn.c_proj.bias"];
            h = h + attn;
            auto m = layerNorm(h, P[pre + "ln_2.weight"], P[pre + "ln_2.bias"]);
            auto ff = geluNew(m.matmul(P[pre + "mlp.c_fc.weight"]) + P[pre + "mlp.c_fc.bias"]);
            h = h + ff.matmul(P[pre + "mlp.c_proj.weight"]) + P[pre + "mlp.c_proj.bias"];
        }
        h = layerNorm(h, P["transformer.ln_f.weight"], P["transformer.ln_f.bias"]);
        auto out = h.matmul(P["output.weight"].t()).squeeze(-1);  // [T]
        auto want = out.slice(0, 0, t, 2);                        // x tokens
        QVERIFY2(
            torch::allclose(got[b], want, 1e-4, 1e-4),
            qPrintable(QString("max diff %1").arg((got[b] - want).abs().max().item<double>())));
    }
}

QTEST_APPLESS_MAIN(TestGpt2)
#include "tst_gpt2.moc"
