#include "lengen/engine/errors.h"

#include <new>
#include <sstream>

namespace lengen::engine {

int exitCodeFor(ErrorKind kind) { return static_cast<int>(kind); }

Error classifyException(const std::exception& e)
{
    if (const auto* known = dynamic_cast<const Error*>(&e))
        return *known;
    const std::string text = e.what();
    // LibTorch reports a failed allocation as c10::Error with these phrases (CPU allocator,
    // CUDA caching allocator); its first line is enough for the details box.
    const bool oom = dynamic_cast<const std::bad_alloc*>(&e) ||
                     text.find("can't allocate memory") != std::string::npos ||
                     text.find("out of memory") != std::string::npos;
    const std::string firstLine = text.substr(0, text.find('\n'));
    if (oom)
        return Error(ErrorKind::Runtime,
                     "out of memory: the model, batch or prompt length needs more memory than "
                     "this machine has; lower per_device_train_batch_size, the prompt length "
                     "or --memory-budget",
                     firstLine);
    return Error(ErrorKind::Internal, firstLine);
}

Error::Error(ErrorKind kind, const std::string& message, std::string detail)
    : std::runtime_error(message), m_kind(kind), m_detail(std::move(detail))
{}

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
{}

}  // namespace lengen::engine
