// Mamba (reference §3.4): the selective-scan kernel equals the naive recurrence in value and
// in every gradient, the backbone is causal, its keys and initialisation follow HF Mamba.

#include <cmath>

#include "model/icl_model.h"
#include "model/selective_scan.h"
#include "test_support.h"

using namespace lengen::engine;
using namespace lengen::engine::model;

namespace {

const char* kMambaConfig =
    "model: {family: Mamba, type: ssm, max_length: [\"inf\"], hidden_size: 32, state_size: 4,"
    " num_hidden_layers: 2}\n"
    "task: {data: gaussian, name: linear_regression, curriculum: {dims: {start: 3, end: 3,"
    " increment: 0, interval: 10}, points: {start: 6, end: 6, increment: 0, interval: 10}}}\n"
    "training: {max_steps: 5}\n";

InContextModel makeMamba() { return lengen::test::initialisedModel(kMambaConfig); }

}  // namespace

class TestMamba final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }
    void scanKernelEqualsNaiveRecurrence();
    void causal();
    void keysMatchTheReference();
    void initialisation();
};

void TestMamba::scanKernelEqualsNaiveRecurrence()
{
    auto gen = at::make_generator<at::CPUGeneratorImpl>(4);
    const std::int64_t b = 3, t = 9, e = 5, n = 4;
    auto opt = torch::TensorOptions(torch::kFloat32);
    auto make = [&](std::vector<std::int64_t> shape, double scale, double shift = 0) {
        return (torch::randn(shape, gen, opt) * scale + shift).requires_grad_();
    };
    auto v = make({b, t, e}, 1.0);
    auto delta = torch::softplus(make({b, t, e}, 1.0)).detach().requires_grad_();
    auto A = (-torch::exp(make({e, n}, 0.5))).detach().requires_grad_();
    auto Bm = make({b, t, n}, 1.0), Cm = make({b, t, n}, 1.0), D = make({e}, 1.0);
    const std::vector<torch::Tensor> inputs = {v, delta, A, Bm, Cm, D};
    auto weights = torch::randn({b, t, e}, gen, opt);  // a generic upstream gradient

    auto yNaive = selectiveScanNaive(v, delta, A, Bm, Cm, D);
    auto gNaive = torch::autograd::grad({(yNaive * weights).sum()}, inputs);
    const char* names[] = {"v", "delta", "A", "B", "C", "D"};
    // The batch items on one thread, then in three slices (each its own dA, dD sums).
    for (int threads : {1, 3}) {
        kernels::KernelContext context(threads);
        auto yKernel = selectiveScan(context, v, delta, A, Bm, Cm, D);
        QVERIFY(torch::allclose(yKernel, yNaive, 1e-5, 1e-5));
        auto gKernel = torch::autograd::grad({(yKernel * weights).sum()}, inputs);
        for (size_t i = 0; i < inputs.size(); ++i)
            QVERIFY2(torch::allclose(gKernel[i], gNaive[i], 1e-4, 1e-5),
                     qPrintable(QString("%1 thread(s): %2").arg(threads).arg(names[i])));
    }
}

void TestMamba::causal()
{
    auto model = makeMamba();
    auto gen = at::make_generator<at::CPUGeneratorImpl>(2);
    auto xs = torch::randn({2, 6, 3}, gen, torch::kFloat32);
    auto ys = torch::randn({2, 6}, gen, torch::kFloat32);
    QVERIFY(lengen::test::isCausalAt(model, xs, ys, 4));
    QVERIFY(!model->hasAttention());
}

void TestMamba::keysMatchTheReference()
{
    auto model = makeMamba();
    std::set<std::string> names;
    for (const auto& p : model->named_parameters())
        names.insert(p.key());
    std::set<std::string> expected = {"input.weight", "output.weight", "backbone.norm_f.weight"};
    for (int l = 0; l < 2; ++l) {
        const std::string prefix = "backbone.layers." + std::to_string(l) + ".";
        expected.insert(prefix + "norm.weight");
        for (const char* leaf : {"A_log", "D", "conv1d.weight", "conv1d.bias", "in_proj.weight",
                                 "x_proj.weight", "dt_proj.weight", "dt_proj.bias",
                                 "out_proj.weight"})
            expected.insert(prefix + "mixer." + leaf);
    }
    QCOMPARE(names, expected);
    auto p = model->named_parameters();
    QCOMPARE(p["backbone.layers.0.mixer.conv1d.weight"].sizes().vec(),
             (std::vector<std::int64_t>{64, 1, 4}));  // E = 2H, depthwise, K = 4
    QCOMPARE(p["backbone.layers.0.mixer.x_proj.weight"].sizes().vec(),
             (std::vector<std::int64_t>{2 + 2 * 4, 64}));  // R = ceil(32/16) = 2, N = 4
}

void TestMamba::initialisation()
{
    auto p = makeMamba()->named_parameters();
    auto aLog = p["backbone.layers.1.mixer.A_log"];
    QVERIFY(torch::allclose(aLog[7], torch::log(torch::arange(1, 5, torch::kFloat32))));
    QVERIFY(p["backbone.layers.1.mixer.D"].eq(1).all().item<bool>());
    auto dt = torch::softplus(p["backbone.layers.0.mixer.dt_proj.bias"]);
    QVERIFY(dt.min().item<float>() >= 1e-3f - 1e-6f && dt.max().item<float>() <= 0.1f + 1e-6f);
    QVERIFY(p["backbone.layers.0.mixer.conv1d.weight"].abs().max().item<float>() <= 0.5f);
    const double bound = 1.0 / std::sqrt(32.0);  // PyTorch default init of in_proj (fan_in 32)
    auto inProj = p["backbone.layers.0.mixer.in_proj.weight"];
    QVERIFY(inProj.abs().max().item<double>() <= bound);
    QVERIFY(inProj.abs().max().item<double>() > 0.9 * bound);  // uniform, not N(0, 0.02)
}

QTEST_APPLESS_MAIN(TestMamba)
#include "tst_mamba.moc"
