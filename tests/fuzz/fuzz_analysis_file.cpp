// Fuzz target: the analysis readers (docs/analysis-format.md) — evaluations, probe groups,
// attention summaries and map tiles — on arbitrary bytes stored as both analysis.h5 and
// attention_maps.h5 of a run folder, as the studio and `lengen export` read them.
// Seeds: a good analysis.h5 and attention_maps.h5, and the corpus's damaged ones.

#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "lengen/engine/analysis.h"
#include "lengen/engine/probes.h"

using namespace lengen::engine;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    // The readers locate the run's folder through its run.h5; an empty one is enough.
    static const std::string runFile = lengen::fuzz::writeScratch("run.h5", nullptr, 0);
    lengen::fuzz::writeScratch("analysis.h5", data, size);
    lengen::fuzz::writeScratch("attention_maps.h5", data, size);
    const std::string run = lengen::fuzz::scratchDir();
    lengen::fuzz::expectOnlyErrors("analysisContents", [&] { analysisContents(run); });
    lengen::fuzz::expectOnlyErrors("readEvaluations", [&] { readEvaluations(run); });
    lengen::fuzz::expectOnlyErrors("readProbeGroups", [&] { readProbeGroups(run); });
    lengen::fuzz::expectOnlyErrors("readAttentionSettings", [&] {
        for (const auto& s : readAttentionSettings(run))
            for (int layer = 0; layer < s.layers && layer < 2; ++layer)
                lengen::fuzz::expectOnlyErrors("readAttentionTile", [&] {
                    // A tile that fits any map, and one past its edge (must be refused).
                    readAttentionTile(run, s.name, 0, layer, 0, 0, 1, 0, 1);
                    readAttentionTile(run, s.name, 0, layer, 0, 0, s.tokens + 1, 0, 2);
                });
    });
    return 0;
}
