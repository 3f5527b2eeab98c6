// The in-context model (reference §3–4): RoPE depends only on i - j, ALiBi slopes, causality,
// attention rows, relative PEs are shift-invariant, NoPE is order-free in one layer, the
// reference's state-dict key names and initialisation.

#include <cmath>

#include "device/device_check.h"
#include "device/device_kernels.h"
#include "lengen/engine/config.h"
#include "lengen/engine/encodings.h"
#include "model/attention.h"
#include "model/attention_detail.h"
#include "model/icl_model.h"
#include "model/small_bmm.h"
#include "test_support.h"
#include "torch_compat.h"
#include "train/memory_estimate.h"

#include <torch/version.h>

using namespace lengen::engine;
using namespace lengen::engine::model;

namespace {

InContextModel makeModel(const std::string& pe, int layers = 2, std::uint64_t seed = 1)
{
    auto yaml = lengen::test::tinyConfig("linear_regression", pe);
    if (layers != 2)
        yaml = QString::fromStdString(yaml)
                   .replace("num_hidden_layers: 2", QString("num_hidden_layers: %1").arg(layers))
                   .toStdString();
    auto model = lengen::test::initialisedModel(yaml, seed);
    model->eval();
    return model;
}

// The predictions and every parameter's gradient of sum(predictions^2), under `policy`.
std::vector<torch::Tensor> outputAndGrads(InContextModel& model, const KernelPolicy& policy,
                                          const torch::Tensor& xs, const torch::Tensor& ys)
{
    model->setKernelPolicy(policy);
    model->zero_grad();
    auto out = model->forward(xs, ys).predictions;
    out.square().sum().backward();
    std::vector<torch::Tensor> grads = {out.detach().clone()};
    for (const auto& p : model->parameters())
        if (p.grad().defined())
            grads.push_back(p.grad().clone());
    return grads;
}

std::pair<torch::Tensor, torch::Tensor> prompt(std::int64_t n, std::uint64_t seed = 2)
{
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    return {torch::randn({3, n, 3}, gen, torch::kFloat32),
            torch::randn({3, n}, gen, torch::kFloat32)};
}

PositionSpan span(std::int64_t q, std::int64_t k)
{
    PositionSpan s;
    s.q = torch::tensor({q}, torch::kLong);
    s.k = torch::tensor({k}, torch::kLong);
    s.q0 = q;
    s.k0 = k;
    s.maxPos = std::max(q, k);
    return s;
}

}  // namespace

class TestModel final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }
    void membersMustFitTogether();
    void ropeScoreDependsOnlyOnDistance();
    void alibiSlopes();
    void deviceKernelsMatchTheOps();
    void causalForEveryPositionEncoding();
    void attentionRowsAreCausalDistributions();
    void queryBlocksAndRowCaptureChangeNothing();
    void relativeEncodingsIgnoreAShift();
    void nopeIgnoresOrderInOneLayer();
    void parameterNamesMatchTheReference();
    void initialisation();
    void memoryEstimateCountsEachEncodingsWeights();
    void directBatchedMatmulEqualsMatmul();
    void fusedAttentionEqualsTheWrittenOutOne();
    void fusedNormEqualsTheWrittenOutOne();
    void fusedNormStaysFusedInBf16();
    void deviceFusionKeepsTheForwardOnAGpu();
    void deviceRotaryEqualsTheOps();
};

void TestModel::ropeScoreDependsOnlyOnDistance()
{
    RotaryImpl rope(8, 10000.0);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
    const auto q0 = torch::randn({1, 1, 1, 8}, gen, torch::kFloat32);
    const auto k0 = torch::randn({1, 1, 1, 8}, gen, torch::kFloat32);
    auto score = [&](std::int64_t i, std::int64_t j) {
        auto q = q0.clone(), k = k0.clone();
        rope.rotate(q, k, span(i, j));
        return (q * k).sum().item<double>();
    };
    const double base = score(3, 1);
    QVERIFY(std::abs(score(10, 8) - base) < 1e-5);
    QVERIFY(std::abs(score(250, 248) - base) < 1e-4);
    QVERIFY(std::abs(score(3, 2) - base) > 1e-3);  // a different distance does change it
    // Rotate-half pairing: position 0 is the identity, and the norm is preserved.
    auto q = q0.clone(), k = k0.clone();
    rope.rotate(q, k, span(0, 7));
    QVERIFY(torch::allclose(q, q0));
    QVERIFY(std::abs(k.norm().item<double>() - k0.norm().item<double>()) < 1e-5);
}

void TestModel::alibiSlopes()
{
    auto pow2 = [](std::initializer_list<double> exps) {
        std::vector<double> v;
        for (double e : exps)
            v.push_back(std::pow(2.0, -e));
        return v;
    };
    QCOMPARE(AlibiImpl::slopes(4), pow2({2, 4, 6, 8}));
    QCOMPARE(AlibiImpl::slopes(8), pow2({1, 2, 3, 4, 5, 6, 7, 8}));
    QCOMPARE(AlibiImpl::slopes(6), pow2({2, 4, 6, 8, 1, 3}));
    std::vector<double> sixteen;
    for (int k = 1; k <= 16; ++k)
        sixteen.push_back(std::pow(2.0, -k / 2.0));
    QCOMPARE(AlibiImpl::slopes(16), sixteen);
    // The bias is -slope * (i - j): zero on the diagonal, decreasing with distance.
    AlibiImpl alibi(4);
    auto bias = alibi.logitBias(PositionSpan::contiguous(0, 5, torch::kCPU));  // [4, 5, 5]
    QCOMPARE(bias[1][4][4].item<float>(), 0.f);
    QCOMPARE(bias[1][4][1].item<float>(), -3.f / 16);
}

void TestModel::causalForEveryPositionEncoding()
{
    for (const std::string pe : {"rope", "nope", "alibi"}) {
        auto model = makeModel(pe);
        auto [xs, ys] = prompt(8);
        QVERIFY2(lengen::test::isCausalAt(model, xs, ys, 5), pe.c_str());
    }
}

void TestModel::attentionRowsAreCausalDistributions()
{
    auto model = makeModel("alibi");
    auto [xs, ys] = prompt(6);
    torch::NoGradGuard noGrad;
    ForwardOptions opt;
    opt.returnAttention = true;
    auto result = model->forward(xs, ys, opt);
    QCOMPARE(result.attention.size(), size_t(2));
    for (const auto& a : result.attention) {
        QCOMPARE(a.sizes().vec(), (std::vector<std::int64_t>{3, 2, 12, 12}));
        QVERIFY(torch::allclose(a.sum(-1), torch::ones({3, 2, 12}), 1e-5, 1e-5));
        QVERIFY(a.triu(1).eq(0).all().item<bool>());
    }
}

void TestModel::queryBlocksAndRowCaptureChangeNothing()
{
    // Evaluation computes attention a few query rows at a time and keeps only some rows:
    // predictions and the kept rows must equal one full forward, for every kind of PE.
    for (const std::string pe : {"rope", "nope", "alibi", "fire", "dynamic-yarn", "gpt2"}) {
        const char* gpt = "model: {family: GPT2, max_length: [16], n_embd: 32, n_layer: 2, "
                          "n_head: 4}\ntask: {data: gaussian, name: linear_regression, "
                          "curriculum: {dims: {start: 3, end: 3, increment: 0, interval: 10}, "
                          "points: {start: 8, end: 8, increment: 0, interval: 10}}}\n"
                          "training: {max_steps: 5}\n";
        auto model = pe == "gpt2" ? lengen::test::initialisedModel(gpt) : makeModel(pe);
        model->eval();
        auto [xs, ys] = prompt(8);
        torch::NoGradGuard noGrad;
        ForwardOptions full;
        full.returnAttention = true;
        auto a = model->forward(xs, ys, full);
        for (std::int64_t chunk : {1, 3, 5}) {
            ForwardOptions blocks;
            blocks.queryChunk = chunk;
            blocks.returnAttention = true;
            blocks.attentionRows = torch::tensor({0, 7, 14}, torch::kLong);
            auto b = model->forward(xs, ys, blocks);
            QVERIFY2(torch::allclose(a.predictions, b.predictions, 1e-5, 1e-6), pe.c_str());
            QCOMPARE(b.attention.size(), a.attention.size());
            for (size_t l = 0; l < a.attention.size(); ++l) {
                const auto heads = a.attention[l].size(1);
                QCOMPARE(b.attention[l].sizes().vec(),
                         (std::vector<std::int64_t>{3, heads, 3, 16}));
                auto rows = a.attention[l].index_select(2, blocks.attentionRows);
                QVERIFY2(torch::allclose(rows, b.attention[l], 1e-5, 1e-6), pe.c_str());
            }
        }
    }
}

void TestModel::relativeEncodingsIgnoreAShift()
{
    for (const std::string pe : {"rope", "alibi"}) {
        auto model = makeModel(pe);
        auto [xs, ys] = prompt(8);
        torch::NoGradGuard noGrad;
        ForwardOptions shifted;
        shifted.positionOffset = 37;
        auto a = model->forward(xs, ys).predictions;
        auto b = model->forward(xs, ys, shifted).predictions;
        QVERIFY2(torch::allclose(a, b, 1e-4, 1e-5), pe.c_str());
    }
}

void TestModel::nopeIgnoresOrderInOneLayer()
{
    auto model = makeModel("nope", 1);
    auto [xs, ys] = prompt(7);
    torch::NoGradGuard noGrad;
    auto perm = torch::tensor({3, 0, 5, 1, 4, 2, 6}, torch::kLong);  // last point stays last
    auto a = model->forward(xs, ys).predictions.select(1, 6);
    auto b =
        model->forward(xs.index_select(1, perm), ys.index_select(1, perm)).predictions.select(1, 6);
    QVERIFY(torch::allclose(a, b, 1e-5, 1e-6));
    auto rope = makeModel("rope", 1);
    QVERIFY(!torch::allclose(
        rope->forward(xs, ys).predictions.select(1, 6),
        rope->forward(xs.index_select(1, perm), ys.index_select(1, perm)).predictions.select(1, 6),
        1e-5, 1e-6));
}

void TestModel::parameterNamesMatchTheReference()
{
    auto model = makeModel("rope");
    std::set<std::string> names;
    for (const auto& p : model->named_parameters())
        names.insert(p.key());
    std::set<std::string> expected = {"input.weight", "output.weight", "transformer.norm.weight"};
    for (int l = 0; l < 2; ++l) {
        const std::string prefix = "transformer.layers." + std::to_string(l) + ".";
        for (const char* leaf :
             {"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
              "self_attn.o_proj.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
              "mlp.down_proj.weight", "input_layernorm.weight", "post_attention_layernorm.weight"})
            expected.insert(prefix + leaf);
    }
    QCOMPARE(names, expected);
    QCOMPARE(model->named_parameters()["transformer.layers.0.mlp.gate_proj.weight"].sizes().vec(),
             (std::vector<std::int64_t>{64, 16}));  // intermediate = 4 * hidden
}

void TestModel::initialisation()
{
    auto config = lengen::test::loadOne(QString::fromStdString(lengen::test::tinyConfig())
                                            .replace("hidden_size: 16", "hidden_size: 128")
                                            .toStdString());
    auto model = buildModel(config);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
    model->initialise(gen);
    auto params = model->named_parameters();
    const double std = params["transformer.layers.0.mlp.up_proj.weight"].std().item<double>();
    QVERIFY(std::abs(std - 0.02) < 0.001);
    QVERIFY(params["transformer.layers.1.input_layernorm.weight"].eq(1).all().item<bool>());
    // Same seed, same weights.
    auto again = buildModel(config);
    auto gen2 = at::make_generator<at::CPUGeneratorImpl>(3);
    again->initialise(gen2);
    QVERIFY(torch::equal(again->named_parameters()["input.weight"], params["input.weight"]));
}

// The memory estimate (before anything is allocated) counts each encoding's own weights from
// its row of the table: what the row says is what the built model holds, relative to RoPE.
void TestModel::memoryEstimateCountsEachEncodingsWeights()
{
    auto counts = [](const std::string& type) {
        const auto config =
            lengen::test::loadOne(lengen::test::tinyConfig("linear_regression", type));
        return std::pair{lengen::engine::training::estimateTraining(config).parameterCount,
                         double(buildModel(config)->parameterCount())};
    };
    const auto [estimatedRope, builtRope] = counts("rope");
    for (const auto& e : lengen::engine::encodingTable()) {
        if (e.backbone != lengen::engine::Backbone::Llama)
            continue;
        const auto [estimated, built] = counts(e.type);
        QVERIFY2(estimated - estimatedRope == built - builtRope, e.name.c_str());
    }
}

void TestModel::directBatchedMatmulEqualsMatmul()
{
    QVERIFY(hasDirectBlas());  // Debian's libtorch always loads libblas.so.3
    auto gen = at::make_generator<at::CPUGeneratorImpl>(8);
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            auto a = torch::randn(ta ? std::vector<std::int64_t>{3, 2, 5, 4}
                                     : std::vector<std::int64_t>{3, 2, 4, 5},
                                  gen, torch::kFloat32)
                         .requires_grad_();
            auto b = torch::randn(tb ? std::vector<std::int64_t>{3, 2, 6, 5}
                                     : std::vector<std::int64_t>{3, 2, 5, 6},
                                  gen, torch::kFloat32)
                         .requires_grad_();
            auto w = torch::randn({3, 2, 4, 6}, gen, torch::kFloat32);
            auto fast = batchedMatmul(a, b, ta, tb);
            auto slow = torch::matmul(ta ? a.transpose(-2, -1) : a, tb ? b.transpose(-2, -1) : b);
            QVERIFY(torch::allclose(fast, slow, 1e-5, 1e-5));
            auto gf = torch::autograd::grad({(fast * w).sum()}, {a, b});
            auto gs = torch::autograd::grad({(slow * w).sum()}, {a, b});
            QVERIFY(torch::allclose(gf[0], gs[0], 1e-5, 1e-5));
            QVERIFY(torch::allclose(gf[1], gs[1], 1e-5, 1e-5));
        }
}

void TestModel::fusedAttentionEqualsTheWrittenOutOne()
{
    // The GPU's attention (scaled_dot_product_attention, 2.1+) against the written-out path,
    // here on the CPU: causal, with an ALiBi-like bias, and the bias's gradient (FIRE learns it).
    if (!lengen::engine::compat::hasFusedAttention())
        QSKIP("LibTorch < 2.1 has no scaled_dot_product_attention (Debian's 1.13)");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
    const auto q = torch::randn({2, 3, 9, 4}, gen, torch::kFloat32);
    const auto k = torch::randn({2, 3, 9, 4}, gen, torch::kFloat32);
    const auto v = torch::randn({2, 3, 9, 4}, gen, torch::kFloat32);
    const double scale = 0.5;
    for (const bool withBias : {false, true}) {
        auto bias = withBias ? torch::randn({3, 9, 9}, gen, torch::kFloat32).requires_grad_()
                             : torch::Tensor();
        RowBias rows;
        if (withBias)
            rows = [&](std::int64_t r0, std::int64_t r1) {
                return bias.slice(1, r0, r1).slice(2, 0, r1);
            };
        const auto written = attendCausal(q, k, v, scale, rows, nullptr, LayerPath::Module);
        const auto fused = lengen::engine::compat::causalAttention(q, k, v, scale, bias);
        QVERIFY2(torch::allclose(fused, written, 1e-5, 1e-6),
                 withBias ? "with a bias" : "causal only");
        if (withBias) {
            const auto gWritten = torch::autograd::grad({written.sum()}, {bias})[0];
            const auto gFused = torch::autograd::grad({fused.sum()}, {bias})[0];
            QVERIFY(torch::allclose(gFused, gWritten, 1e-5, 1e-6));
        }
    }
}

// The GPU's RMSNorm (compat::rmsNorm: LibTorch's rms_norm from 2.4, one fused kernel each way
// on CUDA) against the formula, value and both gradients; here on the CPU.
void TestModel::fusedNormEqualsTheWrittenOutOne()
{
    if (!lengen::engine::compat::hasRmsNorm())
        QSKIP("LibTorch < 2.4 has no rms_norm (Debian's 1.13): the shim is the formula itself");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(12);
    const auto x = (torch::randn({3, 7, 16}, gen, torch::kFloat32) * 3).requires_grad_();
    const auto w = torch::randn({16}, gen, torch::kFloat32).requires_grad_();
    const double eps = 1e-6;
    const auto written = x * torch::rsqrt(x.square().mean(-1, true) + eps) * w;
    const auto fused = lengen::engine::compat::rmsNorm(x, w, eps);
    QVERIFY(torch::allclose(fused, written, 1e-6, 1e-6));
    const auto weights = torch::randn({3, 7, 16}, gen, torch::kFloat32);
    const auto gWritten = torch::autograd::grad({(written * weights).sum()}, {x, w});
    const auto gFused = torch::autograd::grad({(fused * weights).sum()}, {x, w});
    QVERIFY(torch::allclose(gFused[0], gWritten[0], 1e-5, 1e-6));
    QVERIFY(torch::allclose(gFused[1], gWritten[1], 1e-5, 1e-6));
}

#if TORCH_VERSION_MAJOR >= 2
// Every warning LibTorch gives while it lives (c10's handler of this thread).
class WarningLog final : public c10::WarningHandler {
public:
    WarningLog() : m_previous(c10::WarningUtils::get_warning_handler())
    {
        c10::WarningUtils::set_warning_handler(this);
    }
    ~WarningLog() override { c10::WarningUtils::set_warning_handler(m_previous); }
    void process(const c10::Warning& warning) override { said += warning.msg() + "\n"; }
    std::string said;

private:
    c10::WarningHandler* m_previous;
};
#endif

// bf16 activations and a float32 weight (autocast on a GPU): rms_norm takes its fused kernel only
// where both have one type, and otherwise warns and runs the composite ops. The H100's profile
// showed the warning on every step of the bf16 Device path.
void TestModel::fusedNormStaysFusedInBf16()
{
#if TORCH_VERSION_MAJOR >= 2
    if (!lengen::engine::compat::hasRmsNorm())
        QSKIP("LibTorch < 2.4 has no rms_norm");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(13);
    const auto x = torch::randn({3, 7, 16}, gen, torch::kFloat32);
    const auto w = (torch::randn({16}, gen, torch::kFloat32) * 0.1 + 1).requires_grad_();
    WarningLog log;
    const auto y = lengen::engine::compat::rmsNorm(x.to(torch::kBFloat16), w, 1e-6);
    QVERIFY2(log.said.find("Cannot dispatch to fused") == std::string::npos, log.said.c_str());
    QCOMPARE(y.scalar_type(), torch::kBFloat16);
    const auto written = x * torch::rsqrt(x.square().mean(-1, true) + 1e-6) * w;
    QVERIFY(torch::allclose(y.to(torch::kFloat32), written, 2e-2, 2e-2));
    y.to(torch::kFloat32).sum().backward();
    QCOMPARE(w.grad().scalar_type(), torch::kFloat32);
#else
    QSKIP("LibTorch < 2.4 has no rms_norm");
#endif
}

// On a GPU the Device path's fused norms give the forward and every gradient the written-out
// norms give (RoPE, ALiBi), and the GPU's rotary form (one addcmul, in x's type) what the CPU's
// gives.
void TestModel::deviceFusionKeepsTheForwardOnAGpu()
{
    if (!torch::cuda::is_available() || !lengen::engine::compat::hasFusedAttention())
        QSKIP("needs a CUDA GPU and a LibTorch with CUDA");
    const auto onCpu = prompt(9);  // not a structured binding: the lambda below captures them
    const auto xs = onCpu.first.cuda(), ys = onCpu.second.cuda();
    for (const char* pe : {"rope", "alibi"}) {
        auto model = makeModel(pe);
        model->to(torch::kCUDA);
        auto run = [&](bool fusion) {
            KernelPolicy policy;
            policy.path = LayerPath::Device;
            policy.deviceFusion = fusion;
            return outputAndGrads(model, policy, xs, ys);
        };
        const auto plain = run(false), fused = run(true);
        QCOMPARE(fused.size(), plain.size());
        for (size_t i = 0; i < plain.size(); ++i)
            QVERIFY2(torch::allclose(fused[i], plain[i], 1e-4, 1e-5), pe);
    }
    // Real tables (|cos|, |sin| <= 1) at positions 0..8, and x as bf16 holds it.
    auto gen = at::make_generator<at::CPUGeneratorImpl>(13);
    const auto x =
        torch::randn({2, 3, 9, 8}, gen, torch::kFloat32).to(torch::kBFloat16).to(torch::kFloat32);
    const auto angles =
        torch::outer(torch::arange(9, torch::kFloat32), torch::rand({8}, gen, torch::kFloat32));
    const auto c = angles.cos(), s = angles.sin();
    const auto cpu = model::detail::applyRotary(x, c, s);
    QVERIFY(torch::allclose(model::detail::applyRotary(x.cuda(), c.cuda(), s.cuda()).cpu(), cpu,
                            1e-5, 1e-6));
    const auto half = model::detail::applyRotary(x.cuda().to(torch::kBFloat16), c.cuda(), s.cuda());
    QCOMPARE(half.scalar_type(), torch::kBFloat16);  // no float32 copy of q and k
    // bf16 tables and result: a few of bf16's 2^-8 relative steps of |x| <= ~4.
    QVERIFY(torch::allclose(half.cpu().to(torch::kFloat32), cpu, 2e-2, 5e-2));
}

// Issue 74: rotary embedding as one kernel each way (LENGEN_DEVICE_ROTARY) gives the model the
// op path's outputs and gradients, for every rotary encoding and, unchanged, for the others.
void TestModel::deviceRotaryEqualsTheOps()
{
    if (!torch::cuda::is_available() || !lengen::engine::compat::hasFusedAttention())
        QSKIP("needs a CUDA GPU and a LibTorch with CUDA");
    if (!device::kernelsBuilt())
        QSKIP("this build has no device kernels (configured without nvcc)");
    const auto onCpu = prompt(9);
    const auto xs = onCpu.first.cuda(), ys = onCpu.second.cuda();
    for (const char* pe : {"rope", "yarn", "alibi", "nope"}) {
        auto model = makeModel(pe);
        model->to(torch::kCUDA);
        auto run = [&](bool rotary) {
            KernelPolicy policy;
            policy.path = LayerPath::Device;
            policy.deviceRotary = rotary;
            return outputAndGrads(model, policy, xs, ys);
        };
        const auto plain = run(false), kernel = run(true);
        QCOMPARE(kernel.size(), plain.size());
        for (size_t i = 0; i < plain.size(); ++i)
            QVERIFY2(torch::allclose(kernel[i], plain[i], 1e-4, 1e-5), pe);
    }
}

// Issue 58, item 2: the fused residual add + RMSNorm and SwiGLU (engine/src/device) give what
// the written-out ops give, forward and every gradient, in float32 and bfloat16, on rows that
// do not fill a chunk of the weight gradient's sums (300 = 256 + 44).
void TestModel::deviceKernelsMatchTheOps()
{
    if (!torch::cuda::is_available())
        QSKIP("needs a CUDA GPU and a LibTorch with CUDA");
    if (!device::kernelsBuilt())
        QSKIP("this build has no device kernels (configured without nvcc)");
    const auto checks = device::checkDeviceKernels(300, 96, 160, 0);
    QCOMPARE(checks.size(), size_t(6));
    for (const auto& c : checks) {
        const bool bf16 = c.dtype == "bfloat16";
        qInfo("%s %s: forward within %.2g, backward within %.2g", c.kernel.c_str(), c.dtype.c_str(),
              c.forward, c.backward);
        QVERIFY2(c.forward <= (bf16 ? 2e-2 : 1e-5), c.kernel.c_str());
        QVERIFY2(c.backward <= (bf16 ? 2e-2 : 1e-4), c.kernel.c_str());
    }
}

// The memory estimate of a members batch (moved from tst_members, which drives members).
void TestModel::membersMustFitTogether()
{
    // Room for two runs of the config: one fits, four members do not, and the message says
    // what four need.
    namespace tr = lengen::engine::training;
    const auto config =
        lengen::test::loadOne(lengen::test::tinyConfig("linear_regression", "rope", 10));
    const double room = 2 * tr::estimateTraining(config).total();
    tr::checkTrainingFits(config, "cpu", room);
    try {
        tr::checkTrainingFits(config, "cpu", room, 4);
        QFAIL("four members in the room of two");
    } catch (const lengen::engine::Error& e) {
        QCOMPARE(e.kind(), lengen::engine::ErrorKind::Config);
        QVERIFY2(std::string(e.what()).find("4 members need about") != std::string::npos, e.what());
    }
}

QTEST_APPLESS_MAIN(TestModel)
#include "tst_model.moc"
