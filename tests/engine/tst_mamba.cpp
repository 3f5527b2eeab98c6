// Mamba (reference §3.4): the selective-scan kernel equals the naive recurrence in value and
// in every gradient, the backbone is causal, its keys and initialisation follow HF Mamba.

#include <malloc.h>

#include <cmath>
#include <set>

#include "model/icl_model.h"
#include "model/parallel_scan.h"
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
    void parallelScanEqualsNaiveRecurrence();
    void parallelScanStaysFiniteUnderStrongDecay();
    void modelTakesTheScanItsPolicyNames();
    void parallelScanOnTheGpu();
    void parallelScanKeepsNoStateHistory();
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

// The device path (parallel_scan.h) in float64 against the loop, every input's gradient, at
// lengths that fill chunks exactly, leave a partial chunk, fit one chunk or are one position.
void TestMamba::parallelScanEqualsNaiveRecurrence()
{
    auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
    auto opt = torch::TensorOptions(torch::kFloat64);
    const std::int64_t b = 2, e = 3, n = 4;
    const char* names[] = {"v", "delta", "A", "B", "C", "D"};
    for (std::int64_t t : {1, 7, 16, 37}) {
        auto make = [&](std::vector<std::int64_t> shape) {
            return torch::randn(shape, gen, opt).requires_grad_();
        };
        auto v = make({b, t, e});
        auto delta = torch::softplus(torch::randn({b, t, e}, gen, opt)).requires_grad_();
        auto A = (-torch::exp(0.5 * torch::randn({e, n}, gen, opt))).requires_grad_();
        auto Bm = make({b, t, n}), Cm = make({b, t, n}), D = make({e});
        const std::vector<torch::Tensor> inputs = {v, delta, A, Bm, Cm, D};
        auto weights = torch::randn({b, t, e}, gen, opt);
        auto yNaive = selectiveScanNaive(v, delta, A, Bm, Cm, D);
        auto gNaive = torch::autograd::grad({(yNaive * weights).sum()}, inputs);
        for (std::int64_t chunk : {1, 2, 4, 16, 64}) {
            const auto where = QString("T = %1, chunk %2").arg(t).arg(chunk);
            auto y = selectiveScanParallel(v, delta, A, Bm, Cm, D, chunk);
            QVERIFY2(torch::allclose(y, yNaive, 1e-12, 1e-12), qPrintable(where));
            auto g = torch::autograd::grad({(y * weights).sum()}, inputs);
            for (size_t i = 0; i < inputs.size(); ++i)
                QVERIFY2(torch::allclose(g[i], gNaive[i], 1e-10, 1e-12),
                         qPrintable(where + ": d" + names[i]));
        }
    }
}

// A trained Mamba's decays reach exp(-40) and below within a chunk: the scan multiplies them and
// never divides, so float32 stays finite and agrees with the loop (the reverse scan too).
void TestMamba::parallelScanStaysFiniteUnderStrongDecay()
{
    auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
    const std::int64_t b = 2, t = 40, f = 6;
    auto a = torch::rand({b, t, f}, gen, torch::kFloat32) * 1e-9;  // exp(-20) and less per step
    a.select(2, 0).fill_(1.0);                                     // and a channel that keeps all
    auto x = torch::randn({b, t, f}, gen, torch::kFloat32);
    a.requires_grad_();
    x.requires_grad_();
    auto loop = [&] {
        std::vector<torch::Tensor> hs;
        auto h = torch::zeros({b, f});
        for (std::int64_t i = 0; i < t; ++i)
            hs.push_back(h = a.select(1, i) * h + x.select(1, i));
        return torch::stack(hs, 1);
    };
    auto weights = torch::randn({b, t, f}, gen, torch::kFloat32);
    auto hLoop = loop();
    auto gLoop = torch::autograd::grad({(hLoop * weights).sum()}, {a, x});
    auto h = linearScan(a, x, 8);
    QVERIFY(torch::isfinite(h).all().item<bool>());
    QVERIFY(torch::allclose(h, hLoop, 1e-5, 1e-5));
    auto g = torch::autograd::grad({(h * weights).sum()}, {a, x});
    QVERIFY(torch::isfinite(g[0]).all().item<bool>() && torch::isfinite(g[1]).all().item<bool>());
    QVERIFY(torch::allclose(g[0], gLoop[0], 1e-4, 1e-4));
    QVERIFY(torch::allclose(g[1], gLoop[1], 1e-5, 1e-5));
}

// Whether the autograd graph behind `out` has a node whose name contains `needle`.
bool graphHas(const torch::Tensor& out, const std::string& needle)
{
    std::vector<torch::autograd::Node*> todo = {out.grad_fn().get()};
    std::set<torch::autograd::Node*> seen;
    while (!todo.empty()) {
        auto* node = todo.back();
        todo.pop_back();
        if (!node || !seen.insert(node).second)
            continue;
        if (node->name().find(needle) != std::string::npos)
            return true;
        for (const auto& edge : node->next_edges())
            todo.push_back(edge.function.get());
    }
    return false;
}

// The policy's switch reaches the blocks: a float64 model (off the CPU kernel) takes the
// parallel scan or the loop as its policy says, with the same predictions.
void TestMamba::modelTakesTheScanItsPolicyNames()
{
    auto model = makeMamba();
    model->to(torch::kFloat64);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
    auto xs = torch::randn({2, 6, 3}, gen, torch::kFloat64);
    auto ys = torch::randn({2, 6}, gen, torch::kFloat64);
    KernelPolicy policy = model->kernelPolicy();
    policy.parallelScan = false;
    model->setKernelPolicy(policy);
    auto loop = model->forward(xs, ys).predictions;
    QVERIFY(!graphHas(loop, "ParallelSelectiveScan"));
    policy.parallelScan = true;
    model->setKernelPolicy(policy);
    auto parallel = model->forward(xs, ys).predictions;
    QVERIFY(graphHas(parallel, "ParallelSelectiveScan"));
    QVERIFY(torch::allclose(parallel, loop, 1e-12, 1e-12));
    QVERIFY(parallel.abs().sum().item<double>() > 0);
}

// Where a GPU exists: the device's scan (parallel, what training takes there) against the CPU's
// kernel, values and every gradient, at a length that leaves a partial chunk.
void TestMamba::parallelScanOnTheGpu()
{
    if (!torch::cuda::is_available())
        QSKIP("needs a CUDA GPU and a LibTorch with CUDA");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(21);
    const std::int64_t b = 4, t = 45, e = 16, n = 8;
    auto opt = torch::TensorOptions(torch::kFloat32);
    std::vector<torch::Tensor> cpu = {torch::randn({b, t, e}, gen, opt),
                                      torch::softplus(torch::randn({b, t, e}, gen, opt)),
                                      -torch::exp(0.5 * torch::randn({e, n}, gen, opt)),
                                      torch::randn({b, t, n}, gen, opt),
                                      torch::randn({b, t, n}, gen, opt),
                                      torch::randn({e}, gen, opt)};
    std::vector<torch::Tensor> gpu;
    for (auto& x : cpu) {
        x.requires_grad_();
        gpu.push_back(x.detach().cuda().requires_grad_());
    }
    auto weights = torch::randn({b, t, e}, gen, opt);
    kernels::KernelContext context(1);
    auto y = selectiveScan(context, cpu[0], cpu[1], cpu[2], cpu[3], cpu[4], cpu[5]);
    auto g = torch::autograd::grad({(y * weights).sum()}, cpu);
    auto yGpu = selectiveScan(context, gpu[0], gpu[1], gpu[2], gpu[3], gpu[4], gpu[5]);
    auto gGpu = torch::autograd::grad({(yGpu * weights.cuda()).sum()}, gpu);
    QVERIFY(torch::allclose(yGpu.cpu(), y, 1e-4, 1e-5));
    for (size_t i = 0; i < g.size(); ++i)
        QVERIFY2(torch::allclose(gGpu[i].cpu(), g[i], 1e-3, 1e-4),
                 qPrintable(QString("input %1").arg(i)));
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
        for (const char* leaf :
             {"A_log", "D", "conv1d.weight", "conv1d.bias", "in_proj.weight", "x_proj.weight",
              "dt_proj.weight", "dt_proj.bias", "out_proj.weight"})
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

// Bytes that malloc has handed out and not had back (the main arena, where this thread's
// tensors live, and mapped chunks). Not the resident size: the process policy keeps freed heap.
std::int64_t bytesInUse()
{
    const auto info = mallinfo2();
    return static_cast<std::int64_t>(info.uordblks + info.hblkhd);
}

// The device path keeps what the CPU kernel keeps: its inputs. Four chained scans with autograd
// on hold no [B, T, E, N] tensor (64 MiB each here) once their forwards return: autograd used to
// keep decay and h of every layer, and the standard Mamba (32 layers) ran out of an H100's memory
// at N = 101.
void TestMamba::parallelScanKeepsNoStateHistory()
{
    auto gen = at::make_generator<at::CPUGeneratorImpl>(4);
    const std::int64_t b = 8, t = 512, e = 256, n = 16, layers = 4;
    const auto history = b * t * e * n * std::int64_t(sizeof(float));  // 64 MiB
    auto A = (-torch::exp(0.5 * torch::randn({e, n}, gen))).requires_grad_();
    auto D = torch::randn({e}, gen).requires_grad_();
    auto v = (0.1 * torch::randn({b, t, e}, gen)).requires_grad_();
    auto delta = (0.1 * torch::rand({b, t, e}, gen)).requires_grad_();
    auto Bm = torch::randn({b, t, n}, gen).requires_grad_();
    auto Cm = torch::randn({b, t, n}, gen).requires_grad_();
    const auto before = bytesInUse();
    auto y = v;
    for (std::int64_t l = 0; l < layers; ++l)
        y = selectiveScanParallel(y, delta, A, Bm, Cm, D, 8);
    const auto grown = bytesInUse() - before;
    QVERIFY2(grown < 2 * history,
             qPrintable(QString("the forwards left %1 MiB in use").arg(grown >> 20)));
    y.sum().backward();  // the recomputing backward runs through all four
    QVERIFY(torch::isfinite(v.grad()).all().item<bool>() &&
            A.grad().abs().sum().item<double>() > 0);
}

QTEST_APPLESS_MAIN(TestMamba)
#include "tst_mamba.moc"
