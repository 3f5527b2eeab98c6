#pragma once
// `lengen eval`, `lengen probe`, `lengen import`: analysis of trained runs (docs/cli.md).

#include <string>
#include <vector>

#include "lengen/engine/analysis.h"
#include "lengen/engine/probes.h"

#include "command_registry.h"

namespace lengen::cli {

struct AnalysisArgs {
    std::string run;
    engine::AnalysisOptions common;
    bool quiet = false;
};

int runEval(const AnalysisArgs& args, engine::EvalOptions options, const Session& session);
int runProbe(const AnalysisArgs& args, engine::ProbeOptions options, const Session& session);
/// Prints a summary of every stored probe of a run.
int printProbes(const std::string& run, const std::string& intervention = "");
int runImport(const std::string& json, const std::string& run, const std::string& label);
/// Prints every stored evaluation of a run: per method, the model's and baselines' mean at a
/// few positions.
int printEvaluations(const std::string& run);

}  // namespace lengen::cli
