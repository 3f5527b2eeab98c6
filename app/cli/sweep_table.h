#pragma once
// The sweep's summary table (error at the training length and at the longest length, per group,
// mean and band over seeds) as aligned text, CSV or Markdown, from the aggregate file.

#include <string>
#include <vector>

#include "lengen/engine/run_table.h"
#include "lengen/engine/sweep_aggregate.h"

namespace lengen::cli {

using engine::shortNumber;
using engine::TableFormat;

/// --columns of `lengen runs` and `lengen sweep table` (split at commas by CLI11): none or
/// `auto` -> {} (the varied keys), else the keys.
std::vector<std::string> tableColumns(const std::vector<std::string>& columns);
/// --format: text | csv | md | json ("" -> text).
TableFormat tableFormat(const std::string& name);
/// What --columns and --format say, for both commands' help.
inline constexpr const char* kColumnsHelp =
    "A table of settings and results: `auto` (task, encoding and the config keys that vary) or "
    "KEY,KEY...; then status, steps, final and least loss, steps/s, wall time, each evaluation "
    "at the training and the longest length (empty where a run has none)";

/// The table of one evaluation method; "" when no group has it.
std::string sweepTable(const engine::SweepAggregate& aggregate, const std::string& method,
                       TableFormat format);

}  // namespace lengen::cli
