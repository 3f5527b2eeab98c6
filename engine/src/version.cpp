#include "lengen/engine/version.h"

namespace lengen::engine {

const char* versionString() { return LENGEN_VERSION; }

}  // namespace lengen::engine
