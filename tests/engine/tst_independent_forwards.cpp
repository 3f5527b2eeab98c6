// Every encoding outside the reference's code, as a whole model on its quick preset, against
// tests/interop/encoding_forward.py: a functional PyTorch forward (float64) written from each
// paper's formulas without LenGen code. The reference's own encodings are checked the same way
// against the reference's architecture (tst_reference_runs). Predictions must agree per
// in-context position at the training length and at 4x it.

#include <nlohmann/json.hpp>

#include <fstream>

#include "lengen/engine/config.h"
#include "model/icl_model.h"
#include "test_support.h"

using namespace lengen;
using namespace lengen::engine;

namespace {

nlohmann::json tensorJson(const torch::Tensor& t)
{
    auto c = t.detach().to(torch::kFloat32).contiguous();
    return {{"shape", c.sizes().vec()},
            {"data", std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel())}};
}

nlohmann::json nested(const torch::Tensor& t)  // [B, N] or [B, N, D] as nested lists
{
    auto c = t.detach().to(torch::kFloat64).contiguous();
    nlohmann::json out = nlohmann::json::array();
    for (std::int64_t b = 0; b < c.size(0); ++b) {
        if (c.dim() == 2) {
            out.push_back(
                std::vector<double>(c[b].data_ptr<double>(), c[b].data_ptr<double>() + c.size(1)));
            continue;
        }
        nlohmann::json rows = nlohmann::json::array();
        for (std::int64_t n = 0; n < c.size(1); ++n)
            rows.push_back(std::vector<double>(c[b][n].data_ptr<double>(),
                                               c[b][n].data_ptr<double>() + c.size(2)));
        out.push_back(rows);
    }
    return out;
}

}  // namespace

class TestIndependentForwards final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }
    void wholeModelAgreesWithThePapers_data();
    void wholeModelAgreesWithThePapers();
};

void TestIndependentForwards::wholeModelAgreesWithThePapers_data()
{
    QTest::addColumn<QString>("pe");
    QTest::addColumn<int>("points");
    for (const char* pe : {"t5", "kerple_log", "kerple_power", "sandwich", "cope", "xpos"})
        for (const int points : {9, 36})  // the quick presets' training length, and 4x
            QTest::newRow(qPrintable(QString("%1, %2 examples").arg(pe).arg(points)))
                << QString(pe) << points;
}

void TestIndependentForwards::wholeModelAgreesWithThePapers()
{
    QFETCH(QString, pe);
    QFETCH(int, points);
    const auto preset =
        test::sourcePath("configs/quick/linear_regression_" + pe.toStdString() + ".yaml");
    const RunConfig c = loadConfigFile(preset).runs.at(0);
    auto model = model::buildModel(c);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
    model->initialise(gen);
    {
        // Sharper attention than N(0, 0.02) gives, and every encoding's own parameters away
        // from their initial values (CoPE's table starts at zero), so each term is exercised.
        torch::NoGradGuard noGrad;
        for (auto& item : model->named_parameters()) {
            const auto& name = item.key();
            auto& p = item.value();
            if (name.find("q_proj") != std::string::npos ||
                name.find("k_proj") != std::string::npos)
                p.mul_(8.0);
            else if (name.find("relative_attention_bias") != std::string::npos ||
                     name.find("pos_emb") != std::string::npos)
                p.copy_(torch::randn(p.sizes(), gen) * 0.5);
            else if (name.find("bias_p") != std::string::npos)
                p.copy_(torch::rand(p.sizes(), gen) * 1.9 + 0.05);
            else if (name.find("bias_a") != std::string::npos)
                p.copy_(torch::rand(p.sizes(), gen) * 0.9 + 0.05);
        }
    }
    model->eval();
    const auto xs = torch::randn({3, points, c.model.nInDims}, gen);  // [B, N, D]
    const auto w = torch::randn({3, c.model.nInDims, 1}, gen);
    const auto ys = torch::bmm(xs, w).squeeze(-1);  // [B, N]
    torch::Tensor pred;
    {
        torch::NoGradGuard noGrad;
        pred = model->forward(xs, ys).predictions;  // [B, N]
    }
    nlohmann::json fx;
    fx["pe"] = pe.toStdString();
    fx["hidden"] = c.model.hiddenSize;
    fx["layers"] = c.model.numLayers;
    fx["heads"] = c.model.numHeads;
    fx["intermediate"] = c.model.intermediateSize;
    fx["rms_norm_eps"] = c.model.rmsNormEps;
    fx["rope_theta"] = c.model.ropeTheta;
    fx["t5"] = {{"num_buckets", c.position.t5Buckets}, {"max_distance", c.position.t5MaxDistance}};
    fx["sandwich"] = {{"dim", c.position.sandwichDim}};
    fx["xpos"] = {{"scale_base", c.position.xposScaleBase}};
    fx["cope"] = {{"npos_max", c.position.copeMaxPositions}};
    for (const auto& item :
         model->named_parameters())  // after the forward (KERPLE projects in place)
        fx["state"][item.key()] = tensorJson(item.value());
    fx["xs"] = nested(xs);
    fx["ys"] = nested(ys);
    fx["pred"] = nested(pred);
    fx["tolerance"] = 1e-4;
    const auto path = test::scratchDir("independent-forwards") + "/" + pe.toStdString() + "-" +
                      std::to_string(points) + ".json";
    std::ofstream(path) << fx.dump();
    const auto res = test::runProgram(
        test::pythonPath(),
        {QString::fromStdString(test::sourcePath("tests/interop/encoding_forward.py")),
         QString::fromStdString(path)});
    qInfo().noquote() << res.out.trimmed();
    QVERIFY2(res.code == 0, qPrintable(res.out + res.err));
}

QTEST_APPLESS_MAIN(TestIndependentForwards)
#include "tst_independent_forwards.moc"
