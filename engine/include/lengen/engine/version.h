#pragma once

#include <string>

namespace lengen::engine {

/// The project version, e.g. "0.1.0" (stored in every run file).
const char* versionString();

/// The LibTorch this build uses and what it can reach, e.g. "LibTorch 1.13.1, CPU only" or
/// "LibTorch 2.11.0 with CUDA, 1 GPU" / "..., no GPU usable" (asks the driver).
std::string backendDescription();
/// The LibTorch version alone ("1.13.1"), without asking the driver (figure provenance).
std::string libTorchVersion();

}  // namespace lengen::engine
