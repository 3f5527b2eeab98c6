#pragma once
// A sweep's results over seeds: every evaluation method's curves and the probes' summary
// curves, grouped by the sweep's axes except `seed` (or the axes the user names), as the mean
// over seeds per position, a band across seeds and the number of seeds. Stored in
// <sweep>/aggregate.h5 (docs/sweep-format.md), which `lengen export DIR --figure grid|table`
// and the studio's Sweeps view read (its records and their storage: aggregate_records.h).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lengen/engine/aggregate_records.h"

namespace lengen::engine {

enum class BandKind;

struct AggregateOptions {
    /// Axes to group by; empty = every axis of the sweep except `seed`. Error(Usage) for a
    /// key that is not an axis.
    std::vector<std::string> groupBy;
    int bootstrapTrials = 1000;
    std::uint64_t seed = 1;  ///< draws the bootstrap resamples
    BandKind band{};         ///< BandKind::Auto (seed_stats.h)
};

/// One row of the summary table: the trained model's value at the training length (the last
/// position seen in training) and at the longest evaluated position, for one group.
struct AggregateRow {
    const AggregateSet* set = nullptr;
    int trainPosition = 0, lastPosition = 0;  ///< 0-based positions (in-context examples seen)
    double trainMean = 0, trainLow = 0, trainHigh = 0;
    double lastMean = 0, lastLow = 0, lastHigh = 0;
    std::int64_t seeds = 0;  ///< at the last position
    std::string band;
};
/// The evaluation methods the aggregate holds, in the order of the sweep's evaluation.
std::vector<std::string> aggregateMethods(const SweepAggregate& aggregate);

/// Rows for one evaluation method, in grid order (empty when no set has it).
std::vector<AggregateRow> aggregateTable(const SweepAggregate& aggregate,
                                         const std::string& method);

/// Reads every cell's analysis file (read-only; cells may still run) and aggregates.
SweepAggregate aggregateSweep(const std::string& sweepDir, const AggregateOptions& options);

/// <sweep>/aggregate.h5.
std::string aggregateFileFor(const std::string& sweepDir);
}  // namespace lengen::engine
