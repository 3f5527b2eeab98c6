#pragma once
// Helpers shared by the tests: paths into the source tree, scratch folders, small configs.

#include <QProcess>
#include <QString>
#include <string>

#include "lengen/engine/config.h"
#include "lengen/engine/sweep_run.h"
#include "model/icl_model.h"

// Whether this build runs under AddressSanitizer (CI's sanitize job, clang or GCC): there a
// forward costs about ten times as much, so the heaviest sweeps over every encoding and
// intervention take a sample that still reaches each one's code (docs/ci.md).
#if defined(__SANITIZE_ADDRESS__)
#define LENGEN_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LENGEN_TEST_UNDER_ASAN 1
#endif
#endif

namespace lengen::test {

#ifdef LENGEN_TEST_UNDER_ASAN
inline constexpr bool kUnderSanitizer = true;
#else
inline constexpr bool kUnderSanitizer = false;
#endif

/// What a program printed and how it ended: its exit code, -1 when it crashed, -2 when it was
/// killed after the time limit.
struct ProcessResult {
    int code = -1;
    QString out, err;
};
ProcessResult runProgram(const QString& program, const QStringList& args, int timeoutMs = 120000);
/// The `lengen` command line of this build.
ProcessResult runLengen(const QStringList& args, int timeoutMs = 120000);

/// The Python with torch, yaml and h5py that interop tests run: $LENGEN_TEST_PYTHON (the
/// PyPI job's virtual environment, .ci/pypi), else Debian's /usr/bin/python3.
QString pythonPath();

/// Absolute path of a file in the source tree, e.g. sourcePath("configs/toy_task.yaml").
std::string sourcePath(const std::string& relative);

/// A fresh empty folder under the system temp dir (removed at process exit).
std::string scratchDir(const std::string& tag);

/// Writes `text` to `dir/name` and returns the path.
std::string writeFile(const std::string& dir, const std::string& name, const std::string& text);

/// A request for a sweep of tinyConfig runs over `pes` x seeds 1..`seeds`, without the eval stage,
/// written to `outDir` by engine::createSweep (or the studio's createSweep).
engine::NewSweep tinySweep(const std::string& outDir, std::vector<std::string> pes, int seeds,
                           int steps);

/// YAML of a tiny but complete Llama run config (hidden 16, 2 layers, 2 heads, D = 3, 7 points,
/// batch 8) for the given task and PE, with `steps` training steps.
std::string tinyConfig(const std::string& task = "linear_regression",
                       const std::string& pe = "rope", int steps = 20);

/// tinyConfig() with `steps` training steps, written to dir/tiny.yaml; returns the path.
std::string tinyConfigFile(const std::string& dir, int steps);

/// Loads a config from text and returns its first run (QFAIL-free: throws on error).
engine::RunConfig loadOne(const std::string& yaml);

/// The model a config text describes, initialised from a generator seeded with `seed` (which
/// also drives its dropout), in training mode.
engine::model::InContextModel initialisedModel(const std::string& yaml, std::uint64_t seed = 1);

/// Causality on one prompt (xs [B, N, D], ys [B, N]): perturbing x_at and y_{at-1} leaves the
/// predictions for points 0..at-1 bit-identical and changes a later one.
bool isCausalAt(engine::model::InContextModel& model, const torch::Tensor& xs,
                const torch::Tensor& ys, std::int64_t at);

/// `config` trained in `dir` on one CPU thread with `seed`, quietly; returns its run.h5.
std::string trainConfig(const engine::RunConfig& config, const std::string& dir,
                        std::uint64_t seed);
/// A tiny run (tinyConfig of `pe`, `steps` steps) trained in `dir` on one CPU thread with
/// `seed`; returns its run.h5.
std::string trainTiny(const std::string& dir, const std::string& pe, std::uint64_t seed = 4,
                      int steps = 20);
/// Evaluates `methods` of `run` on `prompts` prompts on the CPU (oodFactor 0 = the default),
/// as the views' tests need a stored evaluation.
void evaluateSmall(const std::string& run, const std::vector<std::string>& methods, int prompts = 8,
                   int oodFactor = 0, int bootstrapTrials = 10);

/// Starts `lengen train CONFIG --seed SEED --out OUT` on one CPU thread in another process (a
/// terminal's training, as the studio sees one) and waits for its run file (waitForRunFile):
/// its path, or "" with what it printed in `err`.
QString startTraining(QProcess& trainer, const QString& config, int seed, const QString& out,
                      QString& err);

/// Reads a started `lengen train`'s stderr until it prints "run file: PATH" (up to 60 s);
/// returns PATH, or "" with everything read in `err`.
QString waitForRunFile(QProcess& trainer, QString& err);

/// Polls the run file while another process trains it until its checkpoint is past `step`, up to
/// `timeoutMs`; returns the checkpoint's step (or the last one read, when the time ran out).
/// Tests wait for a state rather than a fixed time: a loaded CI machine, or a LibTorch that
/// starts slowly (the PyPI build), takes seconds before its first checkpoint.
std::int64_t waitForCheckpointPast(const QString& runFile, std::int64_t step,
                                   int timeoutMs = 120000);

/// Whether pdflatex is on PATH; without it a LaTeX test skips, naming the packages, unless
/// LENGEN_REQUIRE_TEX=1 (CI), where it fails. Returns "" to go on, else the skip or fail text.
QString latexMissing();
bool latexRequired();
/// pdflatex on `tex` in its folder: "" when it compiled into a PDF, else the log's tail.
QString compileLatex(const QString& tex);

}  // namespace lengen::test
