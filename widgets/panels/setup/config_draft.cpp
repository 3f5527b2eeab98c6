#include "config_draft.h"

#include <cctype>
#include <cmath>
#include <limits>

#include "lengen/engine/config_text.h"
#include "lengen/engine/errors.h"

namespace lengen::ui {

bool ConfigDraft::parse(const std::string& text, const std::string& name, const std::string& dir)
{
    m_runs.clear();
    m_issues.clear();
    m_warnings.clear();
    m_failure.clear();
    m_source = text;
    ++m_parses;
    try {
        auto loaded = engine::loadConfigTextAt(text, name, dir);
        m_warnings = std::move(loaded.warnings);
        m_runs = std::move(loaded.runs);
        m_config = m_runs.at(0);
        m_config.model.maxLengths.clear();  // resolved runs hold one value each: the list is theirs
        for (const auto& r : m_runs)
            m_config.model.maxLengths.push_back(r.model.maxLength);
        return true;
    } catch (const engine::ConfigError& e) {
        m_issues = e.issues();
    } catch (const std::exception& e) {
        m_failure = e.what();
    }
    m_runs.clear();
    return false;
}

bool ConfigDraft::edit(const engine::RunConfig& edited, const std::string& name,
                       const std::string& origin)
{
    m_text = "# Edited in LenGen Studio from " + origin +
             ". Derived values (rope factor, intermediate_size) are left to the engine.\n" +
             engine::toYaml(edited, engine::YamlStyle::Draft);
    if (parse(m_text, name, "."))  // the text has no !include left to resolve
        return true;
    m_config = edited;
    return false;
}

}  // namespace lengen::ui
