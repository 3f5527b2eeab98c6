// Statistics over seeds, per position: plain C++ (a group has a few seeds, so the bootstrap
// is small). See seed_stats.h.

#include "lengen/engine/seed_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace lengen::engine {

namespace {

constexpr int kBootstrapFrom = 3;  // Auto: fewer seeds somewhere, and the band is their range

// Seed s's value at position p; NaN past the end of its curve.
double seedValueAt(const std::vector<std::vector<double>>& perSeed, size_t s, size_t p)
{
    return p < perSeed[s].size() ? perSeed[s][p] : std::nan("");
}

// What summariseSeeds finds besides the curve: the sample SD per position (NaN where fewer
// than two seeds reach it), and the fewest and most seeds any position has.
struct SeedSpread {
    std::vector<double> sd;
    std::int64_t fewest = 0, most = 0;
};

// Fills out's mean, range (low, high) and seed count per position over the finite values.
SeedSpread summariseSeeds(const std::vector<std::vector<double>>& perSeed, AggregateCurve& out)
{
    size_t positions = 0;
    for (const auto& c : perSeed)
        positions = std::max(positions, c.size());
    const size_t seeds = perSeed.size();
    out.mean.assign(positions, std::nan(""));
    out.low = out.high = out.mean;
    out.seeds.assign(positions, 0);
    SeedSpread spread;
    spread.fewest = std::numeric_limits<std::int64_t>::max();
    spread.sd.assign(positions, std::nan(""));
    for (size_t p = 0; p < positions; ++p) {
        double sum = 0, lo = INFINITY, hi = -INFINITY;
        std::int64_t n = 0;
        for (size_t s = 0; s < seeds; ++s) {
            const double v = seedValueAt(perSeed, s, p);
            if (!std::isfinite(v))
                continue;
            sum += v;
            lo = std::min(lo, v);
            hi = std::max(hi, v);
            ++n;
        }
        out.seeds[p] = n;
        spread.fewest = std::min(spread.fewest, n);
        spread.most = std::max(spread.most, n);
        if (n == 0)
            continue;
        out.mean[p] = sum / double(n);
        out.low[p] = lo;
        out.high[p] = hi;
        if (n > 1) {
            double squares = 0;
            for (size_t s = 0; s < seeds; ++s)
                if (const double v = seedValueAt(perSeed, s, p); std::isfinite(v))
                    squares += (v - out.mean[p]) * (v - out.mean[p]);
            spread.sd[p] = std::sqrt(squares / double(n - 1));
        }
    }
    if (positions == 0)
        spread.fewest = 0;
    return spread;
}

// The band mean ± SD, or mean ± SE (band StdErr), from the per-position SD.
void fillDeviationBand(AggregateCurve& out, const std::vector<double>& sd, BandKind band)
{
    out.band = band == BandKind::StdDev ? "sd" : "se";
    for (size_t p = 0; p < out.mean.size(); ++p) {
        // A position one seed reaches has no spread to show.
        const double w = band == BandKind::StdDev ? sd[p] : sd[p] / std::sqrt(double(out.seeds[p]));
        out.low[p] = out.mean[p] - w;
        out.high[p] = out.mean[p] + w;
    }
}

// The bootstrap band: `trials` resamples of the seeds, drawn from rng.
void fillBootstrapBand(AggregateCurve& out, const std::vector<std::vector<double>>& perSeed,
                       int trials, std::mt19937_64& rng)
{
    const size_t positions = out.mean.size(), seeds = perSeed.size();
    out.band = "bootstrap";
    trials = std::max(trials, 1);
    // Resample whole seeds (one draw serves every position, as the curves of one seed belong
    // together); the band is the 5th and 95th percentile of the resampled means.
    std::uniform_int_distribution<size_t> pick(0, seeds - 1);
    std::vector<std::vector<double>> means(positions, std::vector<double>(size_t(trials)));
    std::vector<size_t> draw(seeds);
    for (int t = 0; t < trials; ++t) {
        for (auto& d : draw)
            d = pick(rng);
        for (size_t p = 0; p < positions; ++p) {
            double sum = 0;
            int n = 0;
            for (size_t d : draw) {
                const double v = seedValueAt(perSeed, d, p);
                if (std::isfinite(v)) {
                    sum += v;
                    ++n;
                }
            }
            means[p][size_t(t)] = n ? sum / n : out.mean[p];
        }
    }
    const auto lo = size_t(std::floor(0.05 * trials)), hi = size_t(std::floor(0.95 * trials));
    for (size_t p = 0; p < positions; ++p) {
        std::sort(means[p].begin(), means[p].end());
        out.low[p] = means[p][lo];
        out.high[p] = means[p][std::min(hi, size_t(trials) - 1)];
    }
}

}  // namespace

std::optional<BandKind> bandKindFromName(const std::string& name)
{
    if (name == "auto")
        return BandKind::Auto;
    if (name == "bootstrap")
        return BandKind::Bootstrap;
    if (name == "sd")
        return BandKind::StdDev;
    if (name == "se")
        return BandKind::StdErr;
    if (name == "minmax" || name == "min-max")
        return BandKind::MinMax;
    return std::nullopt;
}

std::string bandKindName(BandKind kind)
{
    switch (kind) {
    case BandKind::Auto: return "auto";
    case BandKind::Bootstrap: return "bootstrap";
    case BandKind::StdDev: return "sd";
    case BandKind::StdErr: return "se";
    case BandKind::MinMax: return "minmax";
    }
    return "auto";
}

std::string bandDescription(const std::string& band)
{
    if (band == "bootstrap")
        return "bootstrap 5-95 %";
    if (band == "sd")
        return "mean ± SD";
    if (band == "se")
        return "mean ± SE";
    if (band == "none")
        return "no band";
    return band;  // "min-max"
}

std::string seedLegend(const AggregateCurve& curve)
{
    std::int64_t n = 0;
    for (const auto s : curve.seeds)
        n = std::max(n, s);
    return "N=" + std::to_string(n) + ", " + bandDescription(curve.band);
}

AggregateCurve combineOverSeeds(const std::vector<std::vector<double>>& perSeed, BandKind band,
                                int trials, std::mt19937_64& rng)
{
    AggregateCurve out;
    const SeedSpread spread = summariseSeeds(perSeed, out);
    if (spread.most <= 1) {  // one seed: nothing to spread, and the legend says "no band"
        out.band = "none";
        std::fill(out.low.begin(), out.low.end(), std::nan(""));
        std::fill(out.high.begin(), out.high.end(), std::nan(""));
        return out;
    }
    if (band == BandKind::Auto)
        band =
            spread.fewest >= kBootstrapFrom && trials > 0 ? BandKind::Bootstrap : BandKind::MinMax;
    if (band == BandKind::MinMax) {
        out.band = "min-max";
        return out;
    }
    if (band == BandKind::StdDev || band == BandKind::StdErr) {
        fillDeviationBand(out, spread.sd, band);
        return out;
    }
    fillBootstrapBand(out, perSeed, trials, rng);
    return out;
}

AggregateCurve combineOverSeeds(const std::vector<std::vector<double>>& perSeed, BandKind band,
                                int bootstrapTrials, std::uint64_t seed)
{
    std::mt19937_64 rng(seed);
    return combineOverSeeds(perSeed, band, bootstrapTrials, rng);
}

}  // namespace lengen::engine
