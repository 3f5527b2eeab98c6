#pragma once
// The sweep's summary table (error at the training length and at the longest length, per group,
// mean and band over seeds) as aligned text, CSV, Markdown or JSON, from the aggregate file,
// through the runs table's one writer (engine::formatRunTable).

#include <CLI/CLI.hpp>

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

/// --columns of `lengen runs` and `lengen sweep table`: one value each time, KEY,KEY or auto.
/// An empty value (`--columns=`, `--columns ,`) takes no argument after it: CLI11 took the next
/// options as keys while it waited for one ("no run has the key --format"). The commas are
/// split by splitColumns, not CLI11, whose split drops empty keys and counts each key as a value.
inline CLI::Option* addColumnsOption(CLI::App* cmd, std::vector<std::string>& columns,
                                     const std::string& help)
{
    return cmd->add_option("--columns", columns, help)->expected(0, 1)->allow_extra_args(false);
}
/// The keys of the --columns given, split at commas; Error(Usage) where a value is empty or
/// holds an empty key.
void splitColumns(std::vector<std::string>& columns);

/// The table of one evaluation method; "" when no group has it. Text and Markdown show each
/// value as "mean [low, high] @position"; CSV and JSON give a method column first and each number
/// in a column of its own (train_position, train_mean, train_low, train_high, longest_...).
std::string sweepTable(const engine::SweepAggregate& aggregate, const std::string& method,
                       TableFormat format);

}  // namespace lengen::cli
