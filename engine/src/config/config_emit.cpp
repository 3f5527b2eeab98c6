// Writes a RunConfig back as YAML (the resolved config stored in run files), and the small
// derived-value helpers of RunConfig.

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "config/config_emit.h"
#include "config/section_reader.h"
#include "lengen/engine/config.h"
#include "lengen/engine/encodings.h"

namespace lengen::engine {

namespace config {
// Shortest decimal text that parses back to exactly the same double.
std::string exactNumber(double v)
{
    if (std::isinf(v))
        return v > 0 ? ".inf" : "-.inf";
    char buf[64];
    for (int precision = 6; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, v);
        double back = 0;
        if (config::parseDouble(buf, back) && back == v)
            break;
    }
    std::string s = buf;
    // Keep floats recognisable as floats to YAML 1.1 readers (PyYAML): 1 -> 1.0, 1e-06 -> 1.0e-06.
    const auto e = s.find_first_of("eE");
    if (s.find('.') == std::string::npos && s.find('n') == std::string::npos)
        s.insert(e == std::string::npos ? s.size() : e, ".0");
    return s;
}

void emitModelShape(YAML::Emitter& out, const ModelConfig& m)
{
    if (m.backbone == Backbone::Gpt2) {
        out << YAML::Key << "n_embd" << YAML::Value << m.hiddenSize;
        out << YAML::Key << "n_layer" << YAML::Value << m.numLayers;
        out << YAML::Key << "n_head" << YAML::Value << m.numHeads;
        out << YAML::Key << "resid_pdrop" << YAML::Value << exactNumber(m.residDropout);
        out << YAML::Key << "embd_pdrop" << YAML::Value << exactNumber(m.embdDropout);
        out << YAML::Key << "attn_pdrop" << YAML::Value << exactNumber(m.attnDropout);
    } else {
        out << YAML::Key << "hidden_size" << YAML::Value << m.hiddenSize;
        out << YAML::Key << "num_hidden_layers" << YAML::Value << m.numLayers;
    }
    if (m.backbone == Backbone::Llama) {
        out << YAML::Key << "num_attention_heads" << YAML::Value << m.numHeads;
        out << YAML::Key << "hidden_act" << YAML::Value << m.hiddenAct;
        out << YAML::Key << "rope_theta" << YAML::Value << exactNumber(m.ropeTheta);
        out << YAML::Key << "rms_norm_eps" << YAML::Value << exactNumber(m.rmsNormEps);
    }
    if (m.backbone == Backbone::Mamba)
        out << YAML::Key << "state_size" << YAML::Value << m.stateSize;
}

void emitTraining(YAML::Emitter& out, const TrainingConfig& t, bool referenceExtras)
{
    out << YAML::Key << "training" << YAML::Value << YAML::BeginMap;
    if (referenceExtras) {
        out << YAML::Key << "evaluation_strategy" << YAML::Value << "steps";
        out << YAML::Key << "gradient_accumulation_steps" << YAML::Value << 1;
        out << YAML::Key << "eval_gradient_accumulation_steps" << YAML::Value << 1;
        out << YAML::Key << "save_strategy" << YAML::Value << "steps";
        out << YAML::Key << "save_total_limit" << YAML::Value << 1;
        out << YAML::Key << "metric_for_best_model" << YAML::Value << "loss";
        out << YAML::Key << "eval_steps" << YAML::Value << 100;
        out << YAML::Key << "per_device_eval_batch_size" << YAML::Value << 64;
    }
    out << YAML::Key << "learning_rate" << YAML::Value << exactNumber(t.learningRate);
    out << YAML::Key << "weight_decay" << YAML::Value << exactNumber(t.weightDecay);
    out << YAML::Key << "adam_beta1" << YAML::Value << exactNumber(t.adamBeta1);
    out << YAML::Key << "adam_beta2" << YAML::Value << exactNumber(t.adamBeta2);
    out << YAML::Key << "adam_epsilon" << YAML::Value << exactNumber(t.adamEpsilon);
    out << YAML::Key << "max_grad_norm" << YAML::Value << exactNumber(t.maxGradNorm);
    out << YAML::Key << "warmup_ratio" << YAML::Value << exactNumber(t.warmupRatio);
    out << YAML::Key << "max_steps" << YAML::Value << t.maxSteps;
    out << YAML::Key << "logging_steps" << YAML::Value << t.loggingSteps;
    out << YAML::Key << "save_steps" << YAML::Value << t.saveSteps;
    out << YAML::Key << "per_device_train_batch_size" << YAML::Value << t.batchSize;
    if (t.randomPositions > 0) {
        out << YAML::Key << "random_positions" << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "max_position" << YAML::Value << t.randomPositions << YAML::EndMap;
    }
    out << YAML::EndMap;
}

}  // namespace config

namespace {
using config::exactNumber;

void axis(YAML::Emitter& out, const char* name, const CurriculumAxis& a)
{
    out << YAML::Key << name << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "start" << YAML::Value << a.start;
    out << YAML::Key << "end" << YAML::Value << a.end;
    out << YAML::Key << "increment" << YAML::Value << a.increment;
    out << YAML::Key << "interval" << YAML::Value << a.interval;
    out << YAML::EndMap;
}

void maxLength(YAML::Emitter& out, double v)
{
    if (std::isfinite(v) && std::floor(v) == v)
        out << static_cast<long long>(v);
    else
        out << exactNumber(v);
}

void model(YAML::Emitter& out, const RunConfig& c, YamlStyle style)
{
    const ModelConfig& m = c.model;
    const bool draft = style == YamlStyle::Draft;
    out << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "type" << YAML::Value << m.type;
    out << YAML::Key << "family" << YAML::Value << m.family;
    out << YAML::Key << "max_length" << YAML::Value;
    if (draft && m.maxLengths.size() > 1) {  // one run per value: keep them all
        out << YAML::Flow << YAML::BeginSeq;
        for (double v : m.maxLengths)
            maxLength(out, v);
        out << YAML::EndSeq;
    } else {
        maxLength(out, m.maxLength);
    }
    config::emitModelShape(out, m);
    if (!draft) {
        out << YAML::Key << "n_in_dims" << YAML::Value << m.nInDims;
        if (m.maxPositionEmbeddings > 0)
            out << YAML::Key << "max_position_embeddings" << YAML::Value << m.maxPositionEmbeddings;
    }
    if (!draft || m.intermediateSizeGiven)
        out << YAML::Key << "intermediate_size" << YAML::Value << m.intermediateSize;
    out << YAML::EndMap;
}

void patch(YAML::Emitter& out, const PositionConfig& p, YamlStyle style, bool referenceCompat)
{
    if (p.patchName.empty() && !p.explicitScaling)
        return;
    out << YAML::Key << "patch" << YAML::Value << YAML::BeginMap;
    if (!p.patchName.empty())
        out << YAML::Key << "name" << YAML::Value << p.patchName;
    if (p.explicitScaling) {
        out << YAML::Key << "rope_scaling" << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "type" << YAML::Value << p.type;
        if (p.factor && (style == YamlStyle::Resolved || p.factorGiven))
            out << YAML::Key << "factor" << YAML::Value << exactNumber(*p.factor);
        out << YAML::EndMap;
    }
    // Under compat: reference the width is derived (max_position_embeddings, §9.5): resolved
    // configs state it, a draft leaves it to be derived again.
    if (p.type == "fire" && (style == YamlStyle::Resolved || !referenceCompat)) {
        out << YAML::Key << "fire" << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "mlp_width" << YAML::Value << p.fireMlpWidth << YAML::EndMap;
    }
    if (p.type == "t5") {
        out << YAML::Key << "t5" << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "num_buckets" << YAML::Value << p.t5Buckets;
        out << YAML::Key << "max_distance" << YAML::Value << p.t5MaxDistance << YAML::EndMap;
    }
    if (p.type == "sandwich") {
        out << YAML::Key << "sandwich" << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "dim" << YAML::Value << p.sandwichDim << YAML::EndMap;
    }
    if (p.type == "xpos") {
        out << YAML::Key << "xpos" << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "scale_base" << YAML::Value << exactNumber(p.xposScaleBase)
            << YAML::EndMap;
    }
    if (p.type == "cope") {
        out << YAML::Key << "cope" << YAML::Value << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "npos_max" << YAML::Value << p.copeMaxPositions;
        if (p.copeDividePositionLogits)  // the default (false) stays unwritten: older runs read the
                                         // same
            out << YAML::Key << "divide_position_logits" << YAML::Value << true;
        out << YAML::EndMap;
    }
    out << YAML::EndMap;
}

}  // namespace

std::string toYaml(const RunConfig& c, YamlStyle style)
{
    YAML::Emitter out;
    out << YAML::BeginMap;
    model(out, c, style);
    patch(out, c.position, style, c.compat == CompatMode::Reference);
    out << YAML::Key << "task" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "data" << YAML::Value << c.task.data;
    out << YAML::Key << "name" << YAML::Value << c.task.name;
    out << YAML::Key << "curriculum" << YAML::Value << YAML::BeginMap;
    axis(out, "dims", c.task.curriculum.dims);
    axis(out, "points", c.task.curriculum.points);
    out << YAML::EndMap << YAML::EndMap;
    config::emitTraining(out, c.training);
    if (style == YamlStyle::Resolved || c.compat == CompatMode::Reference)
        out << YAML::Key << "compat" << YAML::Value
            << (c.compat == CompatMode::Reference ? "reference" : "intended");
    if (c.seed)
        out << YAML::Key << "seed" << YAML::Value << *c.seed;
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

std::string RunConfig::peDisplayName() const
{
    const auto& e = encodingOf(*this);
    return e.backbone == Backbone::Llama && e.type != position.type ? position.type : e.display;
}

// The reference's AdamW ran with torch defaults regardless of the config (§9.15).
double RunConfig::effectiveWeightDecay() const
{
    return compat == CompatMode::Reference ? 0.01 : training.weightDecay;
}

double RunConfig::effectiveAdamEpsilon() const
{
    return compat == CompatMode::Reference ? 1e-8 : training.adamEpsilon;
}

double RunConfig::effectiveMaxGradNorm() const
{
    return compat == CompatMode::Reference ? 0.0 : training.maxGradNorm;
}

std::int64_t RunConfig::warmupSteps() const
{
    return static_cast<std::int64_t>(
        std::ceil(training.warmupRatio * static_cast<double>(training.maxSteps) - 1e-9));
}

}  // namespace lengen::engine
