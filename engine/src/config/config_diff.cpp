// The config keys that differ between runs (the studio's Compare: "what is different about
// these runs?"), read off each run's resolved YAML so that every key the run stores counts;
// and whether runs may train as members of one batched model (trainer.h: they differ in seed
// only, and their encoding has no weights of its own per layer).

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>

#include "lengen/engine/config.h"
#include "lengen/engine/encodings.h"
#include "lengen/engine/trainer.h"

namespace lengen::engine {

namespace {

// Every scalar of a YAML tree under its dotted key path; a list is one value ("[22, 44]").
void flatten(const YAML::Node& node, const std::string& path,
             std::map<std::string, std::string>& out)
{
    if (node.IsMap()) {
        for (const auto& kv : node)
            flatten(kv.second, path.empty() ? kv.first.Scalar() : path + "." + kv.first.Scalar(),
                    out);
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

std::string whyNotApplied(const RunConfig& run, const std::string& key)
{
    return encodingIgnores(encodingOf(run), key);
}

// A key one encoding reads and others ignore: a `patch.` key or the rotary base that some
// row of the encoding table lists ("model.max_length" is listed too, but every run reads it).
bool encodingSpecific(const std::string& key)
{
    if (key.rfind("patch.", 0) != 0 && key != "model.rope_theta")
        return false;
    for (const auto& e : encodingTable())
        for (const auto& k : e.keys)
            if (k == key)
                return true;
    return false;
}

}  // namespace

std::string encodingIgnores(const EncodingInfo& e, const std::string& key)
{
    if (!encodingSpecific(key))
        return {};
    for (const auto& k : e.keys)
        if (k == key)
            return {};
    return e.display + " does not read it";
}

std::map<std::string, std::string> flattenedConfig(const RunConfig& run)
{
    std::map<std::string, std::string> out;
    flatten(YAML::Load(toYaml(run, YamlStyle::Resolved)), "", out);
    // Written only when on; compared as 0 when off, so that a run without it reads "0", not "—"
    // (Compare's groups and table, `lengen runs --where training.random_positions.max_position=0`).
    out.emplace("training.random_positions.max_position", "0");
    return out;
}

std::vector<std::string>
variedKeys(const std::vector<const std::map<std::string, std::string>*>& configs)
{
    if (configs.empty())
        return {};
    std::set<std::string> keys;
    for (const auto* c : configs)
        for (const auto& kv : *c)
            keys.insert(kv.first);
    std::vector<std::string> out;
    auto value = [](const std::map<std::string, std::string>& c, const std::string& key) {
        const auto it = c.find(key);
        return it == c.end() ? std::string() : it->second;
    };
    for (const auto& key : keys) {
        const auto first = value(*configs.front(), key);
        for (const auto* c : configs)
            if (value(*c, key) != first) {
                out.push_back(key);
                break;
            }
    }
    return out;
}

std::vector<ConfigDifference> configDifferences(const std::vector<RunConfig>& runs)
{
    std::vector<std::map<std::string, std::string>> flat(runs.size());
    std::vector<const std::map<std::string, std::string>*> pointers;
    for (std::size_t r = 0; r < runs.size(); ++r) {
        flat[r] = flattenedConfig(runs[r]);
        pointers.push_back(&flat[r]);
    }
    std::vector<ConfigDifference> out;
    if (runs.empty())
        return out;
    for (const auto& key : variedKeys(pointers)) {
        ConfigDifference d{key, {}, {}};
        bool applies = false;  // a key no run reads differs in nothing that matters
        for (std::size_t r = 0; r < runs.size(); ++r) {
            const auto it = flat[r].find(key);
            d.values.push_back(it == flat[r].end() ? std::string() : it->second);
            d.notApplied.push_back(whyNotApplied(runs[r], key));
            applies = applies || d.notApplied[r].empty();
        }
        if (applies)
            out.push_back(std::move(d));
    }
    return out;
}

std::string membersRefusal(const RunConfig& config)
{
    const EncodingInfo& e = encodingOf(config);
    if (e.backbone != Backbone::Llama)
        return e.display + " is not a Llama model; members train Llama models only (for now)";
    if (e.layerParameters || !e.fusedCpu)
        return e.display + " has weights of its own in every layer; members train position " +
               "encodings without them (RoPE and its variants, NoPE, ALiBi)";
    if (config.training.randomPositions > 0)
        return "training.random_positions draws each run's own positions; members share theirs";
    return {};
}

bool sameRunButSeed(const RunConfig& a, const RunConfig& b)
{
    const auto withoutSeed = [](RunConfig c) {  // as the stored YAML: every key counts
        c.seed.reset();
        return toYaml(c);
    };
    return withoutSeed(a) == withoutSeed(b);
}

}  // namespace lengen::engine
