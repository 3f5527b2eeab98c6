#pragma once
// The studio's one config model: the RunConfig being edited. The YAML editor's text is parsed
// once per change by the engine's loader; a form edit changes the struct, the engine's emitter
// writes it back (YamlStyle::Draft, so values the engine derives stay derived), and that text
// is validated by one more engine load. The form never writes YAML of its own. No widgets here.

#include <string>
#include <vector>

#include "lengen/engine/config.h"
#include "lengen/engine/config_edit.h"

namespace lengen::ui {

// What a backbone, PE or task edit implies is the engine's (config_edit.h, shared with sweeps).
using engine::peLabel;
using engine::setBackbone;
using engine::setPositionEncoding;
using engine::setTask;

class ConfigDraft {
public:
    /// Parses `text` (messages name `name`; `!include` resolves in `dir`). True when it loads.
    bool parse(const std::string& text, const std::string& name, const std::string& dir);
    /// Replaces the config by an edited one: its Draft YAML becomes text() and is validated.
    /// `origin` is named in the text's first line. True when it loads.
    bool edit(const engine::RunConfig& edited, const std::string& name, const std::string& origin);

    bool valid() const { return !m_runs.empty(); }
    /// The config to edit: the first run, with the whole max_length list. After a failed
    /// edit it is the edited struct itself, so that the next edit builds on it.
    const engine::RunConfig& config() const { return m_config; }
    /// The validated runs (one per max_length value); empty when the text does not load.
    const std::vector<engine::RunConfig>& runs() const { return m_runs; }
    /// The text edit() wrote.
    const std::string& text() const { return m_text; }
    /// The text last parsed (to skip parsing it again).
    const std::string& source() const { return m_source; }
    /// Errors of the last parse: config issues (file, line, key path) and other failures.
    const std::vector<engine::ConfigIssue>& issues() const { return m_issues; }
    const std::vector<engine::ConfigIssue>& warnings() const { return m_warnings; }
    const std::string& failure() const { return m_failure; }
    /// How many texts the engine has parsed (a test counts them).
    int parses() const { return m_parses; }

private:
    engine::RunConfig m_config;
    std::vector<engine::RunConfig> m_runs;
    std::vector<engine::ConfigIssue> m_issues, m_warnings;
    std::string m_text, m_source, m_failure;
    int m_parses = 0;
};

}  // namespace lengen::ui
