// The reference's flattened config.yaml: read with the engine's own loader (which already
// knows every key the reference writes), written the way the reference's build_model leaves
// its dict (spec §5.3): the model section with n_in_dims, max_position_embeddings,
// intermediate_size, the patch's name and rope_scaling copied in, plus top-level max_length
// and wandb_id.

#include "interop/reference_config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <optional>

#include "config/config_emit.h"
#include "config/section_reader.h"
#include "lengen/engine/encodings.h"

namespace lengen::engine::interop {

namespace {

using config::exactNumber;

// Top-level scalars the engine's loader ignores: which max_length this run used, its id.
void readRunKeys(const std::string& path, std::optional<double>& maxLength, std::string& runId)
{
    try {
        const YAML::Node root = YAML::LoadFile(path);
        if (!root.IsMap())
            return;
        if (const auto v = root["max_length"]; v && v.IsScalar()) {
            const std::string s = v.Scalar();
            if (s == ".inf" || s == "inf" || s == "Infinity")
                maxLength = INFINITY;
            else
                maxLength = v.as<double>();
        }
        if (const auto id = root["wandb_id"]; id && id.IsScalar())
            runId = id.Scalar();
    } catch (const YAML::Exception&) {
        // The engine's loader has already reported anything malformed; a value we cannot
        // read here only means "not given".
    }
}

void lengthList(YAML::Emitter& out, double length)
{
    out << YAML::Flow << YAML::BeginSeq;
    if (std::isfinite(length))
        out << static_cast<long long>(length);
    else
        out << ".inf";
    out << YAML::EndSeq;
}

void scaling(YAML::Emitter& out, const PositionConfig& p)
{
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "type" << YAML::Value << p.type;
    if (p.factor)
        out << YAML::Key << "factor" << YAML::Value << exactNumber(*p.factor);
    out << YAML::EndMap;
}

// The max_length to write: the model's, or FIRE's MLP width where that differs (noted).
double referenceMaxLength(const RunConfig& c, std::vector<std::string>& notes)
{
    const ModelConfig& m = c.model;
    const PositionConfig& p = c.position;
    double maxLength = m.maxLength;
    // The reference's FIRE MLP width is max_position_embeddings, which build_model sets from
    // max_length (§9.5). A width other than max_length is only reachable through max_length.
    if (m.backbone == Backbone::Llama && p.type == "fire" && c.compat != CompatMode::Reference &&
        p.fireMlpWidth != m.maxPositionEmbeddings) {
        maxLength = p.fireMlpWidth;
        notes.push_back("FIRE's MLP width " + std::to_string(p.fireMlpWidth) +
                        " is written as max_length " + std::to_string(p.fireMlpWidth) +
                        ": the reference takes the width from max_length (spec §9.5)");
    }
    return maxLength;
}

// The model section as build_model leaves it, then the patch section of a patched encoding.
void emitReferenceModel(YAML::Emitter& out, const RunConfig& c, double maxLength)
{
    const ModelConfig& m = c.model;
    const PositionConfig& p = c.position;
    const int positions = std::isfinite(maxLength) ? static_cast<int>(maxLength) : 0;
    // The monkey-patch that selects the PE module (§4.0); PI and dynamic NTK are stock HF.
    const std::string patchName = encodingOf(c).referencePatch;
    const bool patched = !patchName.empty();
    const bool scaled = m.backbone == Backbone::Llama && p.type != "rope";

    out << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "type" << YAML::Value << m.type;
    out << YAML::Key << "family" << YAML::Value << m.family;
    out << YAML::Key << "max_length" << YAML::Value;
    lengthList(out, maxLength);
    config::emitModelShape(out, m);
    if (m.backbone == Backbone::Gpt2)
        out << YAML::Key << "n_positions" << YAML::Value << positions;
    out << YAML::Key << "n_in_dims" << YAML::Value << m.nInDims;
    if (m.backbone == Backbone::Llama) {
        out << YAML::Key << "max_position_embeddings" << YAML::Value << positions;
        out << YAML::Key << "intermediate_size" << YAML::Value << m.intermediateSize;
        if (patched)
            out << YAML::Key << "name" << YAML::Value << patchName;
        if (scaled) {
            out << YAML::Key << "rope_scaling" << YAML::Value;
            scaling(out, p);
        }
    }
    out << YAML::EndMap;
    if (patched) {
        out << YAML::Key << "patch" << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value << patchName;
        if (scaled) {
            out << YAML::Key << "rope_scaling" << YAML::Value;
            scaling(out, p);
        }
        out << YAML::EndMap;
    }
}

// The task section: data, name and both curriculum axes.
void emitReferenceTask(YAML::Emitter& out, const TaskConfig& task)
{
    const auto& cur = task.curriculum;
    out << YAML::Key << "task" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "data" << YAML::Value << task.data;
    out << YAML::Key << "name" << YAML::Value << task.name;
    out << YAML::Key << "curriculum" << YAML::Value << YAML::BeginMap;
    for (auto [name, a] : {std::pair{"dims", &cur.dims}, std::pair{"points", &cur.points}}) {
        out << YAML::Key << name << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "start" << YAML::Value << a->start;
        out << YAML::Key << "end" << YAML::Value << a->end;
        out << YAML::Key << "increment" << YAML::Value << a->increment;
        out << YAML::Key << "interval" << YAML::Value << a->interval;
        out << YAML::EndMap;
    }
    out << YAML::EndMap << YAML::EndMap;
}

}  // namespace

ReferenceConfig loadReferenceConfig(const std::string& path)
{
    ReferenceConfig out;
    const LoadedConfig loaded = loadConfigFile(path);  // throws ConfigError with file:line:key
    std::optional<double> maxLength;
    readRunKeys(path, maxLength, out.runId);
    out.config = loaded.runs.front();
    if (loaded.runs.size() > 1) {
        bool found = false;
        for (const auto& r : loaded.runs)
            if (maxLength && (r.model.maxLength == *maxLength ||
                              (std::isinf(r.model.maxLength) && std::isinf(*maxLength)))) {
                out.config = r;
                found = true;
            }
        if (!found)
            out.notes.push_back("config.yaml lists several max_length values and names none of "
                                "them at the top level; used the first");
    }
    out.config.compat = CompatMode::Reference;
    out.config.sourceFile = path;
    return out;
}

std::string referenceConfigYaml(const RunConfig& c, const std::string& runId,
                                std::vector<std::string>& notes)
{
    const PositionConfig& p = c.position;
    const double maxLength = referenceMaxLength(c, notes);
    YAML::Emitter out;
    out << YAML::BeginMap;
    emitReferenceModel(out, c, maxLength);
    if ((p.type == "linear" || p.type == "dynamic") && p.factor.value_or(0) <= 1)
        notes.push_back("rope_scaling.factor <= 1: Hugging Face's Llama config refuses it");

    emitReferenceTask(out, c.task);

    config::emitTraining(out, c.training, /*referenceExtras=*/true);

    out << YAML::Key << "wandb" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "project" << YAML::Value << "In-Context Function Learning";
    out << YAML::Key << "entity" << YAML::Value << YAML::Null;
    out << YAML::Key << "mode" << YAML::Value << "offline";
    out << YAML::EndMap;
    out << YAML::Key << "max_length" << YAML::Value;
    if (std::isfinite(maxLength))
        out << static_cast<long long>(maxLength);
    else
        out << ".inf";
    out << YAML::Key << "wandb_id" << YAML::Value << runId;
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

bool isPythonOnlyKey(const std::string& key)
{
    auto endsWith = [&](const std::string& s) {
        return key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0;
    };
    return key == "transformer.embed_tokens.weight" || key == "backbone.embeddings.weight" ||
           key == "transformer.wte.weight" || isBufferKey(key) || endsWith(".attn.bias") ||
           endsWith(".attn.masked_bias");
}

bool isBufferKey(const std::string& key)
{
    auto endsWith = [&](const std::string& s) {
        return key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0;
    };
    return endsWith(".rotary_emb.inv_freq") ||
           (key.rfind("transformer.h.", 0) == 0 &&
            (endsWith(".attn.bias") || endsWith(".attn.masked_bias")));
}

PythonOnlyTensor embeddingTable(const RunConfig& c)
{
    const std::int64_t h = c.model.hiddenSize;
    switch (c.model.backbone) {
    case Backbone::Llama: return {"transformer.embed_tokens.weight", {32000, h}};
    case Backbone::Mamba: return {"backbone.embeddings.weight", {50280, h}};
    case Backbone::Gpt2: return {"transformer.wte.weight", {50257, h}};
    }
    return {};
}

}  // namespace lengen::engine::interop
