#include "config/yaml_tree.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace lengen::engine::config {

const MapEntry* Node::find(const std::string& key) const
{
    for (const auto& entry : entries)
        if (entry.key == key)
            return &entry;
    return nullptr;
}

namespace {

constexpr const char* kIncludeTag = "!include";

SourceLocation locationOf(const YAML::Mark& mark, const std::string& file)
{
    // yaml-cpp marks are 0-based; a null mark has line -1.
    return {file, mark.line >= 0 ? mark.line + 1 : 0, mark.column >= 0 ? mark.column + 1 : 0};
}

[[noreturn]] void fail(const SourceLocation& where, const std::string& message)
{
    throw ConfigError({ConfigIssue{where, "", message}});
}

class IncludeResolver {
public:
    NodePtr loadFile(const fs::path& path, const SourceLocation& includedFrom)
    {
        const fs::path canonical = fs::weakly_canonical(path);
        for (const auto& open : m_stack)
            if (open == canonical)
                fail(includedFrom, "include cycle: " + canonical.string() + " includes itself");
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            if (includedFrom.file.empty())
                throw ConfigError({ConfigIssue{{path.string(), 0, 0}, "", "cannot open the file"}});
            fail(includedFrom, "included file not found: " + path.string());
        }
        std::stringstream text;
        text << in.rdbuf();
        m_stack.push_back(canonical);
        NodePtr node = loadText(text.str(), path.string(), path.parent_path());
        m_stack.pop_back();
        return node;
    }

    NodePtr loadText(const std::string& text, const std::string& name, const fs::path& baseDir)
    {
        YAML::Node root;
        try {
            root = YAML::Load(text);
        } catch (const YAML::Exception& e) {
            fail(locationOf(e.mark, name), "YAML syntax error: " + e.msg);
        }
        return convert(root, name, baseDir);
    }

private:
    NodePtr convert(const YAML::Node& in, const std::string& file, const fs::path& baseDir)
    {
        auto out = std::make_shared<Node>();
        out->location = locationOf(in.Mark(), file);
        if (in.Tag() == kIncludeTag) {
            if (!in.IsScalar() || in.Scalar().empty())
                fail(out->location, "!include needs a relative file path");
            return loadFile((baseDir / in.Scalar()).lexically_normal(), out->location);
        }
        switch (in.Type()) {
        case YAML::NodeType::Scalar:
            out->kind = Node::Kind::Scalar;
            out->scalar = in.Scalar();
            out->quoted = in.Tag() == "!";  // yaml-cpp tags quoted scalars with "!"
            break;
        case YAML::NodeType::Sequence:
            out->kind = Node::Kind::Sequence;
            for (const auto& item : in)
                out->items.push_back(convert(item, file, baseDir));
            break;
        case YAML::NodeType::Map:
            out->kind = Node::Kind::Map;
            for (const auto& kv : in) {
                const auto keyLoc = locationOf(kv.first.Mark(), file);
                if (!kv.first.IsScalar())
                    fail(keyLoc, "mapping keys must be plain names");
                const std::string key = kv.first.Scalar();
                if (out->find(key))
                    fail(keyLoc, "duplicate key '" + key + "'");
                out->entries.push_back({key, keyLoc, convert(kv.second, file, baseDir)});
            }
            break;
        default:
            out->kind = Node::Kind::Null;
            break;
        }
        return out;
    }

    std::vector<fs::path> m_stack;
};

}  // namespace

NodePtr loadYamlFile(const std::string& path)
{
    IncludeResolver resolver;
    return resolver.loadFile(path, SourceLocation{});
}

NodePtr loadYamlText(const std::string& text, const std::string& name)
{
    IncludeResolver resolver;
    return resolver.loadText(text, name, fs::current_path());
}

NodePtr loadYamlText(const std::string& text, const std::string& name, const std::string& includeDir)
{
    IncludeResolver resolver;
    return resolver.loadText(text, name, fs::path(includeDir));
}

}  // namespace lengen::engine::config
