#pragma once
// A sweep's results over seeds: every evaluation method's curves and the probes' summary
// curves, grouped by the sweep's axes except `seed` (or the axes the user names), as the mean
// over seeds per position, a band across seeds and the number of seeds. Stored in
// <sweep>/aggregate.h5 (docs/sweep-format.md), which `lengen export DIR --figure grid|table`
// and the studio's Sweeps view read.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lengen::engine {

constexpr int kAggregateFormatVersion = 1;

/// One curve over seeds: per position the mean of the cells' per-position means, the band,
/// and how many seeds have a finite value there.
struct AggregateCurve {
    std::string key;           ///< model key ("RoPE", "OLS_driver=None") or probe curve ("c=5")
    std::string label;         ///< legend text
    bool transformer = false;  ///< the trained model (not a baseline)
    std::vector<double> mean, low, high;  ///< [positions]
    std::vector<std::int64_t> seeds;      ///< [positions]
    /// "bootstrap" (5 / 95 % percentiles of the mean over resampled seeds), "min-max" (the
    /// range across seeds), "sd" / "se" (mean ± SD or SE), or "none" (one seed: low and high
    /// are NaN). The default (BandKind::Auto) is bootstrap from 3 seeds everywhere, else
    /// min-max (seed_stats.h).
    std::string band;
};

/// One evaluation method (or probe group) for one group of cells.
struct AggregateSet {
    std::string kind;   ///< "eval" or "probe"
    std::string name;   ///< method ("ood_length") or probe path ("serial_position")
    std::string group;  ///< "task=linear_regression,pe=rope" ("all" with no axes)
    std::vector<std::pair<std::string, std::string>> groupAxes;
    std::vector<std::string> cells;  ///< the cells that contributed
    std::string task;                ///< the first cell's task (a group may hold several)
    int trainPoints = 0, nPoints = 0, dims = 0;
    /// What the cells last trained on (the least over them; issue 52): the table's "train
    /// length" column and the grid's marker. trainPoints where an aggregate did not record it.
    int trainedPoints = 0;
    double zeroEstimator = 0;
    bool classification = false;
    std::vector<AggregateCurve> curves;  ///< the transformer first
};

struct SweepAggregate {
    std::string sweep;
    std::vector<std::string> groupBy;  ///< axis keys the groups are formed by
    int bootstrapTrials = 0;
    std::vector<AggregateSet> sets;    ///< eval sets in method order, then probes
    std::vector<std::string> missing;  ///< cells with no stored evaluation or probe yet
};

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
/// Written through a temporary file and a rename. Error(Io) naming the path.
void writeAggregate(const std::string& path, const SweepAggregate& aggregate);
/// Error(RunFile) naming the path for a missing, damaged, foreign or newer file.
SweepAggregate readAggregate(const std::string& path);

}  // namespace lengen::engine
