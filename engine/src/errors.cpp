#include "lengen/engine/errors.h"

#include <sstream>

namespace lengen::engine {

int exitCodeFor(ErrorKind kind) { return static_cast<int>(kind); }

Error::Error(ErrorKind kind, const std::string& message, std::string detail)
    : std::runtime_error(message), m_kind(kind), m_detail(std::move(detail))
{
}

std::string SourceLocation::toString() const
{
    std::ostringstream out;
    out << (file.empty() ? "<config>" : file);
    if (line > 0) {
        out << ':' << line;
        if (column > 0)
            out << ':' << column;
    }
    return out.str();
}

std::string ConfigIssue::toString() const
{
    std::string text = where.toString() + ": ";
    if (!keyPath.empty())
        text += keyPath + ": ";
    return text + message;
}

namespace {
std::string joinIssues(const std::vector<ConfigIssue>& issues)
{
    if (issues.size() == 1)
        return issues.front().toString();
    std::string text = std::to_string(issues.size()) + " problems in the config:";
    for (const auto& issue : issues)
        text += "\n  " + issue.toString();
    return text;
}
}  // namespace

ConfigError::ConfigError(std::vector<ConfigIssue> issues)
    : Error(ErrorKind::Config, joinIssues(issues)), m_issues(std::move(issues))
{
}

}  // namespace lengen::engine
