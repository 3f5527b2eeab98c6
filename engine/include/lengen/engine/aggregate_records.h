#pragma once
// What a sweep's aggregate file stores (<sweep>/aggregate.h5, docs/sweep-format.md): curves over
// seeds per evaluation method or probe and group of cells, and io's writer and reader of it.
// Types only, plus io's own functions: the storage layer includes this, never
// sweep_aggregate.h, whose operations are implemented above it (issue 73).

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

/// Written through a temporary file and a rename. Error(Io) naming the path.
void writeAggregate(const std::string& path, const SweepAggregate& aggregate);
/// Error(RunFile) naming the path for a missing, damaged, foreign or newer file.
SweepAggregate readAggregate(const std::string& path);

}  // namespace lengen::engine
