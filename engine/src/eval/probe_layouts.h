#pragma once
// Sequence assembly of the duplicated-example attack and the serial-position test (reference
// §8.1–8.4), as lists of point indices into one drawn prompt xs [B, N, D] (plus -1 for "a
// fresh point" where a layout needs new points). Pure functions: tested against hand-computed
// layouts.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace lengen::engine::eval {

struct ProbeSizes {
    std::int64_t points = 0;        ///< N = curriculum points.end (the training length)
    std::int64_t dims = 0;          ///< D
    std::int64_t testLength = 400;  ///< L
    std::int64_t instruction = 0;   ///< 2 D: the first points of xs
    std::int64_t answer = 0;        ///< D: the last points of xs
    std::int64_t target = 0;        ///< ceil(D / 2): the last points of xs (inside the answer)

    std::int64_t noiseIndex() const { return instruction - 1; }  ///< the duplicated point
};

/// Fills the 0 ("default") sizes and checks that every layout fits; Error(Config) naming the
/// size otherwise.
ProbeSizes resolveSizes(std::int64_t points, std::int64_t dims, std::int64_t testLength,
                        std::int64_t instruction, std::int64_t answer, std::int64_t target);

struct Layout {
    std::string name;
    std::vector<std::int64_t> indices;  ///< point indices into xs, one per sequence position
    std::map<std::string, std::pair<std::int64_t, std::int64_t>> spans;  ///< [start, end)
};

/// §8.1: for each c, [xs_0 .. xs_{N-c-1} ; noise x c ; target] ("c=<c>").
std::vector<Layout> countSweepLayouts(const ProbeSizes& s, const std::vector<int>& counts);
/// §8.2: begin / middle / end = [instruction ; noise x k ; target] with k = N - 2D,
/// floor((L - 2D - M_t) / 2), L - 2D - M_t. (The "random" baseline is a fresh draw.)
std::vector<Layout> instNoiseTargetLayouts(const ProbeSizes& s);
/// §8.3: all_duplicated = noise x L; begin / middle / end place the instruction among L - 2D
/// noise copies.
std::vector<Layout> instructionPositionLayouts(const ProbeSizes& s);
/// §8.4: R = L - 2D - D - M_t; the answer block at begin / middle / end before the target.
std::vector<Layout> serialPositionLayouts(const ProbeSizes& s);

/// §7: one prompt length of the attention probe.
struct AttentionSetting {
    std::string name;
    std::int64_t points = 0;
    bool tiled = false;  ///< the reference's duplicated-data prompt: N points repeated 4 times
};
/// The attention probe's prompts in the order it runs them: the training length ("train"),
/// `longPoints` ("long"), the training prompt tiled 4 times ("duplicated"), then each of
/// `extraLengths` ("points=<n>").
std::vector<AttentionSetting> attentionSettings(std::int64_t trainPoints, std::int64_t longPoints,
                                                const std::vector<int>& extraLengths);

}  // namespace lengen::engine::eval
