// The project's version (Torch-free: lengen-light prints it too). What LibTorch this build uses,
// backendDescription and libTorchVersion, is torch_compat.cpp's.
#include "lengen/engine/version.h"

namespace lengen::engine {

const char* versionString() { return LENGEN_VERSION; }

}  // namespace lengen::engine
