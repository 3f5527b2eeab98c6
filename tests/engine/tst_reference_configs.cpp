// Every reference task config (configs/tasks/*/*.yaml, plus toy_task.yaml) builds its model —
// its own backbone and position encoding — and runs 2 training steps once its sizes are shrunk
// (hidden 16, 1-2 layers, 2 heads; the task, curriculum start and PE are kept).

#include <filesystem>
#include <set>

#include "lengen/engine/run_file.h"
#include "lengen/engine/trainer.h"
#include "test_support.h"

using namespace lengen::engine;
namespace fs = std::filesystem;

namespace {
// Two steps of `run` on the CPU; returns the run file (throws what training throws).
std::string trainTwoSteps(const RunConfig& run, const std::string& out)
{
    TrainOptions o;
    o.outDir = out;
    o.seed = 1;
    o.maxSteps = 2;
    o.device = "cpu";
    o.threads = 1;
    RunControl control;
    TrainObserver quiet;
    const auto summary = train(run, o, control, quiet);
    if (summary.stepsDone != 2 || !std::isfinite(summary.finalLoss))
        throw std::runtime_error("did not train 2 finite steps");
    return summary.runFile;
}
}  // namespace

class TestReferenceConfigs final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyTaskConfigTrainsTwoSteps();
    void everyQuickPresetTrainsTwoSteps();
};

void TestReferenceConfigs::everyTaskConfigTrainsTwoSteps()
{
    std::vector<std::string> files = {lengen::test::sourcePath("configs/toy_task.yaml")};
    for (const auto& e :
         fs::recursive_directory_iterator(lengen::test::sourcePath("configs/tasks")))
        if (e.path().extension() == ".yaml")
            files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    QCOMPARE(
        files.size(),
        size_t(
            106));  // the reference's 99, its toy task, LenGen's T5, KERPLE, Sandwich, CoPE, xPos
    std::map<std::string, int> perPe;
    const auto out = lengen::test::scratchDir("reference");
    for (const auto& file : files) {
        auto loaded = loadConfigFile(file);
        for (auto run : loaded.runs) {  // GPT-2 has two max_length values
            auto& m = run.model;
            m.hiddenSize = 16;
            m.intermediateSize = 64;
            m.numLayers = m.backbone == Backbone::Mamba ? 1 : 2;
            m.numHeads = 2;
            m.stateSize = 4;
            run.training.batchSize = 4;
            run.training.loggingSteps = 1;
            try {
                ++perPe[readRunInfo(trainTwoSteps(run, out)).positionEncoding];
            } catch (const std::exception& e) {
                QFAIL(qPrintable(QString::fromStdString(file + ": " + e.what())));
            }
        }
    }
    // 14 tasks per Llama PE, 14 Mamba, 2 GPT-2 runs (plus the toy task's dynamic YaRN).
    QCOMPARE(perPe["RoPE"], 14);
    QCOMPARE(perPe["ALiBi"], 14);
    QCOMPARE(perPe["FIRE"], 14);
    QCOMPARE(perPe["NoPE"], 14);
    QCOMPARE(perPe["YaRN"], 14);
    QCOMPARE(perPe["Dynamic YaRN"], 15);
    QCOMPARE(perPe["Mamba"], 14);
    QCOMPARE(perPe["GPT-2"], 2);
    QCOMPARE(perPe["T5 bias"], 1);  // configs/tasks/linear_regression/t5.yaml (not the reference's)
    QCOMPARE(perPe["KERPLE (log)"], 1);
    QCOMPARE(perPe["KERPLE (power)"], 1);
    QCOMPARE(perPe["Sandwich"], 1);
    QCOMPARE(perPe["CoPE"], 1);
    QCOMPARE(perPe["xPos"], 1);
}

void TestReferenceConfigs::everyQuickPresetTrainsTwoSteps()
{
    // At their own (small) sizes: each of the 8 PEs, Mamba, GPT-2 and the boolean preset.
    std::set<std::string> names;
    const auto out = lengen::test::scratchDir("quick");
    for (const auto& e : fs::directory_iterator(lengen::test::sourcePath("configs/quick"))) {
        if (e.path().extension() != ".yaml")
            continue;
        auto run = loadConfigFile(e.path().string()).runs.at(0);
        run.training.batchSize = 4;
        names.insert(readRunInfo(trainTwoSteps(run, out)).positionEncoding);
    }
    QCOMPARE(names,
             (std::set<std::string>{"ALiBi", "Dynamic NTK", "Dynamic YaRN", "FIRE", "GPT-2",
                                    "Mamba", "NoPE", "PI", "RoPE", "T5 bias", "YaRN",
                                    "KERPLE (log)", "KERPLE (power)", "Sandwich", "CoPE", "xPos"}));
}

QTEST_APPLESS_MAIN(TestReferenceConfigs)
#include "tst_reference_configs.moc"
