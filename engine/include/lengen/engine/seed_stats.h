#pragma once
// Statistics of one curve over seeds (issue 42): per position the mean over the seeds with a
// finite value there, N (how many), and one band the user chooses: the bootstrap 5-95 %
// interval of the mean, mean ± SD, mean ± SE, or the min-max range. A group of one seed has no
// band at all ("none"), and says so. Compare, the sweep aggregate and their figures, tables
// and CSVs all take their numbers and their legend words from here.

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "lengen/engine/sweep_aggregate.h"

namespace lengen::engine {

enum class BandKind {
    Auto,       ///< bootstrap from 3 seeds at every position, else min-max (the default)
    Bootstrap,  ///< 5th and 95th percentile of the mean over seeds resampled with replacement
    StdDev,     ///< mean ± the sample standard deviation (n - 1)
    StdErr,     ///< mean ± SD / sqrt(n)
    MinMax,     ///< the range across seeds
};

/// "auto", "bootstrap", "sd", "se", "minmax" (also "min-max"); nullopt otherwise.
std::optional<BandKind> bandKindFromName(const std::string& name);
std::string bandKindName(BandKind kind);
/// A curve's stored band ("bootstrap", "min-max", "sd", "se", "none") as a legend says it:
/// "bootstrap 5-95 %", "min-max", "mean ± SD", "mean ± SE", "no band".
std::string bandDescription(const std::string& band);
/// "N=3, mean ± SE": the legend's words for a curve over `seeds` seeds (the most at any position).
std::string seedLegend(const AggregateCurve& curve);

/// Per-seed curves (any lengths; NaN where a seed has no value) in, statistics out. The
/// bootstrap draws `bootstrapTrials` resamples from a generator seeded with `seed`.
AggregateCurve combineOverSeeds(const std::vector<std::vector<double>>& perSeed, BandKind band,
                                int bootstrapTrials = 1000, std::uint64_t seed = 1);
/// The same drawing from `rng` (a sweep's aggregate draws every curve from one generator).
AggregateCurve combineOverSeeds(const std::vector<std::vector<double>>& perSeed, BandKind band,
                                int bootstrapTrials, std::mt19937_64& rng);

}  // namespace lengen::engine
