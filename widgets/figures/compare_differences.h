#pragma once
// The rows of Compare's "config keys that differ" table (issue 70, defect 12), apart from the
// view: the resolved config keys whose values differ between the compared runs, led by what
// each run trained on (issue 52) and how its curve of the shown method was evaluated, each only
// where the runs' values differ. No windows; tst_compare tests it without one.

#include <optional>
#include <string>
#include <vector>

#include "lengen/engine/analysis.h"
#include "lengen/engine/config.h"
#include "lengen/engine/run_file.h"

namespace lengen::figures {

/// One compared run as the table reads it.
struct ComparedRun {
    engine::RunConfig config;
    engine::ReachedCurriculum reached;
    std::optional<engine::EvalResult> evaluated;  ///< its result of the shown method, if any
};

/// The table's rows (a value per run in each), for the shown `method`: "trained on: points"
/// and "trained on: dims", then "evaluation: prompts", "evaluation: seed", "evaluation:
/// points", then the config keys (engine::configDifferences). A row is listed only where its
/// values are not all equal; fewer than two runs make no rows.
std::vector<engine::ConfigDifference> compareDifferences(const std::vector<ComparedRun>& runs,
                                                         const std::string& method);

}  // namespace lengen::figures
