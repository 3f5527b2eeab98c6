#include "config_draft.h"

#include <cctype>
#include <cmath>
#include <limits>

#include "lengen/engine/config_text.h"
#include "lengen/engine/errors.h"

namespace lengen::ui {

void setPositionEncoding(engine::RunConfig& c, const std::string& type)
{
    const int width = c.position.fireMlpWidth;  // kept: it is FIRE's own key, not a PE's
    c.position = engine::PositionConfig{};
    c.position.type = type;
    c.position.fireMlpWidth = width;
    if (type != "rope") {
        c.position.patchName = type;
        c.position.explicitScaling = true;
    }
}

void setBackbone(engine::RunConfig& c, engine::Backbone b)
{
    if (c.model.backbone == b)
        return;
    auto& m = c.model;
    const bool fromMamba = m.backbone == engine::Backbone::Mamba;
    m.backbone = b;
    m.family = b == engine::Backbone::Llama ? "Llama2" : b == engine::Backbone::Mamba ? "Mamba" : "GPT2";
    m.type = b == engine::Backbone::Mamba ? "ssm" : "decoder";
    setPositionEncoding(c, "rope");  // only Llama reads a patch
    if (b == engine::Backbone::Mamba) {
        m.maxLength = std::numeric_limits<double>::infinity();
        m.maxLengths = {m.maxLength};
        m.numHeads = 1;
    } else if (fromMamba || !std::isfinite(m.maxLength)) {
        m.maxLength = 2.0 * c.task.curriculum.points.end;
        m.maxLengths = {m.maxLength};
        // Mamba has no heads (stored as 1): give attention the reference's small/tiny 4.
        m.numHeads = fromMamba && m.hiddenSize % 4 == 0 ? 4 : std::max(1, m.numHeads);
    }
}

std::string peLabel(const std::string& type)
{
    engine::RunConfig c;
    c.position.type = type;
    const std::string shown = c.peDisplayName();
    std::string lower = shown;
    for (auto& ch : lower)
        ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return lower == type ? shown : shown + " (" + type + ")";
}

void setTask(engine::RunConfig& c, const std::string& name)
{
    c.task.name = name;
    c.task.data = engine::isBooleanTaskName(name) ? "boolean" : "gaussian";
}

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

bool ConfigDraft::edit(const engine::RunConfig& edited, const std::string& name, const std::string& origin)
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
