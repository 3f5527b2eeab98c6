// Baselines (reference §6.4), aggregation (§6.5), bands over seeds (a sweep's aggregate) and
// the evaluation methods' covariate shifts against closed forms and hand-computed prompts.

#include "eval/baselines.h"
#include "eval/eval_methods.h"
#include "eval/statistics.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/seed_stats.h"
#include "test_support.h"

using namespace lengen::engine;
using namespace lengen::engine::eval;

namespace {

at::Generator seeded(std::uint64_t seed) { return at::make_generator<at::CPUGeneratorImpl>(seed); }

// Reference prediction at i from an explicit pseudo-inverse of the prefix, in float64.
double pinvPrediction(const torch::Tensor& x, const torch::Tensor& y, std::int64_t i)
{
    if (i == 0)
        return 0;
    auto xd = x.to(torch::kFloat64), yd = y.to(torch::kFloat64);
    auto w = torch::linalg_pinv(xd.slice(0, 0, i)).matmul(yd.slice(0, 0, i));
    return xd[i].dot(w).item<double>();
}

}  // namespace

class TestBaselines final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void leastSquaresIsExactFromDPoints();
    void leastSquaresIsMinimumNormBelowDAndOnASubspace();
    void averagingMatchesItsClosedForm();
    void nearestNeighboursOnAHandMadePrompt();
    void nearestNeighbourTiesGoToTheEarlierPoint();
    void lassoMatchesSoftThresholdingOnAnOrthogonalDesign();
    void nullClassifierAndBaselineTable();
    void bootstrapBandOnAKnownDistribution();
    void seedStatisticsByHand();
    void covariateShiftsChangeTheRightStatistics();
    void methodNamesAreValidated();
};

void TestBaselines::leastSquaresIsExactFromDPoints()
{
    auto gen = seeded(3);
    auto xs = torch::randn({5, 12, 4}, gen);
    auto w = torch::randn({5, 4, 1}, gen);
    auto ys = xs.bmm(w).squeeze(-1);
    auto pred = leastSquares(xs, ys);
    QCOMPARE(pred.sizes().vec(), (std::vector<std::int64_t>{5, 12}));
    QVERIFY(pred.select(1, 0).eq(0).all().item<bool>());
    auto err = (pred - ys).square().slice(1, 4);  // k >= D examples
    QVERIFY2(err.max().item<double>() < 1e-8, std::to_string(err.max().item<double>()).c_str());
    QVERIFY((pred - ys).square().slice(1, 1, 4).mean().item<double>() > 1e-2);
}

void TestBaselines::leastSquaresIsMinimumNormBelowDAndOnASubspace()
{
    auto gen = seeded(4);
    auto xs = torch::randn({3, 10, 5}, gen);
    auto project = torch::zeros({5, 5});  // inputs confined to 2 of 5 coordinates: rank 2
    project[0][0] = 1;
    project[1][1] = 1;
    auto sub = xs.matmul(project);
    for (const auto& x : {xs, sub}) {
        auto ys = torch::randn({3, 10}, gen);  // not linear: residuals
        auto pred = leastSquares(x, ys);
        for (std::int64_t b = 0; b < 3; ++b)
            for (std::int64_t i = 0; i < 10; ++i)
                QVERIFY(std::abs(pred[b][i].item<double>() - pinvPrediction(x[b], ys[b], i)) <
                        1e-4);
    }
}

void TestBaselines::averagingMatchesItsClosedForm()
{
    auto gen = seeded(5);
    auto xs = torch::randn({2, 6, 3}, gen), ys = torch::randn({2, 6}, gen);
    auto pred = averaging(xs, ys);
    for (std::int64_t b = 0; b < 2; ++b) {
        QCOMPARE(pred[b][0].item<float>(), 0.f);
        for (std::int64_t i = 1; i < 6; ++i) {
            auto w = torch::zeros({3});
            for (std::int64_t j = 0; j < i; ++j)
                w += ys[b][j] * xs[b][j];
            const double expect = (w / double(i)).dot(xs[b][i]).item<double>();
            QVERIFY(std::abs(pred[b][i].item<double>() - expect) < 1e-5);
        }
    }
}

void TestBaselines::nearestNeighboursOnAHandMadePrompt()
{
    // 1-D points 0, 10, 1, 9, 0.4 labelled 1..5.
    auto xs = torch::tensor({0.f, 10.f, 1.f, 9.f, 0.4f}).view({1, 5, 1});
    auto ys = torch::tensor({1.f, 2.f, 3.f, 4.f, 5.f}).view({1, 5});
    auto one = nearestNeighbours(xs, ys, 1);
    QCOMPARE(one[0][1].item<float>(), 1.f);  // 10 -> 0
    QCOMPARE(one[0][2].item<float>(), 1.f);  // 1 -> 0
    QCOMPARE(one[0][3].item<float>(), 2.f);  // 9 -> 10
    QCOMPARE(one[0][4].item<float>(), 1.f);  // 0.4 -> 0
    auto three = nearestNeighbours(xs, ys, 3);
    QCOMPARE(three[0][1].item<float>(), 1.f);                       // k' = 1
    QCOMPARE(three[0][2].item<float>(), 1.5f);                      // k' = 2: {0, 10}
    QVERIFY(std::abs(three[0][4].item<float>() - 8.f / 3) < 1e-6);  // {0, 1, 9}
}

void TestBaselines::nearestNeighbourTiesGoToTheEarlierPoint()
{
    auto xs = torch::tensor({1.f, -1.f, 1.f, 1.f}).view({1, 4, 1});
    auto ys = torch::tensor({5.f, 6.f, 7.f, 8.f}).view({1, 4});
    auto one = nearestNeighbours(xs, ys, 1);
    QCOMPARE(one[0][3].item<float>(), 5.f);  // x_0 and x_2 are both at distance 0
    auto three = nearestNeighbours(xs, ys, 3);
    QCOMPARE(three[0][3].item<float>(), 6.f);  // all three: (5 + 6 + 7) / 3
}

void TestBaselines::lassoMatchesSoftThresholdingOnAnOrthogonalDesign()
{
    // X^T X = n I makes the Lasso solution w = S(X^T y / n, alpha) in closed form.
    const std::int64_t n = 8, d = 3;
    auto gen = seeded(6);
    auto q = std::get<0>(torch::linalg_qr(torch::randn({n, d}, gen, torch::kFloat64)));
    auto x = q * std::sqrt(double(n));  // [n, D]
    auto wTrue = torch::tensor({1.0, -0.005, 0.3}, torch::kFloat64);
    auto y = x.matmul(wTrue) + 0.001 * torch::randn({n}, gen, torch::kFloat64);
    auto query = torch::randn({1, d}, gen, torch::kFloat64);
    auto xs = torch::cat({x, query}).unsqueeze(0).to(torch::kFloat32);  // [1, n+1, D]
    auto ys = torch::cat({y, torch::zeros({1}, torch::kFloat64)}).unsqueeze(0).to(torch::kFloat32);
    std::int64_t unconverged = 0;
    auto pred = lasso(xs, ys, LassoOptions{}, unconverged);
    auto z = xs[0]
                 .slice(0, 0, n)
                 .to(torch::kFloat64)
                 .t()
                 .matmul(ys[0].slice(0, 0, n).to(torch::kFloat64)) /
             double(n);
    auto w = z.sign() * (z.abs() - 0.01).clamp_min(0);
    QVERIFY(w[1].item<double>() == 0);  // the small weight is cut
    const double expect = xs[0][n].to(torch::kFloat64).dot(w).item<double>();
    QVERIFY2(std::abs(pred[0][n].item<double>() - expect) < 1e-4,
             (std::to_string(pred[0][n].item<double>()) + " vs " + std::to_string(expect)).c_str());
    QCOMPARE(unconverged, std::int64_t{0});
}

void TestBaselines::nullClassifierAndBaselineTable()
{
    QVERIFY(nullClassifier(torch::ones({2, 3})).eq(-1).all().item<bool>());
    auto keys = [](const std::string& task) {
        std::vector<std::string> k;
        for (const auto& b : baselinesFor(task))
            k.push_back(b.key);
        return k;
    };
    QCOMPARE(keys("linear_regression"),
             (std::vector<std::string>{"OLS_driver=None", "NN_n=3_uniform", "averaging"}));
    QCOMPARE(keys("sparse_linear_regression").back(),
             std::string("lasso_alpha=0.01_max_iter=100000"));
    QCOMPARE(keys("conjunction"),
             (std::vector<std::string>{"NN_n=1_uniform", "averaging", "nullclassifier"}));
    QCOMPARE(keys("parity").front(), std::string("NN_n=3_uniform"));
    QVERIFY(keys("quadratic_regression").empty());
}

void TestBaselines::bootstrapBandOnAKnownDistribution()
{
    const std::int64_t s = 2000;
    auto gen = seeded(7);
    auto m = torch::stack(
        {3 + 2 * torch::randn({s}, gen, torch::kFloat64), torch::full({s}, 5.0, torch::kFloat64)},
        1);  // [S, 2]
    auto bootGen = seeded(8);
    const auto st = aggregate(m, 1000, bootGen);
    QVERIFY(std::abs(st.mean[0] - 3) < 0.2);
    QVERIFY(std::abs(st.std[0] - 2) < 0.1);
    // 90 % band of the mean: +-1.645 sigma / sqrt(S) = +-0.0736.
    const double halfLow = st.mean[0] - st.bootstrapLow[0],
                 halfHigh = st.bootstrapHigh[0] - st.mean[0];
    QVERIFY2(halfLow > 0.05 && halfLow < 0.1, std::to_string(halfLow).c_str());
    QVERIFY2(halfHigh > 0.05 && halfHigh < 0.1, std::to_string(halfHigh).c_str());
    QCOMPARE(st.bootstrapLow[1], 5.0);
    QCOMPARE(st.bootstrapHigh[1], 5.0);
    QCOMPARE(st.std[1], 0.0);
    auto again = seeded(8);
    QCOMPARE(aggregate(m, 1000, again).bootstrapLow, st.bootstrapLow);  // seeded: reproducible
}

// Bands over seeds (a sweep's aggregate, Compare's groups) against hand-computed values.
void TestBaselines::seedStatisticsByHand()
{
    const std::vector<std::vector<double>> seeds = {{1, 2, 7}, {3, 4}, {5, 9}};
    const auto sd = combineOverSeeds(seeds, BandKind::StdDev);
    QCOMPARE(sd.mean, (std::vector<double>{3, 5, 7}));
    QCOMPARE(sd.seeds, (std::vector<std::int64_t>{3, 3, 1}));
    QCOMPARE(sd.band, std::string("sd"));
    QCOMPARE(sd.low[0], 1.0);  // SD of 1, 3, 5 is 2
    QCOMPARE(sd.high[0], 5.0);
    QCOMPARE(sd.high[1], 5 + std::sqrt(13.0));  // 2, 4, 9: squares 9 + 1 + 16 over 2
    QVERIFY(std::isnan(sd.low[2]));             // one seed reaches position 2: no spread there
    QCOMPARE(seedLegend(sd), std::string("N=3, mean ± SD"));
    const auto se = combineOverSeeds(seeds, BandKind::StdErr);
    QCOMPARE(se.high[0], 3 + 2 / std::sqrt(3.0));
    QCOMPARE(seedLegend(se), std::string("N=3, mean ± SE"));
    const auto mm = combineOverSeeds(seeds, BandKind::MinMax);
    QCOMPARE(mm.low[1], 2.0);
    QCOMPARE(mm.high[1], 9.0);
    const auto boot = combineOverSeeds(seeds, BandKind::Bootstrap, 500, 7);
    QCOMPARE(boot.band, std::string("bootstrap"));
    for (size_t p = 0; p < 2; ++p)
        QVERIFY(boot.low[p] >= mm.low[p] && boot.high[p] <= mm.high[p] &&
                boot.low[p] <= boot.mean[p] && boot.mean[p] <= boot.high[p]);
    const auto again = combineOverSeeds(seeds, BandKind::Bootstrap, 500, 7);
    QCOMPARE(again.low, boot.low);  // seeded: the same band every time
    // Auto: fewer than 3 seeds somewhere (position 2) -> min-max.
    QCOMPARE(combineOverSeeds(seeds, BandKind::Auto).band, std::string("min-max"));
    const auto one = combineOverSeeds({{1, 2}}, BandKind::StdErr);
    QCOMPARE(one.band, std::string("none"));
    QVERIFY(std::isnan(one.low[0]) && std::isnan(one.high[1]));
    QCOMPARE(seedLegend(one), std::string("N=1, no band"));
    QCOMPARE(bandKindFromName("se"), std::optional<BandKind>(BandKind::StdErr));
    QVERIFY(!bandKindFromName("iqr"));
}

void TestBaselines::covariateShiftsChangeTheRightStatistics()
{
    const std::int64_t d = 5;
    auto gen = seeded(9);
    auto x = torch::randn({20000, d}, gen);
    auto half = inputTransform(parseMethod("half_subspace", true), d, gen);
    QCOMPARE(torch::linalg_matrix_rank(x.matmul(half)).item<std::int64_t>(), d / 2);
    // Normalised: E||x t||^2 = D.
    QVERIFY(std::abs(x.matmul(half).square().sum(1).mean().item<double>() - d) < 0.15 * d);
    auto skew = inputTransform(parseMethod("skewed", true), d, gen);
    QVERIFY(std::abs(x.matmul(skew).square().sum(1).mean().item<double>() - d) < 0.1 * d);
    auto eig = std::get<0>(torch::linalg_eigh(skew.to(torch::kFloat64)));  // ascending
    QVERIFY(std::abs(eig[d - 1].item<double>() / eig[0].item<double>() - d) < 1e-3);
    auto scale = inputTransform(parseMethod("scale-x=2", true), d, gen);
    QVERIFY(std::abs(x.matmul(scale).std().item<double>() / x.std().item<double>() - 2) < 1e-5);
    QVERIFY(!inputTransform(parseMethod("ood_length", true), d, gen).defined());
    QVERIFY(!inputTransform(parseMethod("scale-y=3", true), d, gen).defined());
}

void TestBaselines::methodNamesAreValidated()
{
    QCOMPARE(parseMethod("scale-y=0.333", true).scale, 0.333);
    QVERIFY(parseMethod("ood_length", false).isLong());
    QVERIFY(!parseMethod("standard", false).isLong());
    QVERIFY_THROWS_EXCEPTION(Error, parseMethod("scale-x=2", false));  // boolean task
    QVERIFY_THROWS_EXCEPTION(Error, parseMethod("scale-x=abc", true));
    QVERIFY_THROWS_EXCEPTION(Error, parseMethod("scale-x=-1", true));
    QVERIFY_THROWS_EXCEPTION(Error, parseMethod("sideways", true));
    QCOMPARE(evalMethodsFor("conjunction").size(), size_t(2));
    QCOMPARE(evalMethodsFor("linear_regression").size(), size_t(12));
    QVERIFY(methodSeed(1, "standard") != methodSeed(1, "ood_length"));
}

QTEST_APPLESS_MAIN(TestBaselines)
#include "tst_baselines.moc"
