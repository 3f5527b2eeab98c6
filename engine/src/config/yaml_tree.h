#pragma once
// A YAML document with every `!include` resolved, where each node remembers the file, line and
// column it came from, so that validation errors can point at the right place even inside an
// included file. Private to the engine.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lengen/engine/errors.h"

namespace lengen::engine::config {

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct MapEntry {
    std::string key;
    SourceLocation keyLocation;
    NodePtr value;
};

struct Node {
    enum class Kind { Null, Scalar, Sequence, Map };
    Kind kind = Kind::Null;
    std::string scalar;             ///< Scalar only
    bool quoted = false;            ///< scalar was quoted ("inf" vs inf)
    std::vector<NodePtr> items;     ///< Sequence only
    std::vector<MapEntry> entries;  ///< Map only, in document order
    SourceLocation location;

    const MapEntry* find(const std::string& key) const;
};

/// Parse a file, resolving `!include <path>` (relative to the including file, nested, cycles
/// detected; regular files of at most 4 MiB only). Throws ConfigError on syntax errors, missing
/// or unreadable includes, cycles, nesting deeper than 64 levels and more than 200,000 values
/// after alias expansion.
NodePtr loadYamlFile(const std::string& path);
/// Same for text that must be complete (a config stored in a run file): `!include` is an error.
NodePtr loadYamlText(const std::string& text, const std::string& name);
/// Same, resolving `!include` relative to `includeDir` (empty: refused).
NodePtr loadYamlText(const std::string& text, const std::string& name,
                     const std::string& includeDir);

}  // namespace lengen::engine::config
