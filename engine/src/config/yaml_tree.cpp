#include "config/yaml_tree.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <unordered_set>
#include <vector>

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
// Bounds that no real config comes near; they turn alias bombs, self-referencing aliases and
// endless files into config errors instead of exhausted memory or stack.
constexpr int kMaxDepth = 64;
constexpr std::size_t kMaxNodes = 200'000;
constexpr std::uintmax_t kMaxFileBytes = 4u << 20;

SourceLocation locationOf(const YAML::Mark& mark, const std::string& file)
{
    // yaml-cpp marks are 0-based; a null mark has line -1.
    return {file, mark.line >= 0 ? mark.line + 1 : 0, mark.column >= 0 ? mark.column + 1 : 0};
}

// A flow map or list left open ("{start: 2, end: 3" without its "}"): yaml-cpp notices only
// where the text goes on, a line or more later. The bracket that was not closed, found by
// matching brackets up to that point outside quotes and comments; nullopt when none is.
struct OpenBracket {
    char bracket;
    int line, column;  // 1-based
};
std::optional<OpenBracket> unclosedBracket(const std::string& text, char bracket, int untilLine)
{
    std::vector<OpenBracket> open;
    int line = 1, column = 0;
    char quote = 0;
    bool comment = false;
    for (size_t i = 0; i < text.size() && line <= untilLine; ++i) {
        const char c = text[i];
        ++column;
        if (c == '\n') {
            ++line;
            column = 0;
            comment = false;
            continue;
        }
        if (comment)
            continue;
        if (quote) {
            if (c == quote)
                quote = 0;
            continue;
        }
        if (c == '"' || c == '\'')
            quote = c;
        else if (c == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(text[i - 1]))))
            comment = true;
        else if (c == '{' || c == '[')
            open.push_back({c, line, column});
        else if ((c == '}' || c == ']') && !open.empty())
            open.pop_back();
    }
    for (auto it = open.rbegin(); it != open.rend(); ++it)
        if (it->bracket == bracket)
            return *it;
    return std::nullopt;
}

[[noreturn]] void fail(const SourceLocation& where, const std::string& message)
{
    throw ConfigError({ConfigIssue{where, "", message}});
}

class IncludeResolver {
public:
    NodePtr loadFile(const fs::path& path, const SourceLocation& includedFrom)
    {
        const auto refuse = [&](const std::string& why) {
            if (includedFrom.file.empty())
                throw ConfigError({ConfigIssue{{path.string(), 0, 0}, "", why}});
            fail(includedFrom, "cannot include " + path.string() + ": " + why);
        };
        // A chain of files that each include the next adds no YAML depth, so it is counted
        // here: unbounded, it recursed until the stack overflowed (SIGSEGV at ~30,000 files).
        if (m_stack.size() >= static_cast<std::size_t>(kMaxDepth))
            refuse("includes nested deeper than " + std::to_string(kMaxDepth) + " files");
        // Every filesystem call reports through an error_code: a name longer than the system
        // allows threw filesystem_error, which surfaced as an internal error.
        std::error_code ec;
        const fs::path canonical = fs::weakly_canonical(path, ec);
        if (ec)
            refuse(ec.message());
        for (const auto& open : m_stack)
            if (open == canonical)
                fail(includedFrom, "include cycle: " + canonical.string() + " includes itself");
        // Only regular files: a FIFO would block forever, /dev/zero never ends.
        const auto status = fs::status(path, ec);
        if (ec && ec != std::errc::no_such_file_or_directory)
            refuse(ec.message());
        if (!fs::exists(status)) {
            if (includedFrom.file.empty())
                refuse("cannot open the file");
            fail(includedFrom, "included file not found: " + path.string());
        }
        if (!fs::is_regular_file(status))
            refuse("not a regular file");
        if (const auto size = fs::file_size(path, ec); !ec && size > kMaxFileBytes)
            refuse("larger than 4 MiB, too large for a config");
        std::ifstream in(path, std::ios::binary);
        if (!in)
            refuse("cannot open the file");
        std::stringstream text;
        text << in.rdbuf();
        m_stack.push_back(canonical);
        // "rope.yaml" named from its own folder has an empty parent: that still allows includes
        // (an empty folder means "text must be complete" to loadText).
        const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
        NodePtr node = loadText(text.str(), path.string(), folder);
        m_stack.pop_back();
        return node;
    }

    /// `baseDir` empty: includes are refused (text stored in a run file must be self-contained).
    NodePtr loadText(const std::string& text, const std::string& name, const fs::path& baseDir)
    {
        YAML::Node root;
        try {
            root = YAML::Load(text);
        } catch (const YAML::Exception& e) {
            const bool map = e.msg.find("end of map flow not found") != std::string::npos;
            const bool list = e.msg.find("end of sequence flow not found") != std::string::npos;
            if (map || list)  // name the line of the bracket left open, not where it was noticed
                if (const auto at = unclosedBracket(text, map ? '{' : '[', e.mark.line + 1))
                    fail({name, at->line, at->column}, std::string("YAML syntax error: this '") +
                                                           at->bracket + "' is never closed (no '" +
                                                           (map ? '}' : ']') + "' before line " +
                                                           std::to_string(e.mark.line + 1) + ")");
            fail(locationOf(e.mark, name), "YAML syntax error: " + e.msg);
        }
        return convert(root, name, baseDir, m_depth);
    }

private:
    NodePtr convert(const YAML::Node& in, const std::string& file, const fs::path& baseDir,
                    int depth)
    {
        auto out = std::make_shared<Node>();
        out->location = locationOf(in.Mark(), file);
        // An alias is expanded where it is used, so a self-referencing alias recurses and ten
        // nested aliases of ten make 10^10 nodes: both bounds hold across includes.
        if (depth > kMaxDepth)
            fail(out->location, "nested deeper than " + std::to_string(kMaxDepth) +
                                    " levels (a self-referencing alias?)");
        if (++m_nodes > kMaxNodes)
            fail(out->location, "expands to more than " + std::to_string(kMaxNodes) +
                                    " values (aliases expanding exponentially?)");
        if (in.Tag() == kIncludeTag) {
            if (!in.IsScalar() || in.Scalar().empty())
                fail(out->location, "!include needs a relative file path");
            if (baseDir.empty())
                fail(out->location, "!include is not allowed here (this text must be complete)");
            const int saved = m_depth;
            m_depth = depth;
            auto node = loadFile((baseDir / in.Scalar()).lexically_normal(), out->location);
            m_depth = saved;
            return node;
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
                out->items.push_back(convert(item, file, baseDir, depth + 1));
            break;
        case YAML::NodeType::Map:
            out->kind = Node::Kind::Map;
            {
                // A set beside the entries: a scan per key was quadratic (200,000 keys: minutes).
                std::unordered_set<std::string> seen;
                for (const auto& kv : in) {
                    const auto keyLoc = locationOf(kv.first.Mark(), file);
                    if (!kv.first.IsScalar())
                        fail(keyLoc, "mapping keys must be plain names");
                    const std::string key = kv.first.Scalar();
                    if (!seen.insert(key).second)
                        fail(keyLoc, "duplicate key '" + key + "'");
                    out->entries.push_back(
                        {key, keyLoc, convert(kv.second, file, baseDir, depth + 1)});
                }
            }
            break;
        default: out->kind = Node::Kind::Null; break;
        }
        return out;
    }

    std::vector<fs::path> m_stack;
    std::size_t m_nodes = 0;  // converted so far, over all files
    int m_depth = 0;          // depth of the !include being loaded
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
    return resolver.loadText(text, name, fs::path());
}

NodePtr loadYamlText(const std::string& text, const std::string& name,
                     const std::string& includeDir)
{
    IncludeResolver resolver;
    return resolver.loadText(text, name, fs::path(includeDir));
}

}  // namespace lengen::engine::config
