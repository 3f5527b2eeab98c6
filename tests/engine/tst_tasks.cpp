// Function classes (reference §1): label semantics recomputed independently from the drawn
// parameters, planting and literal rates (statistical, fixed seeds, tolerances), shapes,
// truncation, determinism and metrics.

#include <cmath>

#include "data/tasks.h"
#include "test_support.h"

using namespace lengen::engine;
using data::TaskSampler;
using data::TaskShape;

namespace {

struct Draw {
    torch::Tensor xs, ys;
    std::map<std::string, torch::Tensor> params;
};

Draw draw(const std::string& task, TaskShape shape, std::int64_t n, std::uint64_t seed = 7,
          std::int64_t dt = -1)
{
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    TaskSampler sampler(task, shape);
    auto f = sampler.sample(gen);
    Draw d;
    d.xs = f->sampleXs(n, dt < 0 ? shape.dims : dt, gen);
    d.ys = f->evaluate(d.xs);
    d.params = f->parameters();
    return d;
}

// Every literal of w [B, D] satisfied by x [B, N, D] (x_i == w_i wherever w_i != 0): [B, N].
torch::Tensor allLiteralsHold(const torch::Tensor& xs, const torch::Tensor& w)
{
    auto lit = w.ne(0).unsqueeze(1);
    return (xs.eq(w.unsqueeze(1)) | ~lit).all(2);
}
torch::Tensor anyLiteralHolds(const torch::Tensor& xs, const torch::Tensor& w)
{
    return (xs.eq(w.unsqueeze(1)) & w.ne(0).unsqueeze(1)).any(2);
}
torch::Tensor asLabel(const torch::Tensor& truth) { return truth.to(torch::kFloat32) * 2 - 1; }

double meanOf(const torch::Tensor& t) { return t.to(torch::kFloat64).mean().item<double>(); }

}  // namespace

class TestTasks final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }
    void regressionLabels();
    void truncationZeroesCoordinates();
    void decisionTreeAndRelu();
    void conjunctionSemanticsAndPlanting();
    void disjunctionSemanticsAndPlanting();
    void thresholdTasks();
    void parityAtFiftyDimensions();
    void normalForms();
    void shapesStayBatchByPoints();
    void sameSeedSameData();
    void metricsAndLoss();
};

void TestTasks::regressionLabels()
{
    auto d = draw("linear_regression", {64, 8}, 20);
    auto expected = torch::matmul(d.xs, d.params["w"]).squeeze(-1);
    QVERIFY(torch::allclose(d.ys, expected));
    QVERIFY(std::abs(meanOf(d.xs.std()) - 1.0) < 0.05);

    auto s = draw("sparse_linear_regression", {500, 10}, 5);
    auto nonzero = s.params["w"].squeeze(-1).ne(0).sum(1);
    QVERIFY(nonzero.eq(3).all().item<bool>());  // exactly 3 active coordinates per row
    // Each coordinate is active in 3/10 of the rows (uniform subsets).
    auto perCoord = s.params["w"].squeeze(-1).ne(0).to(torch::kFloat32).mean(0);
    QVERIFY((perCoord - 0.3).abs().max().item<float>() < 0.07);

    auto q = draw("quadratic_regression", {16, 6}, 9);
    QVERIFY(torch::allclose(
        q.ys, torch::matmul(q.xs.square(), q.params["w"]).squeeze(-1) / std::sqrt(3.0), 1e-5,
        1e-5));
    auto noisy = draw("noisy_linear_regression", {8, 4}, 6);  // noise_std 0 as configured
    QVERIFY(torch::allclose(noisy.ys, torch::matmul(noisy.xs, noisy.params["w"]).squeeze(-1)));
}

void TestTasks::truncationZeroesCoordinates()
{
    auto d = draw("linear_regression", {32, 10}, 12, 3, 4);
    QVERIFY(d.xs.slice(2, 4).eq(0).all().item<bool>());
    QVERIFY(d.xs.slice(2, 0, 4).ne(0).all().item<bool>());
    // Boolean tasks ignore the dimension curriculum (reference §1.2).
    auto b = draw("majority", {32, 10}, 12, 3, 4);
    QVERIFY(b.xs.abs().eq(1).all().item<bool>());
}

void TestTasks::decisionTreeAndRelu()
{
    auto d = draw("decision_tree", {6, 5}, 30);
    auto feature = d.params["feature"], value = d.params["value"];
    for (int b = 0; b < 6; ++b)
        for (int i = 0; i < 30; ++i) {
            std::int64_t node = 0;
            for (int level = 0; level < 4; ++level) {
                const auto f = feature[b][node].item<std::int64_t>();
                node = 2 * node + 1 + (d.xs[b][i][f].item<float>() > 0 ? 1 : 0);
            }
            QCOMPARE(d.ys[b][i].item<float>(), value[b][node].item<float>());
        }
    auto r = draw("relu_2nn_regression", {4, 3}, 10);
    auto expected = torch::matmul(torch::relu(torch::matmul(r.xs, r.params["w1"])), r.params["w2"])
                        .squeeze(-1) *
                    std::sqrt(0.5);
    QVERIFY(torch::allclose(r.ys, expected, 1e-5, 1e-5));
}

void TestTasks::conjunctionSemanticsAndPlanting()
{
    auto d = draw("conjunction", {4000, 12}, 40);
    auto w = d.params["w"];
    QVERIFY(d.ys.eq(asLabel(allLiteralsHold(d.xs, w))).all().item<bool>());
    // Literal probabilities .70 zero / .15 plus / .15 minus.
    QVERIFY(std::abs(meanOf(w.eq(0)) - 0.70) < 0.01);
    QVERIFY(std::abs(meanOf(w.eq(1)) - 0.15) < 0.01);
    // P(y = +1) per row = .3 + .7 * 2^-m (planted, or satisfied by chance).
    auto m = w.abs().sum(1);
    auto expected = 0.3 + 0.7 * torch::pow(0.5, m);
    QVERIFY(std::abs(meanOf(d.ys.eq(1)) - meanOf(expected)) < 0.01);
}

void TestTasks::disjunctionSemanticsAndPlanting()
{
    auto d = draw("disjunction", {4000, 12}, 40);
    auto w = d.params["w"];
    QVERIFY(d.ys.eq(asLabel(anyLiteralHolds(d.xs, w))).all().item<bool>());
    auto m = w.abs().sum(1);
    QVERIFY(std::abs(meanOf(d.ys.eq(-1)) - meanOf(0.3 + 0.7 * torch::pow(0.5, m))) < 0.01);

    auto s = draw("sparse_disjunction", {4000, 12}, 40);
    QVERIFY(s.params["w"].sum(1).eq(4).all().item<bool>());
    QVERIFY(s.ys.eq(asLabel(anyLiteralHolds(s.xs, s.params["w"]))).all().item<bool>());
    QVERIFY(std::abs(meanOf(s.ys.eq(-1)) - (0.3 + 0.7 / 16)) < 0.01);
}

void TestTasks::thresholdTasks()
{
    auto maj = draw("majority", {2000, 15}, 30);
    auto w = maj.params["w"];
    QVERIFY(std::abs(meanOf(w) - 0.3) < 0.01);
    auto votes = torch::matmul(maj.xs, w.unsqueeze(-1)).squeeze(-1);
    QVERIFY(maj.ys.eq(asLabel(votes.gt(0))).all().item<bool>());  // strict majority; ties -1

    auto hs = draw("int_halfspace", {2000, 15}, 30);
    auto hw = hs.params["w"];
    for (int v = -3; v <= 3; ++v)
        QVERIFY(std::abs(meanOf(hw.eq(v)) - 1.0 / 7) < 0.01);
    QVERIFY(hs.ys.eq(asLabel(torch::matmul(hs.xs, hw.unsqueeze(-1)).squeeze(-1).gt(0.5)))
                .all()
                .item<bool>());

    auto st = draw("sparse_thres", {3000, 15}, 30);
    auto thr = st.params["threshold"];
    for (double t : {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5})
        QVERIFY(std::abs(meanOf(thr.eq(t)) - 1.0 / 6) < 0.02);
    auto s = torch::matmul(st.xs, st.params["w"].unsqueeze(-1)).squeeze(-1);
    QVERIFY(st.ys.eq(asLabel(s.gt(thr))).all().item<bool>());
    QVERIFY(std::abs(meanOf(st.params["w"].ne(0)) - 0.30) < 0.01);
}

void TestTasks::parityAtFiftyDimensions()
{
    auto d = draw("parity", {2000, 50}, 20);  // the reference cannot run D = 50 (§9.7)
    auto w = d.params["w"];
    QVERIFY(std::abs(meanOf(w) - 0.5) < 0.01);
    auto ones = torch::matmul(d.xs.eq(1).to(torch::kFloat32), w.unsqueeze(-1)).squeeze(-1);
    QVERIFY(d.ys.eq(asLabel(torch::fmod(ones, 2).eq(1))).all().item<bool>());
    QVERIFY(std::abs(meanOf(d.ys.eq(1)) - 0.5) < 0.02);

    auto sp = draw("sparse_parity", {500, 10}, 20);
    QVERIFY(sp.params["w"].sum(1).eq(2).all().item<bool>());
    auto picked =
        torch::matmul(sp.xs.eq(1).to(torch::kFloat32), sp.params["w"].unsqueeze(-1)).squeeze(-1);
    QVERIFY(sp.ys.eq(asLabel(picked.eq(1))).all().item<bool>());  // XOR of the two
}

void TestTasks::normalForms()
{
    auto dnf = draw("dnf", {3000, 12}, 40);
    auto w = dnf.params["w"];  // [B, 3, D]
    QVERIFY(std::abs(meanOf(w.ne(0)) - 0.20) < 0.01);
    auto terms = torch::stack({allLiteralsHold(dnf.xs, w.select(1, 0)),
                               allLiteralsHold(dnf.xs, w.select(1, 1)),
                               allLiteralsHold(dnf.xs, w.select(1, 2))},
                              0);
    QVERIFY(dnf.ys.eq(asLabel(terms.any(0))).all().item<bool>());
    // The chosen term is planted true on 35 % of the points (plus chance).
    auto chosen = dnf.params["chosen"];
    auto chosenW = w.gather(1, chosen.view({-1, 1, 1}).expand({-1, 1, w.size(2)})).squeeze(1);
    auto m = chosenW.abs().sum(1);
    const double expectTrue = meanOf(0.35 + 0.65 * torch::pow(0.5, m));
    QVERIFY(std::abs(meanOf(allLiteralsHold(dnf.xs, chosenW)) - expectTrue) < 0.01);

    auto cnf = draw("cnf", {3000, 12}, 40);
    auto cw = cnf.params["w"];
    auto clauses = torch::stack({anyLiteralHolds(cnf.xs, cw.select(1, 0)),
                                 anyLiteralHolds(cnf.xs, cw.select(1, 1)),
                                 anyLiteralHolds(cnf.xs, cw.select(1, 2))},
                                0);
    QVERIFY(cnf.ys.eq(asLabel(clauses.all(0))).all().item<bool>());
    auto cc = cnf.params["chosen"];
    auto ccw = cw.gather(1, cc.view({-1, 1, 1}).expand({-1, 1, cw.size(2)})).squeeze(1);
    const double expectFalse = meanOf(0.30 + 0.70 * torch::pow(0.5, ccw.abs().sum(1)));
    QVERIFY(std::abs(meanOf(~anyLiteralHolds(cnf.xs, ccw)) - expectFalse) < 0.01);
}

void TestTasks::shapesStayBatchByPoints()
{
    for (const auto& task : knownTaskNames()) {
        auto d = draw(task, {1, 3}, 1);
        QCOMPARE(d.xs.sizes().vec(), (std::vector<std::int64_t>{1, 1, 3}));
        QCOMPARE(d.ys.sizes().vec(), (std::vector<std::int64_t>{1, 1}));
        if (isClassificationTaskName(task))
            QVERIFY2(d.ys.abs().eq(1).all().item<bool>() || task == "linear_classification",
                     task.c_str());
    }
}

void TestTasks::sameSeedSameData()
{
    auto a = draw("cnf", {8, 6}, 10, 42), b = draw("cnf", {8, 6}, 10, 42),
         c = draw("cnf", {8, 6}, 10, 43);
    QVERIFY(torch::equal(a.xs, b.xs) && torch::equal(a.ys, b.ys));
    QVERIFY(!torch::equal(a.xs, c.xs));
}

void TestTasks::metricsAndLoss()
{
    TaskSampler boolean("conjunction", {1, 2}), regression("linear_regression", {1, 2});
    auto ys = torch::tensor({{1.f, -1.f, 1.f}});
    auto pred = torch::tensor({{0.5f, -2.f, 0.f}});  // a prediction of exactly 0 is wrong
    QVERIFY(torch::equal(boolean.metric(pred, ys), torch::tensor({{1.f, 1.f, 0.f}})));
    QVERIFY(torch::allclose(regression.metric(pred, ys), torch::tensor({{0.25f, 1.f, 1.f}})));
    const double bce = boolean.loss(pred, ys).item<double>();
    const double expected = -(std::log(1 / (1 + std::exp(-0.5))) +
                              std::log(1 - 1 / (1 + std::exp(2.0))) + std::log(0.5)) /
                            3;
    QVERIFY(std::abs(bce - expected) < 1e-6);
    QVERIFY(std::abs(regression.loss(pred, ys).item<double>() - 2.25 / 3) < 1e-6);
}

QTEST_APPLESS_MAIN(TestTasks)
#include "tst_tasks.moc"
