#pragma once
// The sweep's summary table (error at the training length and at the longest length, per group,
// mean and band over seeds) as aligned text, CSV or Markdown, from the aggregate file.

#include <string>

#include "lengen/engine/sweep_aggregate.h"

namespace lengen::cli {

enum class TableFormat { Text, Csv, Markdown };

/// The table of one evaluation method; "" when no group has it.
std::string sweepTable(const engine::SweepAggregate& aggregate, const std::string& method,
                       TableFormat format);

/// A number in 4 significant digits ("0.02951", "2.158"); `nonFinite` for NaN and infinities.
std::string shortNumber(double v, const char* nonFinite = "nan");

}  // namespace lengen::cli
