// `lengen list encodings|interventions|tasks [--json]`: the engine's tables as a researcher
// reads them (what `--pe`, `--intervention` and `--task` accept), printed from the tables
// themselves so the list can never drift from what the engine runs.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "command_registry.h"
#include "common_options.h"
#include "lengen/engine/config.h"
#include "lengen/engine/config_edit.h"
#include "lengen/engine/encodings.h"
#include "lengen/engine/interventions.h"

namespace lengen::cli {

namespace {

struct ListArgs {
    std::string what;
    bool json = false;
};

const char* kindName(engine::PositionKind k)
{
    switch (k) {
    case engine::PositionKind::None: return "none";
    case engine::PositionKind::Rotary: return "rotary";
    case engine::PositionKind::Bias: return "bias";
    case engine::PositionKind::Learned: return "learned";
    case engine::PositionKind::Recurrent: return "recurrent";
    }
    return "?";
}

const char* scopeName(engine::InterventionScope s)
{
    switch (s) {
    case engine::InterventionScope::Every: return "every run";
    case engine::InterventionScope::Rotary: return "Llama with a static rotary PE";
    case engine::InterventionScope::Attention: return "Llama, every PE";
    case engine::InterventionScope::Recurrent: return "Mamba";
    case engine::InterventionScope::RandomPositions:
        return "runs trained with randomized positions";
    }
    return "?";
}

// With --json the collected rows as one array (the tables were printed row by row instead).
int printJson(const nlohmann::json& rows, bool json)
{
    if (json)
        std::printf("%s\n", rows.dump(2).c_str());
    return 0;
}

std::string joined(const std::vector<std::string>& items)
{
    std::string out;
    for (const auto& s : items)
        out += (out.empty() ? "" : ", ") + s;
    return out;
}

int listEncodings(bool json)
{
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& e : engine::encodingTable()) {
        // Which interventions apply: asked of the refusal rule on a config with this encoding.
        engine::RunConfig c;
        engine::applyPeName(c, e.name);
        const auto applicable = engine::applicableInterventions(c);
        if (json) {
            rows.push_back({{"name", e.name},
                            {"type", e.type},
                            {"display", e.display},
                            {"positions", kindName(e.kind)},
                            {"length_dependent", e.lengthDependent},
                            {"keys", e.keys},
                            {"fused_cpu", e.fusedCpu},
                            {"device", e.device},
                            {"interventions", applicable},
                            {"summary", e.summary}});
            continue;
        }
        std::printf("%-13s %-13s %-9s %s\n", e.name.c_str(), e.display.c_str(), kindName(e.kind),
                    e.summary.c_str());
        if (!e.keys.empty())
            std::printf("%-13s keys: %s\n", "", joined(e.keys).c_str());
        std::printf("%-13s interventions: %s\n", "", joined(applicable).c_str());
    }
    return printJson(rows, json);
}

int listInterventions(bool json)
{
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& i : engine::interventionTable()) {
        std::vector<std::string> params;
        nlohmann::json jp = nlohmann::json::array();
        for (const auto& p : i.params) {
            params.push_back(p.key + " (" + p.defaultText + ")");
            jp.push_back({{"key", p.key}, {"default", p.defaultText}, {"accepts", p.accepts}});
        }
        if (json) {
            rows.push_back({{"name", i.name},
                            {"applies_to", scopeName(i.scope)},
                            {"parameters", jp},
                            {"summary", i.summary},
                            {"example", i.example},
                            {"color", i.color}});
            continue;
        }
        std::printf("%-12s %-30s %s\n", i.name.c_str(), scopeName(i.scope), i.summary.c_str());
        if (!params.empty())
            std::printf("%-12s parameters: %s\n", "", joined(params).c_str());
    }
    return printJson(rows, json);
}

int listTasks(bool json)
{
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& t : engine::knownTaskNames()) {
        const char* data = engine::isBooleanTaskName(t) ? "boolean" : "gaussian";
        if (json)
            rows.push_back({{"name", t}, {"data", data}});
        else
            std::printf("%-26s %s\n", t.c_str(), data);
    }
    return printJson(rows, json);
}

}  // namespace

void addListCommand(CLI::App& app, CommandTable& table)
{
    auto a = std::make_shared<ListArgs>();
    auto* cmd = app.add_subcommand(
        "list", "Print what --pe, --intervention and --task accept: the position encodings and "
                "backbones (with the interventions each takes), the interventions (with their "
                "parameters and defaults), or the tasks");
    cmd->add_option("what", a->what, "encodings, interventions or tasks")
        ->required()
        ->check(CLI::IsMember({"encodings", "interventions", "tasks"}));
    addJsonFlag(cmd, a->json);
    table.add(cmd, [a](const Session&) {
        if (a->what == "encodings")
            return listEncodings(a->json);
        if (a->what == "interventions")
            return listInterventions(a->json);
        return listTasks(a->json);
    });
}

}  // namespace lengen::cli
