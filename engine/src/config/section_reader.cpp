#include "config/section_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace lengen::engine::config {

bool parseDouble(const std::string& text, double& out)
{
    std::string t = text;
    if (t == "inf" || t == ".inf" || t == "+inf" || t == ".Inf" || t == "Inf") {
        out = std::numeric_limits<double>::infinity();
        return true;
    }
    if (t.empty())
        return false;
    char* end = nullptr;
    errno = 0;
    out = std::strtod(t.c_str(), &end);
    return errno == 0 && end && *end == '\0' && std::isfinite(out);
}

bool parseInteger(const std::string& text, std::int64_t& out)
{
    if (text.empty())
        return false;
    char* end = nullptr;
    errno = 0;
    const long long value = std::strtoll(text.c_str(), &end, 10);
    if (errno == 0 && end && *end == '\0') {
        out = value;
        return true;
    }
    double d = 0;  // accept 1e4 or 2000.0 when integral
    if (parseDouble(text, d) && std::floor(d) == d && std::fabs(d) < 9e15) {
        out = static_cast<std::int64_t>(d);
        return true;
    }
    return false;
}

SectionReader::SectionReader(const Node* node, std::string path, IssueSink& sink,
                             SourceLocation fallback)
    : m_node(node), m_path(std::move(path)), m_sink(sink), m_location(std::move(fallback))
{
    if (m_node)
        m_location = m_node->location;
    if (m_node && m_node->kind != Node::Kind::Map && m_node->kind != Node::Kind::Null) {
        m_sink.error(m_location, m_path, "expected a mapping of keys");
        m_node = nullptr;
    }
}

std::string SectionReader::pathOf(const std::string& key) const
{
    if (key.empty())
        return m_path;
    return m_path.empty() ? key : m_path + "." + key;
}

const MapEntry* SectionReader::entry(const std::string& key)
{
    m_known.insert(key);
    if (!m_node || m_node->kind != Node::Kind::Map)
        return nullptr;
    return m_node->find(key);
}

SectionReader SectionReader::child(const std::string& key)
{
    const MapEntry* e = entry(key);
    return SectionReader(e ? e->value.get() : nullptr, pathOf(key), m_sink,
                         e ? e->keyLocation : m_location);
}

void SectionReader::error(const std::string& key, const std::string& message)
{
    const MapEntry* e = m_node ? m_node->find(key) : nullptr;
    m_sink.error(e ? e->value->location : m_location, pathOf(key), message);
}

const Node* SectionReader::scalarNode(const std::string& key, const char* expected)
{
    const MapEntry* e = entry(key);
    if (!e || e->value->kind == Node::Kind::Null)
        return nullptr;
    if (e->value->kind != Node::Kind::Scalar) {
        m_sink.error(e->value->location, pathOf(key), std::string("expected ") + expected);
        return nullptr;
    }
    return e->value.get();
}

std::optional<std::int64_t> SectionReader::integer(const std::string& key)
{
    const Node* n = scalarNode(key, "an integer");
    if (!n)
        return std::nullopt;
    std::int64_t v = 0;
    if (!parseInteger(n->scalar, v)) {
        m_sink.error(n->location, pathOf(key), "expected an integer, got '" + n->scalar + "'");
        return std::nullopt;
    }
    return v;
}

std::optional<double> SectionReader::number(const std::string& key)
{
    const Node* n = scalarNode(key, "a number");
    if (!n)
        return std::nullopt;
    double v = 0;
    if (!parseDouble(n->scalar, v)) {
        m_sink.error(n->location, pathOf(key), "expected a number, got '" + n->scalar + "'");
        return std::nullopt;
    }
    // Only a list of lengths (numberList: max_length) may say inf; a rate or a factor of inf
    // validated and then trained NaN from the first step.
    if (!std::isfinite(v)) {
        m_sink.error(n->location, pathOf(key), "must be a finite number, got '" + n->scalar + "'");
        return std::nullopt;
    }
    return v;
}

std::optional<std::string> SectionReader::text(const std::string& key)
{
    const Node* n = scalarNode(key, "a text value");
    if (!n)
        return std::nullopt;
    return n->scalar;
}

std::optional<bool> SectionReader::boolean(const std::string& key)
{
    const Node* n = scalarNode(key, "true or false");
    if (!n)
        return std::nullopt;
    const std::string& s = n->scalar;
    if (s == "true" || s == "True" || s == "yes" || s == "on")
        return true;
    if (s == "false" || s == "False" || s == "no" || s == "off")
        return false;
    m_sink.error(n->location, pathOf(key), "expected true or false, got '" + s + "'");
    return std::nullopt;
}

std::optional<std::vector<double>> SectionReader::numberList(const std::string& key)
{
    const MapEntry* e = entry(key);
    if (!e || e->value->kind == Node::Kind::Null)
        return std::nullopt;
    std::vector<const Node*> items;
    if (e->value->kind == Node::Kind::Scalar)
        items.push_back(e->value.get());
    else if (e->value->kind == Node::Kind::Sequence)
        for (const auto& item : e->value->items)
            items.push_back(item.get());
    else {
        m_sink.error(e->value->location, pathOf(key), "expected a number or a list of numbers");
        return std::nullopt;
    }
    std::vector<double> values;
    for (const Node* item : items) {
        double v = 0;
        if (item->kind != Node::Kind::Scalar || !parseDouble(item->scalar, v)) {
            m_sink.error(item->location, pathOf(key),
                         "expected a number, got '" + item->scalar + "'");
            return std::nullopt;
        }
        values.push_back(v);
    }
    if (values.empty()) {
        m_sink.error(e->value->location, pathOf(key), "the list is empty");
        return std::nullopt;
    }
    return values;
}

void SectionReader::ignore(std::initializer_list<const char*> keys)
{
    for (const char* k : keys)
        m_known.insert(k);
}

void SectionReader::warnUnknown()
{
    if (!m_node || m_node->kind != Node::Kind::Map)
        return;
    for (const auto& e : m_node->entries)
        if (!m_known.count(e.key))
            m_sink.warn(e.keyLocation, pathOf(e.key), "unknown key (ignored)");
}

}  // namespace lengen::engine::config
