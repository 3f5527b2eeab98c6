// Fuzz target: sweep.yaml (text → SweepSpec → validated cells). The base config is a tiny run
// config written once beside the input (`base: base.yaml`); grids of more than 64 cells are read
// but not expanded (each cell loads and validates a config: a 10,000-cell grid is slow, not
// wrong). Every intervention of the eval stage is resolved against every cell there (issue 45),
// so a bad value or type must end in an engine Error, never in a run that fails after training.
// Seeds: regressions/sweep (bad intervention values and types) and the shipped sweep examples.

#include <cstdint>
#include <fstream>
#include <string>

#include "fuzz_support.h"
#include "lengen/engine/sweep.h"

using namespace lengen::engine;

namespace {

const std::string& sweepFolder()
{
    static const std::string dir = [] {
        const std::string d = lengen::fuzz::scratchDir();
        std::ofstream(d + "/base.yaml")
            << "model:\n  family: Llama2\n  max_length: [14]\n  hidden_size: 16\n  "
               "num_hidden_layers: 2\n"
               "  num_attention_heads: 2\ntask:\n  data: gaussian\n  name: linear_regression\n"
               "  curriculum:\n    dims: {start: 2, end: 3, increment: 1, interval: 10}\n"
               "    points: {start: 5, end: 7, increment: 2, interval: 10}\n"
               "training:\n  learning_rate: 1.0e-3\n  max_steps: 20\n  "
               "per_device_train_batch_size: 8\n";
        return d;
    }();
    return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    lengen::fuzz::expectOnlyErrors("loadSweepText", [&] {
        const auto spec = loadSweepText(text, sweepFolder() + "/sweep.yaml");
        std::size_t cells = 1;
        for (const auto& axis : spec.axes)
            cells *= std::max<std::size_t>(1, axis.values.size());
        if (cells <= 64)
            expandSweep(spec);
        (void)sweepYaml(spec);
    });
    return 0;
}
