// The config keys that differ between runs (the studio's Compare: "what is different about
// these runs?"), read off each run's resolved YAML so that every key the run stores counts.

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>

#include "lengen/engine/config.h"

namespace lengen::engine {

namespace {

// Every scalar of a YAML tree under its dotted key path; a list is one value ("[22, 44]").
void flatten(const YAML::Node& node, const std::string& path, std::map<std::string, std::string>& out)
{
    if (node.IsMap()) {
        for (const auto& kv : node)
            flatten(kv.second, path.empty() ? kv.first.Scalar() : path + "." + kv.first.Scalar(), out);
    } else if (node.IsSequence()) {
        std::string text = "[";
        for (std::size_t i = 0; i < node.size(); ++i)
            text += (i ? ", " : "") + (node[i].IsScalar() ? node[i].Scalar() : std::string("…"));
        out[path] = text + "]";
    } else if (node.IsScalar()) {
        out[path] = node.Scalar();
    } else {
        out[path] = "";
    }
}

}  // namespace

std::vector<ConfigDifference> configDifferences(const std::vector<RunConfig>& runs)
{
    std::vector<std::map<std::string, std::string>> flat(runs.size());
    std::set<std::string> keys;
    for (std::size_t r = 0; r < runs.size(); ++r) {
        flatten(YAML::Load(toYaml(runs[r], YamlStyle::Resolved)), "", flat[r]);
        for (const auto& [k, v] : flat[r])
            keys.insert(k);
    }
    std::vector<ConfigDifference> out;
    for (const auto& key : keys) {
        ConfigDifference d{key, {}};
        for (const auto& f : flat) {
            const auto it = f.find(key);
            d.values.push_back(it == f.end() ? std::string() : it->second);
        }
        bool differs = false;
        for (const auto& v : d.values)
            differs = differs || v != d.values.front();
        if (differs)
            out.push_back(std::move(d));
    }
    return out;
}

}  // namespace lengen::engine
