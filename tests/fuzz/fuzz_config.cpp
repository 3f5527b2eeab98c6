// Fuzz target: the YAML config loader (text → validated RunConfigs) and the loader of a config
// stored in a run file. Besides "only engine errors", it checks a property: every config that
// loads is emitted by toYaml as text that loads again to the same config (emit is a fixed point).
// Seeds: configs/ (every shipped config) and the corpus's mutated configs.

#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "lengen/engine/config.h"

using namespace lengen::engine;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    lengen::fuzz::expectOnlyErrors("loadConfigText", [&] {
        // `!include` resolves relative to this name's folder: the scratch folder, empty.
        const auto loaded = loadConfigText(text, lengen::fuzz::scratchDir() + "/fuzz.yaml");
        for (const auto& run : loaded.runs) {
            const std::string emitted = toYaml(run);
            std::string again;
            try {
                again = toYaml(storedRunConfig(emitted, "emitted.h5"));
            } catch (const Error& e) {
                lengen::fuzz::finding("toYaml", "an emitted config does not load again: " +
                                                    std::string(e.what()) + "\n" + emitted);
            }
            if (again != emitted)
                lengen::fuzz::finding("toYaml", "emit → load → emit changed the text:\n" + emitted +
                                                    "\n---\n" + again);
        }
    });
    lengen::fuzz::expectOnlyErrors("storedRunConfig", [&] { storedRunConfig(text, "fuzz.h5"); });
    return 0;
}
