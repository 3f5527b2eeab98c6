// Fuzz target: the run-file readers (docs/run-format.md) on arbitrary bytes named run.h5 —
// what `lengen info`, the studio's browser and `train --resume` read before trusting a run:
// the header, the log, the stored config and the latest checkpoint (every tensor, the moments,
// the generator state). Seeds: a good run.h5 and the corpus's damaged ones.

#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "io/run_store.h"
#include "lengen/engine/config.h"
#include "lengen/engine/run_file.h"

using namespace lengen::engine;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string path = lengen::fuzz::writeScratch("run.h5", data, size);
    lengen::fuzz::expectOnlyErrors("readRunInfo", [&] {
        const RunFileInfo info = readRunInfo(path);
        lengen::fuzz::expectOnlyErrors("storedRunConfig",
                                       [&] { storedRunConfig(info.configYaml, path); });
    });
    lengen::fuzz::expectOnlyErrors("readTrainLog", [&] { readTrainLog(path); });
    lengen::fuzz::expectOnlyErrors("readCheckpoint", [&] { io::readCheckpoint(path); });
    return 0;
}
