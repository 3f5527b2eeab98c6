#include "test_support.h"

#include <QRegularExpression>

#include "lengen/engine/analysis.h"
#include "lengen/engine/run_file.h"
#include "lengen/engine/session.h"
#include "lengen/engine/trainer.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QStandardPaths>
#include <QThread>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

namespace fs = std::filesystem;

namespace lengen::test {

namespace {

// Every test process starts as the front ends start theirs (app/cli/main.cpp): the process-wide
// thread and allocator policy, once, with the default switches. A test that wants other
// switches sets them on its session's options.
const bool g_processPolicy = [] {
    engine::applyProcessPolicy(engine::SessionSwitches{});
    return true;
}();
struct ScratchRoot {
    fs::path root;
    ScratchRoot()
    {
        std::random_device rd;
        root = fs::temp_directory_path() / ("lengen-test-" + std::to_string(rd()));
        fs::create_directories(root);
    }
    ~ScratchRoot()
    {
        std::error_code ec;
        if (!std::getenv("LENGEN_KEEP_TEST_FILES"))
            fs::remove_all(root, ec);
    }
};
ScratchRoot& scratchRoot()
{
    static ScratchRoot root;
    return root;
}
}  // namespace

QString pythonPath()
{
    const QString configured = qEnvironmentVariable("LENGEN_TEST_PYTHON");
    return configured.isEmpty() ? QStringLiteral("/usr/bin/python3") : configured;
}

std::string sourcePath(const std::string& relative)
{
    return (fs::path(LENGEN_SOURCE_DIR) / relative).string();
}

ProcessResult runProgram(const QString& program, const QStringList& args, int timeoutMs)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return {-2, QString::fromUtf8(p.readAllStandardOutput()),
                QString::fromUtf8(p.readAllStandardError()) + "\n(timed out)"};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

ProcessResult runLengen(const QStringList& args, int timeoutMs)
{
    return runProgram(QStringLiteral(LENGEN_CLI_PATH), args, timeoutMs);
}

std::string scratchDir(const std::string& tag)
{
    static int counter = 0;
    auto dir = scratchRoot().root / (tag + "-" + std::to_string(++counter));
    fs::create_directories(dir);
    return dir.string();
}

std::string writeFile(const std::string& dir, const std::string& name, const std::string& text)
{
    const auto path = fs::path(dir) / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
}

std::string tinyConfig(const std::string& task, const std::string& pe, int steps)
{
    const bool boolean = engine::isBooleanTaskName(task);
    std::string yaml = "model:\n  family: Llama2\n  max_length: [14]\n  hidden_size: 16\n"
                       "  num_hidden_layers: 2\n  num_attention_heads: 2\n";
    if (pe != "rope")
        yaml += "patch:\n  name: " + pe + "\n  rope_scaling:\n    type: " + pe + "\n";
    yaml += "task:\n  data: " + std::string(boolean ? "boolean" : "gaussian") +
            "\n  name: " + task +
            "\n  curriculum:\n    dims: {start: 2, end: 3, increment: 1, interval: 10}\n"
            "    points: {start: 5, end: 7, increment: 2, interval: 10}\n"
            "training:\n  learning_rate: 1.0e-3\n  max_steps: " +
            std::to_string(steps) +
            "\n  warmup_ratio: 0.1\n"
            "  logging_steps: 5\n  save_steps: 10\n  per_device_train_batch_size: 8\n";
    return yaml;
}

engine::NewSweep tinySweep(const std::string& outDir, std::vector<std::string> pes, int seeds,
                           int steps)
{
    engine::NewSweep request;
    request.base = loadOne(tinyConfig("linear_regression", "rope", steps));
    request.baseSource = "a test's tiny config";
    request.pes = std::move(pes);
    request.seeds = seeds;
    request.eval = false;
    request.outDir = outDir;
    return request;
}

std::string tinyConfigFile(const std::string& dir, int steps)
{
    return writeFile(dir, "tiny.yaml", tinyConfig("linear_regression", "rope", steps));
}

engine::RunConfig loadOne(const std::string& yaml)
{
    return engine::loadConfigText(yaml, "<test>").runs.at(0);
}

engine::model::InContextModel initialisedModel(const std::string& yaml, std::uint64_t seed)
{
    auto model = engine::model::buildModel(loadOne(yaml));
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    model->initialise(gen);
    model->setDropoutGenerator(gen);
    return model;
}

bool isCausalAt(engine::model::InContextModel& model, const torch::Tensor& xs,
                const torch::Tensor& ys, std::int64_t at)
{
    torch::NoGradGuard noGrad;
    auto before = model->forward(xs, ys).predictions;
    auto xs2 = xs.clone(), ys2 = ys.clone();
    xs2.select(1, at).add_(3.0);
    ys2.select(1, at - 1).add_(3.0);  // y_{at-1} comes after the x token read for at-1
    auto after = model->forward(xs2, ys2).predictions;
    return torch::equal(before.slice(1, 0, at), after.slice(1, 0, at)) &&
           !torch::allclose(before.slice(1, at), after.slice(1, at));
}

QString startTraining(QProcess& trainer, const QString& config, int seed, const QString& out,
                      QString& err)
{
    trainer.start(QStringLiteral(LENGEN_CLI_PATH),
                  {"train", config, "--seed", QString::number(seed), "--out", out, "--threads", "1",
                   "--device", "cpu"});
    return waitForRunFile(trainer, err);
}

QString waitForRunFile(QProcess& trainer, QString& err)
{
    QString runFile;
    for (int i = 0; i < 600 && runFile.isEmpty(); ++i) {
        trainer.waitForReadyRead(100);
        err += QString::fromUtf8(trainer.readAllStandardError());
        runFile = QRegularExpression("run file: (\\S+)").match(err).captured(1);
    }
    return runFile;
}

std::int64_t waitForCheckpointPast(const QString& runFile, std::int64_t step, int timeoutMs)
{
    QElapsedTimer clock;
    clock.start();
    std::int64_t seen = -1;
    for (;;) {
        try {
            seen = engine::readRunInfo(runFile.toStdString()).checkpointStep;
        } catch (const std::exception&) {
            // The writer may be between flushes; read again.
        }
        if (seen > step || clock.elapsed() > timeoutMs)
            return seen;
        QThread::msleep(100);
    }
}

namespace {
class QuietTraining : public engine::TrainObserver {};
class QuietAnalysis : public engine::AnalysisObserver {};
}  // namespace

std::string trainConfig(const engine::RunConfig& config, const std::string& dir, std::uint64_t seed)
{
    engine::TrainOptions o;
    o.outDir = dir;
    o.seed = seed;
    o.device = "cpu";
    o.threads = 1;
    engine::RunControl control;
    QuietTraining quiet;
    return engine::train(config, o, control, quiet).runFile;
}

std::string trainTiny(const std::string& dir, const std::string& pe, std::uint64_t seed, int steps)
{
    return trainConfig(loadOne(tinyConfig("linear_regression", pe, steps)), dir, seed);
}

void evaluateSmall(const std::string& run, const std::vector<std::string>& methods, int prompts,
                   int oodFactor, int bootstrapTrials)
{
    engine::EvalOptions e;
    e.methods = methods;
    e.prompts = prompts;
    if (oodFactor > 0)
        e.oodFactor = oodFactor;
    e.common.bootstrapTrials = bootstrapTrials;
    e.common.device = "cpu";
    engine::RunControl control;
    QuietAnalysis quiet;
    engine::evaluateRun(run, e, control, quiet);
}

QString latexMissing()
{
    if (!QStandardPaths::findExecutable(QStringLiteral("pdflatex")).isEmpty())
        return {};
    return latexRequired()
               ? QStringLiteral("pdflatex is missing but LENGEN_REQUIRE_TEX=1 (.ci/install-deps "
                                "installs TeX Live)")
               : QStringLiteral("TeX Live is not installed (apt-get install texlive-latex-base "
                                "texlive-latex-recommended texlive-pictures)");
}

bool latexRequired() { return qEnvironmentVariable("LENGEN_REQUIRE_TEX") == QLatin1String("1"); }

QString compileLatex(const QString& tex)
{
    QProcess p;
    p.setWorkingDirectory(QFileInfo(tex).absolutePath());
    p.start(QStringLiteral("pdflatex"),
            {"-interaction=nonstopmode", "-halt-on-error", QFileInfo(tex).fileName()});
    if (!p.waitForFinished(120000))
        return QStringLiteral("pdflatex timed out on ") + tex;
    const QString pdf =
        QFileInfo(tex).absolutePath() + "/" + QFileInfo(tex).completeBaseName() + ".pdf";
    if (p.exitCode() == 0 && QFileInfo(pdf).size() > 1000)
        return {};
    return tex + ":\n" + QString::fromUtf8(p.readAllStandardOutput()).right(1500);
}

}  // namespace lengen::test
