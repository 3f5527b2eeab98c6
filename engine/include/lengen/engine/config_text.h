#pragma once
// Loading a config from text that is being edited (the studio's editor): `!include` paths
// resolve against the folder the text came from, not the working directory.

#include <string>

#include "lengen/engine/config.h"

namespace lengen::engine {

/// As loadConfigText; `name` labels messages (e.g. the file the text was loaded from).
LoadedConfig loadConfigTextAt(const std::string& yaml, const std::string& name,
                              const std::string& includeDir);

}  // namespace lengen::engine
