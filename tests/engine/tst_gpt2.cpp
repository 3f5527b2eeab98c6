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
        for (const char* leaf : {"ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc",
                                 "mlp.c_proj"})
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
    QVERIFY(torch::equal(ta, tb));                                       // same generator state
    QVERIFY(!torch::equal(ta, a->forward(xs, ys).predictions));          // fresh masks each time
    a->eval();
    QVERIFY(torch::equal(a->forward(xs, ys).predictions, a->forward(xs, ys).predictions));
}

QTEST_APPLESS_MAIN(TestGpt2)
#include "tst_gpt2.moc"
