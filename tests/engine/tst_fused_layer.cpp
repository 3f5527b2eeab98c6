// The fused Llama stack (model/fused_layer.h) computes what the module path computes: forward
// and every parameter's gradient agree to float rounding for every PE, and the raw kernels agree
// with the Torch ops they replace (all transposes of gemm, causal softmax with a bias, SwiGLU and
// GELU over the whole range where exp saturates). GPT-2's and Mamba's fused blocks are checked
// the same way, with one kernel thread and with the batch split in parts over three.

#include <atomic>
#include <chrono>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <set>
#include <thread>
#include <vector>

#include "lengen/engine/encodings.h"
#include "model/cpu_kernels.h"
#include "model/cpu_mamba.h"
#include "model/fused_layer.h"
#include "model/icl_model.h"
#include "model/kernel_context.h"
#include "model/llama.h"
#include "test_support.h"

using namespace lengen::engine;
using namespace lengen::engine::model;

namespace {

// Whether any node of the graph behind `t` is a fused layer (so the test compares two paths).
bool graphHasFusedLayer(const torch::Tensor& t)
{
    std::set<torch::autograd::Node*> seen;
    std::function<bool(torch::autograd::Node*)> walk = [&](torch::autograd::Node* n) {
        if (!n || !seen.insert(n).second)
            return false;
        if (n->name().find("Fused") != std::string::npos)  // FusedStack, FusedGpt2, FusedMamba
            return true;
        for (const auto& e : n->next_edges())
            if (walk(e.function.get()))
                return true;
        return false;
    };
    return walk(t.grad_fn().get());
}

struct Pass {
    torch::Tensor predictions;
    std::map<std::string, torch::Tensor> grads;
    bool fused = false;
};

// One training forward and backward under `path`, on `threads` kernel threads.
Pass runPass(InContextModel& model, const torch::Tensor& xs, const torch::Tensor& ys,
             LayerPath path, int threads = 1)
{
    model->setKernelPolicy({path, std::make_shared<kernels::KernelContext>(threads)});
    model->zero_grad();
    Pass p;
    p.predictions = model->forward(xs, ys).predictions;
    p.fused = graphHasFusedLayer(p.predictions);
    (p.predictions - ys).square().mean().backward();
    for (const auto& item : model->named_parameters())
        if (item.value().grad().defined())
            p.grads[item.key()] = item.value().grad().clone();
    model->setKernelPolicy({});
    return p;
}

// A tiny GPT-2 config (hidden 16, 2 blocks, 4 heads) with the given dropout.
std::string gpt2Config(double dropout)
{
    return "model: {family: GPT2, max_length: [16], n_embd: 16, n_layer: 2, n_head: 4, "
           "resid_pdrop: " +
           std::to_string(dropout) + ", embd_pdrop: 0, attn_pdrop: " + std::to_string(dropout) +
           "}\ntask: {data: gaussian, name: linear_regression, "
           "curriculum: {dims: {start: 3, end: 3, increment: 0, interval: 10}, "
           "points: {start: 7, end: 7, increment: 0, interval: 10}}}\ntraining: {max_steps: 5}\n";
}

// A tiny Mamba (hidden 16, 2 blocks, state 4: E = 32, R = 1).
std::string mambaConfig()
{
    return "model: {family: Mamba, type: ssm, max_length: [\"inf\"], hidden_size: 16, "
           "state_size: 4, num_hidden_layers: 2}\ntask: {data: gaussian, name: linear_regression, "
           "curriculum: {dims: {start: 3, end: 3, increment: 0, interval: 10}, "
           "points: {start: 7, end: 7, increment: 0, interval: 10}}}\ntraining: {max_steps: 5}\n";
}

// Max |a - b| relative to the larger of 1 and max |b|.
double relDiff(const torch::Tensor& a, const torch::Tensor& b)
{
    const double scale = std::max(1.0, b.abs().max().item<double>());
    return (a - b).abs().max().item<double>() / scale;
}

}  // namespace

class TestFusedLayer final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }
    void fusedAndModulePathsAgree_data();
    void fusedAndModulePathsAgree();
    void evaluationKeepsTheModulePath();
    void aGraphKeepsItsKernelContext();
    void theStackTakesItsBuffersOnlyWhenFree();
    void theStackAgreesWithEveryRowOut();
    void gemmMatchesMatmulForEveryTranspose();
    void onednnProductsHoldSignals();
    void causalSoftmaxMatchesTorch();
    void swigluMatchesTorchWhereExpSaturates();  // and GELU
    void softplusMatchesTorchAcrossItsThreshold();
};

void TestFusedLayer::fusedAndModulePathsAgree_data()
{
    QTest::addColumn<QString>("pe");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("points");
    for (const auto& e : lengen::engine::encodingTable())  // every Llama encoding of the table
        if (e.backbone == lengen::engine::Backbone::Llama && e.fusedCpu)  // CoPE: module path
            QTest::newRow(e.type.c_str()) << QString::fromStdString(e.type) << 2 << 7;
    QTest::newRow("alibi, 4 heads") << QString("alibi") << 4 << 7;
    QTest::newRow("rope, 1 head") << QString("rope") << 1 << 7;
    QTest::newRow("gpt2") << QString("gpt2") << 4 << 7;
    QTest::newRow("mamba") << QString("mamba") << 1 << 7;
    // 80 tokens: the short-prompt loops over five 16-lane groups of a padded row.
    QTest::newRow("rope, 80 tokens") << QString("rope") << 2 << 40;
    QTest::newRow("fire, 80 tokens") << QString("fire") << 2 << 40;
    QTest::newRow("t5, 80 tokens") << QString("t5") << 2 << 40;  // distances past the exact buckets
    QTest::newRow("xpos, 80 tokens") << QString("xpos") << 2 << 40;  // the keys' own tables
    QTest::newRow("sandwich, 80 tokens") << QString("sandwich") << 2 << 40;
    // 140 tokens: attention by sgemm into the padded rows (cpu_attention.cpp, kLoopTokens).
    QTest::newRow("rope, 140 tokens") << QString("rope") << 2 << 70;
    QTest::newRow("alibi, 140 tokens") << QString("alibi") << 2 << 70;
}

void TestFusedLayer::fusedAndModulePathsAgree()
{
    QFETCH(QString, pe);
    QFETCH(int, heads);
    QFETCH(int, points);
    if (!kernels::hasBlas())
        QSKIP("no BLAS sgemm in this process: the fused layer is off");
    auto yaml =
        pe == "gpt2" ? gpt2Config(0)
        : pe == "mamba"
            ? mambaConfig()
            : QString::fromStdString(
                  lengen::test::tinyConfig("linear_regression", pe.toStdString()))
                  .replace("num_attention_heads: 2", QString("num_attention_heads: %1").arg(heads))
                  .toStdString();
    auto model = lengen::test::initialisedModel(yaml, 3);
    {
        // Weights of O(1) so that every term matters (the 0.02 init leaves them tiny).
        torch::NoGradGuard noGrad;
        auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
        for (auto& p : model->parameters())
            if (p.dim() >= 1)
                p.add_(torch::randn(p.sizes(), gen, torch::kFloat32) * 0.3);
    }
    auto gen = at::make_generator<at::CPUGeneratorImpl>(4);
    auto xs = torch::randn({5, points, 3}, gen, torch::kFloat32);
    auto ys = torch::randn({5, points}, gen, torch::kFloat32);

    const Pass plain = runPass(model, xs, ys, LayerPath::Module);
    QVERIFY(!plain.fused);
    // One kernel thread, then three (slices of the batch items and rows on the pool).
    for (int threads : {1, 3}) {
        const Pass fused = runPass(model, xs, ys, LayerPath::Fused, threads);
        QVERIFY2(fused.fused, "the fused layer was not used");
        QVERIFY2(relDiff(fused.predictions, plain.predictions) < 1e-5,
                 qPrintable(QString::number(relDiff(fused.predictions, plain.predictions))));
        QCOMPARE(fused.grads.size(), plain.grads.size());
        QVERIFY(fused.grads.size() > 10);
        for (const auto& [name, g] : plain.grads) {
            const double d = relDiff(fused.grads.at(name), g);
            QVERIFY2(
                d < 2e-5,
                qPrintable(QString("%1 threads, %2: %3").arg(threads).arg(name.c_str()).arg(d)));
            QVERIFY2(g.abs().max().item<double>() > 0 || name.find("init_L") != std::string::npos,
                     name.c_str());
        }
    }
}

// Issue 40: a fused node kept its context as a raw address, so a graph whose session let go of
// the context (a policy change, a session ending) ran its backward on a destroyed pool. The
// graph now holds a share of it until the graph is freed.
void TestFusedLayer::aGraphKeepsItsKernelContext()
{
    if (!kernels::hasBlas())
        QSKIP("no BLAS sgemm in this process: the fused layer is off");
    auto model =
        lengen::test::initialisedModel(lengen::test::tinyConfig("linear_regression", "rope"), 3);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(4);
    auto xs = torch::randn({4, 7, 3}, gen, torch::kFloat32);
    auto ys = torch::randn({4, 7}, gen, torch::kFloat32);
    auto context = std::make_shared<kernels::KernelContext>(2);
    const std::weak_ptr<kernels::KernelContext> watch = context;
    model->setKernelPolicy({LayerPath::Fused, std::move(context)});
    auto loss = (model->forward(xs, ys).predictions - ys).square().mean();
    QVERIFY(graphHasFusedLayer(loss));
    model->setKernelPolicy({});  // the session lets go of its context
    QVERIFY2(!watch.expired(), "the recorded graph no longer holds its kernel context");
    loss.backward();
    for (const auto& p : model->parameters())
        QVERIFY(p.grad().defined());
    loss = torch::Tensor();  // the graph is freed, and the context with it
    QVERIFY(watch.expired());
}

// The Llama stack keeps its buffers between steps (FusedScratch): its gradient sums become the
// parameters' gradients, and its saved rows belong to a graph until its backward. A buffer may
// be taken again only when neither holds it: gradients kept across steps (accumulated) and two
// graphs recorded before either backward must come out as if every call had its own buffers.
void TestFusedLayer::theStackTakesItsBuffersOnlyWhenFree()
{
    if (!kernels::hasBlas())
        QSKIP("no BLAS sgemm in this process: the fused layer is off");
    auto model =
        lengen::test::initialisedModel(lengen::test::tinyConfig("linear_regression", "rope"), 3);
    model->setKernelPolicy({LayerPath::Fused, std::make_shared<kernels::KernelContext>(2)});
    auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
    const auto xa = torch::randn({4, 7, 3}, gen, torch::kFloat32), ya = torch::randn({4, 7}, gen);
    const auto xb = torch::randn({4, 7, 3}, gen, torch::kFloat32), yb = torch::randn({4, 7}, gen);
    const auto loss = [&](const torch::Tensor& xs, const torch::Tensor& ys) {
        return (model->forward(xs, ys).predictions - ys).square().mean();
    };
    const auto grads = [&] {
        std::vector<torch::Tensor> g;
        for (const auto& p : model->parameters())
            g.push_back(p.grad().clone());
        return g;
    };
    const auto dropGrads = [&] {
        for (auto& p : model->parameters())
            p.mutable_grad() = torch::Tensor();
    };
    const torch::Tensor layerWeight =
        model->named_parameters()["transformer.layers.0.mlp.down_proj.weight"];
    auto la = loss(xa, ya);
    QVERIFY(graphHasFusedLayer(la));
    la.backward();
    const auto ga = grads();
    const void* first = layerWeight.grad().data_ptr();
    dropGrads();
    loss(xb, yb).backward();
    const auto gb = grads();
    // Gradients dropped between steps (as AdamW does): the same buffer again, no new pages.
    QCOMPARE(layerWeight.grad().data_ptr(), first);
    dropGrads();
    loss(xa, ya).backward();
    loss(xb, yb).backward();  // accumulates into the gradients the first backward left
    auto both = grads();
    for (size_t i = 0; i < both.size(); ++i)
        QVERIFY2(relDiff(both[i], ga[i] + gb[i]) < 1e-6, "a kept gradient was overwritten");
    dropGrads();
    // Two graphs recorded before either backward: each keeps its own saved rows.
    auto lossA = loss(xa, ya), lossB = loss(xb, yb);
    lossA.backward();
    lossB.backward();
    both = grads();
    for (size_t i = 0; i < both.size(); ++i)
        QVERIFY2(relDiff(both[i], ga[i] + gb[i]) < 1e-6, "a graph's saved rows were overwritten");
}

// The stack with every row of its last layer out (LlamaImpl::forward on its own: the model's
// read-out always takes forwardEvenRows), at an odd prompt length: output, input gradient and
// every weight's gradient agree with the module path, on one kernel thread and on three.
void TestFusedLayer::theStackAgreesWithEveryRowOut()
{
    if (!kernels::hasBlas())
        QSKIP("no BLAS sgemm in this process: the fused layer is off");
    const auto config =
        lengen::test::loadOne(lengen::test::tinyConfig("linear_regression", "alibi"));
    auto gen = at::make_generator<at::CPUGeneratorImpl>(8);
    auto llama = std::make_shared<LlamaImpl>(config);
    {
        torch::NoGradGuard noGrad;
        for (auto& p : llama->parameters())
            p.add_(torch::randn(p.sizes(), gen, torch::kFloat32) * 0.3);
    }
    const auto h = torch::randn({3, 7, config.model.hiddenSize}, gen, torch::kFloat32);
    const auto pos = PositionSpan::contiguous(0, 7, h.device());
    const auto pass = [&](KernelPolicy policy, bool* fused) {
        llama->setKernelPolicy(std::move(policy));
        llama->zero_grad(true);
        auto x = h.clone().requires_grad_(true);
        auto out = llama->forward(x, pos, nullptr);
        *fused = graphHasFusedLayer(out);
        (out * out.detach().sin()).sum().backward();  // every row and column its own weight
        std::vector<torch::Tensor> g{out.detach(), x.grad()};
        for (const auto& p : llama->parameters())
            g.push_back(p.grad().clone());
        return g;
    };
    bool fused = false;
    const auto plain = pass({}, &fused);
    QVERIFY(!fused);
    for (int threads : {1, 3}) {
        const auto got =
            pass({LayerPath::Fused, std::make_shared<kernels::KernelContext>(threads)}, &fused);
        QVERIFY2(fused, "the fused stack was not used");
        QCOMPARE(got.size(), plain.size());
        for (size_t i = 0; i < got.size(); ++i)
            QVERIFY2(relDiff(got[i], plain[i]) < 2e-5,
                     qPrintable(QString("%1 threads, tensor %2: %3")
                                    .arg(threads)
                                    .arg(i)
                                    .arg(relDiff(got[i], plain[i]))));
    }
}

void TestFusedLayer::evaluationKeepsTheModulePath()
{
    const auto fusedOnCpu = [] { return chooseKernelPolicy(false, nullptr, {}); };
    auto model = lengen::test::initialisedModel(lengen::test::tinyConfig(), 1);
    auto xs = torch::randn({2, 5, 3}), ys = torch::randn({2, 5});
    // A model no session configured: the module path.
    QCOMPARE(model->kernelPolicy().path, LayerPath::Module);
    QVERIFY(!graphHasFusedLayer(model->forward(xs, ys).predictions));
    model->setKernelPolicy(fusedOnCpu());
    QCOMPARE(model->kernelPolicy().path, kernels::hasBlas() ? LayerPath::Fused : LayerPath::Module);
    {
        torch::NoGradGuard noGrad;  // evaluation: no graph at all
        QVERIFY(!model->forward(xs, ys).predictions.requires_grad());
    }
    QCOMPARE(graphHasFusedLayer(model->forward(xs, ys).predictions), kernels::hasBlas());
    lengen::engine::SessionSwitches moduleOnly;  // the documented switch picks the module path
    moduleOnly.fused = false;
    model->setKernelPolicy(chooseKernelPolicy(false, nullptr, moduleOnly));
    // The environment is the front end's to read: LENGEN_FUSED=0 becomes that switch there.
    qputenv("LENGEN_FUSED", "0");
    QVERIFY(!lengen::engine::sessionSwitchesFromEnvironment().fused);
    qunsetenv("LENGEN_FUSED");
    QVERIFY(lengen::engine::sessionSwitchesFromEnvironment().fused);
    // oneDNN's products are the default where present (docs/performance.md, issue 57):
    // LENGEN_ONEDNN=0 alone turns them off.
    QVERIFY(lengen::engine::SessionSwitches().onednnGemm);
    QVERIFY(lengen::engine::sessionSwitchesFromEnvironment().onednnGemm);
    qputenv("LENGEN_ONEDNN", "0");
    QVERIFY(!lengen::engine::sessionSwitchesFromEnvironment().onednnGemm);
    qunsetenv("LENGEN_ONEDNN");
    QCOMPARE(model->kernelPolicy().path, LayerPath::Module);
    QVERIFY(!graphHasFusedLayer(model->forward(xs, ys).predictions));
    // GPT-2 with dropout: the mask comes from the run's generator, so the module path.
    auto dropping = lengen::test::initialisedModel(gpt2Config(0.1), 1);
    dropping->setKernelPolicy(fusedOnCpu());
    QVERIFY(!graphHasFusedLayer(dropping->forward(xs, ys).predictions));
    auto plain = lengen::test::initialisedModel(gpt2Config(0), 1);
    plain->setKernelPolicy(fusedOnCpu());
    QCOMPARE(graphHasFusedLayer(plain->forward(xs, ys).predictions), kernels::hasBlas());
}

void TestFusedLayer::gemmMatchesMatmulForEveryTranspose()
{
    if (!kernels::hasBlas())
        QSKIP("no BLAS sgemm in this process");
    // Each route a product can take: oneDNN where LibTorch brings it (Debian's), and the BLAS.
    std::set<std::string> backends;
    struct {
        int (*get)() = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
        void (*set)(int) = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT,
                                                                 "omp_set_num_threads"));
        bool usable() const { return get && set; }
    } omp;
    const int ompBefore = omp.usable() ? omp.get() : 0;
    for (bool onednn : {true, false}) {
        kernels::useOnednn(onednn);
        kernels::SerialBlas oneThread;  // as inside a slice: oneDNN's products where it is
        backends.insert(kernels::gemmBackend());
        auto gen = at::make_generator<at::CPUGeneratorImpl>(2);
        const int m = 7, n = 5, k = 9;
        for (bool ta : {false, true})
            for (bool tb : {false, true}) {
                // Stored with two spare columns, so the leading dimensions are not the widths.
                auto a = torch::randn({ta ? k : m, (ta ? m : k) + 2}, gen, torch::kFloat32);
                auto b = torch::randn({tb ? n : k, (tb ? k : n) + 2}, gen, torch::kFloat32);
                auto av = a.slice(1, 0, ta ? m : k), bv = b.slice(1, 0, tb ? k : n);
                auto c = torch::ones({m, n + 3}, torch::kFloat32);
                if (omp.usable())  // the caller's OpenMP count: oneDNN's product keeps it
                    omp.set(3);
                kernels::gemm(ta, tb, m, n, k, 0.5f, a.data_ptr<float>(), a.size(1),
                              b.data_ptr<float>(), b.size(1), 2.0f, c.data_ptr<float>(), n + 3);
                if (omp.usable())
                    QCOMPARE(omp.get(), 3);
                auto want = 0.5 * torch::matmul(ta ? av.t() : av, tb ? bv.t() : bv) + 2.0;
                QVERIFY2(torch::allclose(c.slice(1, 0, n), want, 1e-5, 1e-5),
                         kernels::gemmBackend());
                QVERIFY(c.slice(1, n).eq(1).all().item<bool>());  // outside C untouched
            }
    }
    kernels::useOnednn(true);  // the default (SessionSwitches::onednnGemm)
    if (omp.usable())
        omp.set(ompBefore);
    qInfo("products checked on: %s", backends.size() == 2 ? "oneDNN and BLAS" : "BLAS");
}

namespace {
std::atomic<int> g_signalsTaken{0};
void takeSignal(int) { g_signalsTaken.fetch_add(1, std::memory_order_relaxed); }

// The quick layer's products, forward and backward (576 rows, widths 64 and 256), on oneDNN in
// a thread that takes a SIGUSR1 every 20 us, as under a sampling profiler or a Ctrl-C; then
// the heap is used. 0: the signals were taken, the products are right; 1 or 2 otherwise.
int productsUnderSignals()
{
    struct sigaction take = {};
    take.sa_handler = takeSignal;
    sigemptyset(&take.sa_mask);
    sigaction(SIGUSR1, &take, nullptr);
    struct Shape {
        bool ta, tb;
        int m, n, k;
    };
    const std::vector<Shape> shapes = {
        {false, false, 576, 192, 64}, {false, true, 576, 64, 64},  {true, false, 64, 64, 576},
        {false, false, 576, 256, 64}, {false, true, 576, 256, 64}, {true, false, 64, 256, 576},
        {false, false, 576, 64, 256}, {true, false, 256, 64, 576}, {false, true, 576, 64, 256}};
    std::vector<float> a(576 * 256, 0.5f), b(576 * 256, 0.25f), c(576 * 256, 0.0f);
    std::atomic<bool> done{false};
    std::thread worker([&] {
        kernels::SerialBlas oneThread;
        for (int i = 0; i < 300; ++i)
            for (const Shape& s : shapes)
                kernels::gemm(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), s.ta ? s.m : s.k, b.data(),
                              s.tb ? s.k : s.n, 0.0f, c.data(), s.n);
        done = true;
    });
    while (!done) {
        pthread_kill(worker.native_handle(), SIGUSR1);
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    worker.join();
    std::vector<std::vector<float>>(64, std::vector<float>(4096)).clear();  // the heap, used
    if (g_signalsTaken.load() < 50)
        return 1;                         // the check did not run: no signal reached the thread
    return c[0] == 256 * 0.125f ? 0 : 2;  // k = 256 terms of 0.5 * 0.25
}
}  // namespace

void TestFusedLayer::onednnProductsHoldSignals()
{
    // oneDNN 2.6's generated sgemm kernels run with the stack pointer in a heap workspace; a
    // handler run on that thread meanwhile wrote its frame over the heap, and the process
    // aborted on the next free ("corrupted size vs. prev_size"). The products hold signals.
    // Checked in a child process, so that a corrupted heap fails this test (the child's exit
    // status) instead of hanging QtTest's crash handler on malloc's lock.
    kernels::useOnednn(true);
    const bool present = [] {
        kernels::SerialBlas oneThread;  // one thread's products: oneDNN's where it is present
        return std::string(kernels::gemmBackend()) == "oneDNN";
    }();
    if (!present)
        QSKIP("no oneDNN in this process");
    const pid_t child = fork();
    QVERIFY(child >= 0);
    if (child == 0) {
        signal(SIGABRT, SIG_DFL);  // a corrupted heap ends the child plainly
        _exit(productsUnderSignals());
    }
    int status = 0;
    for (int i = 0; i < 600 && waitpid(child, &status, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (waitpid(child, &status, WNOHANG) == 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        QFAIL("the products under signals did not finish in 60 s");
    }
    QVERIFY2(WIFEXITED(status),
             qPrintable(QStringLiteral("the child died of signal %1 (a corrupted heap aborts)")
                            .arg(WTERMSIG(status))));
    QCOMPARE(WEXITSTATUS(status), 0);
}

void TestFusedLayer::causalSoftmaxMatchesTorch()
{
    auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
    // 19 rows: the last three run over two 16-lane groups, the others over one.
    const int t = 19, ld = kernels::attentionRowStride(t);
    QCOMPARE(ld, 32);
    auto s = torch::randn({t, t}, gen, torch::kFloat32) * 30;  // wide logits: exp saturates
    auto bias = torch::randn({t, t}, gen, torch::kFloat32) * 5;
    auto mask = torch::full({t, t}, -INFINITY).triu(1);
    auto want = torch::softmax(s + bias + mask, -1);
    // Padded rows; lanes past each row's diagonal hold anything, NaN and infinity included.
    auto p = torch::full({t, ld}, NAN);
    p.slice(1, 0, t).copy_(s);
    p.slice(1, 0, t).masked_fill_(mask.isinf(), INFINITY);
    kernels::causalSoftmaxForward(p.data_ptr<float>(), t, ld, bias.data_ptr<float>());
    QVERIFY(torch::allclose(p.slice(1, 0, t), want, 1e-5, 1e-6));
    QVERIFY(p.slice(1, t).eq(0).all().item<bool>());
    QVERIFY(p.slice(1, 0, t).triu(1).eq(0).all().item<bool>());

    // Backward: ds = p * (dp - sum(dp * p)) against autograd on the Torch softmax.
    auto x = (s + bias).clone().requires_grad_(true);
    auto dp = torch::randn({t, t}, gen, torch::kFloat32);
    torch::softmax(x + mask, -1).backward(dp);
    auto ds = torch::randn({t, ld}, gen, torch::kFloat32);  // finite past the diagonal
    ds.slice(1, 0, t).copy_(dp);
    kernels::causalSoftmaxBackward(p.data_ptr<float>(), ds.data_ptr<float>(), t, ld);
    QVERIFY(torch::allclose(ds.slice(1, 0, t), x.grad(), 1e-4, 1e-5));
    QVERIFY(ds.slice(1, t).eq(0).all().item<bool>());
}

void TestFusedLayer::swigluMatchesTorchWhereExpSaturates()
{
    const int rows = 3, inter = 64;
    auto gate = torch::linspace(-120, 120, rows * inter).view({rows, inter});
    auto up = torch::linspace(-2, 3, rows * inter).view({rows, inter});
    auto gu = torch::cat({gate, up}, 1).contiguous();  // [rows, 2I]
    auto a = torch::empty({rows, inter});
    kernels::swigluForward(gu.data_ptr<float>(), a.data_ptr<float>(), rows, inter);
    QVERIFY(torch::allclose(a, torch::silu(gate) * up, 1e-5, 1e-6));

    auto g = gate.clone().requires_grad_(true), u = up.clone().requires_grad_(true);
    auto da = torch::linspace(1, -1, rows * inter).view({rows, inter});
    (torch::silu(g) * u).backward(da);
    auto dgu = torch::empty({rows, 2 * inter});
    kernels::swigluBackward(gu.data_ptr<float>(), da.data_ptr<float>(), dgu.data_ptr<float>(), rows,
                            inter);
    QVERIFY(torch::allclose(dgu.slice(1, 0, inter), g.grad(), 1e-5, 1e-6));
    QVERIFY(torch::allclose(dgu.slice(1, inter), u.grad(), 1e-5, 1e-6));

    // GPT-2's tanh GELU, forward and backward, over the same range.
    auto y = torch::empty_like(gate);
    kernels::geluTanhForward(gate.data_ptr<float>(), y.data_ptr<float>(), gate.numel());
    QVERIFY(torch::allclose(y, torch::gelu(gate, "tanh"), 1e-5, 1e-5));
    auto x = gate.clone().requires_grad_(true);
    torch::gelu(x, "tanh").backward(da);
    auto dx = torch::empty_like(gate);
    kernels::geluTanhBackward(gate.data_ptr<float>(), da.data_ptr<float>(), dx.data_ptr<float>(),
                              gate.numel());
    QVERIFY(torch::allclose(dx, x.grad(), 1e-5, 1e-6));
    // NaN stays NaN (a diverging run must be seen as one).
    gu[0][0] = NAN;
    kernels::swigluForward(gu.data_ptr<float>(), a.data_ptr<float>(), rows, inter);
    QVERIFY(std::isnan(a[0][0].item<float>()));
}

void TestFusedLayer::softplusMatchesTorchAcrossItsThreshold()
{
    // From deep in the tail (exp underflows) through 0 to past PyTorch's threshold of 20.
    auto lin =
        torch::cat({torch::linspace(-100, 30, 1001), torch::tensor({19.99f, 20.0f, 20.01f})});
    auto delta = torch::empty_like(lin);
    kernels::softplusForward(lin.data_ptr<float>(), delta.data_ptr<float>(), lin.numel());
    QVERIFY(torch::allclose(delta, torch::softplus(lin), 2e-6, 1e-30));
    auto x = lin.clone().requires_grad_(true);
    auto dd = torch::linspace(-1, 2, lin.numel());
    torch::softplus(x).backward(dd);
    auto dlin = torch::empty_like(lin);
    kernels::softplusBackward(lin.data_ptr<float>(), dd.data_ptr<float>(), dlin.data_ptr<float>(),
                              lin.numel());
    QVERIFY(torch::allclose(dlin, x.grad(), 1e-6, 1e-30));
}

QTEST_GUILESS_MAIN(TestFusedLayer)
#include "tst_fused_layer.moc"
