#pragma once
// Typed, located access to one mapping of the resolved YAML tree. Every problem is recorded
// (not thrown) so that one load reports all of them; unknown keys become warnings.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/yaml_tree.h"

namespace lengen::engine::config {

/// Shortest decimal text that parses back to exactly the same double, always recognisable as a
/// float by YAML 1.1 readers (PyYAML): 1 -> "1.0", inf -> ".inf".
std::string exactNumber(double v);

/// The problems of one load. At most kKept of each kind are kept, the rest only counted: a file
/// with 200,000 unknown keys is reported in milliseconds as 100 lines and "… and 199,900 more"
/// (issue 45), not as a wall of text after minutes.
struct IssueSink {
    static constexpr std::size_t kKept = 100;
    std::vector<ConfigIssue> errors;
    std::vector<ConfigIssue> warnings;
    std::size_t errorsLeftOut = 0, warningsLeftOut = 0;
    void error(const SourceLocation& where, const std::string& path, const std::string& message)
    {
        if (errors.size() < kKept)
            errors.push_back({where, path, message});
        else
            ++errorsLeftOut;
    }
    void warn(const SourceLocation& where, const std::string& path, const std::string& message)
    {
        if (warnings.size() < kKept)
            warnings.push_back({where, path, message});
        else
            ++warningsLeftOut;
    }
    /// The kept errors (warnings), then one line saying how many more there were.
    std::vector<ConfigIssue> allErrors() const { return withCount(errors, errorsLeftOut, "error"); }
    std::vector<ConfigIssue> allWarnings() const
    {
        return withCount(warnings, warningsLeftOut, "warning");
    }

private:
    static std::vector<ConfigIssue> withCount(std::vector<ConfigIssue> kept, std::size_t more,
                                              const char* what)
    {
        if (more > 0) {
            const SourceLocation where =
                kept.empty() ? SourceLocation{} : SourceLocation{kept.back().where.file};
            kept.push_back({where, "",
                            "… and " + std::to_string(more) + " more " + what +
                                (more == 1 ? "" : "s") + " of the same file, not listed"});
        }
        return kept;
    }
};

class SectionReader {
public:
    /// `node` may be null (absent section) or a Null node (empty include); both read as empty.
    SectionReader(const Node* node, std::string path, IssueSink& sink,
                  SourceLocation fallback = {});

    bool present() const { return m_node && m_node->kind == Node::Kind::Map; }
    const SourceLocation& location() const { return m_location; }
    std::string pathOf(const std::string& key) const;

    /// Marks `key` known and returns its entry, or nullptr if absent.
    const MapEntry* entry(const std::string& key);
    SectionReader child(const std::string& key);

    std::optional<std::int64_t> integer(const std::string& key);
    std::optional<double> number(const std::string& key);  ///< finite only
    std::optional<std::string> text(const std::string& key);
    std::optional<bool> boolean(const std::string& key);
    /// A scalar or a list of scalars, read as numbers; inf / .inf allowed (model.max_length).
    std::optional<std::vector<double>> numberList(const std::string& key);

    /// Accept keys that have no effect without warning (the reference's unused HF keys).
    void ignore(std::initializer_list<const char*> keys);
    /// Warn for every key that was never asked for.
    void warnUnknown();

    void error(const std::string& key, const std::string& message);

private:
    const Node* scalarNode(const std::string& key, const char* expected);

    const Node* m_node;
    std::string m_path;
    IssueSink& m_sink;
    SourceLocation m_location;
    std::set<std::string> m_known;
};

bool parseDouble(const std::string& text, double& out);
bool parseInteger(const std::string& text, std::int64_t& out);

}  // namespace lengen::engine::config
