#pragma once

namespace lengen::engine {

/// The project version, e.g. "0.1.0" (stored in every run file).
const char* versionString();

}  // namespace lengen::engine
