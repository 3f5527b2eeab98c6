// Turns the resolved YAML tree into validated RunConfigs (reference §5.3–5.4), collecting every
// problem with its file, line, column and key path.

#include <algorithm>
#include <cmath>
#include <limits>

#include "config/section_reader.h"
#include "config/yaml_tree.h"
#include "lengen/engine/config.h"
#include "lengen/engine/config_text.h"
#include "lengen/engine/encodings.h"

namespace lengen::engine {
namespace {

using config::IssueSink;
using config::SectionReader;

const std::vector<std::string> kGaussianTasks = {
    "linear_regression",    "sparse_linear_regression", "noisy_linear_regression",
    "quadratic_regression", "relu_2nn_regression",      "decision_tree",
    "linear_classification"};
const std::vector<std::string> kBooleanTasks = {
    "conjunction",   "disjunction",   "sparse_disjunction", "majority", "parity",
    "sparse_parity", "int_halfspace", "sparse_thres",       "dnf",      "cnf"};

std::string joined(const std::vector<std::string>& names)
{
    std::string out;
    for (const auto& n : names)
        out += (out.empty() ? "" : ", ") + n;
    return out;
}

bool contains(const std::vector<std::string>& names, const std::string& name)
{
    return std::find(names.begin(), names.end(), name) != names.end();
}

// Longest sequence a config may ask for (positions are int); memory runs out far earlier.
constexpr double kMaxLength = 2147483647.0;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Reads an int and checks a lower bound and T's range; records an error naming the key otherwise.
template <typename T>
void readInt(SectionReader& s, const char* key, T& out, std::int64_t minimum, bool required)
{
    const auto v = s.integer(key);
    if (!v) {
        if (required && !s.entry(key))
            s.error(key, std::string("missing required key '") + key + "'");
        return;
    }
    if (*v < minimum) {
        s.error(key, "must be >= " + std::to_string(minimum) + ", got " + std::to_string(*v));
        return;
    }
    // A value past T's range would wrap in the cast (4294967297 layers read as 1).
    if (static_cast<std::uint64_t>(*v) >
        static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
        s.error(key, "must be <= " + std::to_string(std::numeric_limits<T>::max()) + ", got " +
                         std::to_string(*v));
        return;
    }
    out = static_cast<T>(*v);
}

void readAxis(SectionReader section, CurriculumAxis& axis)
{
    if (!section.present()) {
        section.error("", "missing curriculum axis (start, end, increment, interval)");
        return;
    }
    readInt(section, "start", axis.start, 1, true);
    readInt(section, "end", axis.end, 1, true);
    readInt(section, "increment", axis.increment, 0, true);
    readInt(section, "interval", axis.interval, 1, true);
    if (axis.start > axis.end)
        section.error("start", "start (" + std::to_string(axis.start) + ") is greater than end (" +
                                   std::to_string(axis.end) + ")");
    section.warnUnknown();
}

void readTask(SectionReader task, TaskConfig& out)
{
    if (!task.present()) {
        task.error("", "missing section 'task' (data, name, curriculum)");
        return;
    }
    if (auto name = task.text("name")) {
        out.name = *name;
        if (!contains(kGaussianTasks, *name) && !contains(kBooleanTasks, *name))
            task.error("name", "unknown task '" + *name + "'; known tasks: " +
                                   joined(kGaussianTasks) + ", " + joined(kBooleanTasks));
    } else if (!task.entry("name")) {
        task.error("name", "missing required key 'name'");
    }
    const std::string expected = isBooleanTaskName(out.name) ? "boolean" : "gaussian";
    if (auto data = task.text("data")) {
        if (*data != "gaussian" && *data != "boolean")
            task.error("data", "unknown data '" + *data + "'; expected gaussian or boolean");
        else if (*data != expected)
            task.error("data", "task " + out.name + " needs data: " + expected);
    }
    out.data = expected;
    SectionReader curriculum = task.child("curriculum");
    if (!curriculum.present()) {
        task.error("curriculum", "missing section 'curriculum' (dims, points)");
    } else {
        readAxis(curriculum.child("dims"), out.curriculum.dims);
        readAxis(curriculum.child("points"), out.curriculum.points);
        curriculum.warnUnknown();
    }
    task.warnUnknown();
}

void readTraining(SectionReader s, TrainingConfig& t)
{
    auto positive = [&](const char* key, double& out, double lo, double hi, bool loOpen) {
        if (auto v = s.number(key)) {
            if ((loOpen ? *v <= lo : *v < lo) || *v > hi)
                s.error(key, std::string("out of range: ") + std::to_string(*v));
            else
                out = *v;
        }
    };
    const double inf = std::numeric_limits<double>::infinity();
    positive("learning_rate", t.learningRate, 0, inf, true);
    positive("weight_decay", t.weightDecay, 0, inf, false);
    positive("adam_beta1", t.adamBeta1, 0, 0.999999999, false);
    positive("adam_beta2", t.adamBeta2, 0, 0.999999999, false);
    positive("adam_epsilon", t.adamEpsilon, 0, inf, true);
    if (auto v = s.number("max_grad_norm"))
        t.maxGradNorm = *v;  // <= 0 disables clipping
    positive("warmup_ratio", t.warmupRatio, 0, 1, false);
    readInt(s, "max_steps", t.maxSteps, 1, false);
    readInt(s, "logging_steps", t.loggingSteps, 1, false);
    readInt(s, "save_steps", t.saveSteps, 1, false);
    readInt(s, "per_device_train_batch_size", t.batchSize, 1, false);
    SectionReader random = s.child("random_positions");
    if (random.present()) {
        // 0 is off, so that a sweep axis can hold both (--set ...max_position=0,144).
        readInt(random, "max_position", t.randomPositions, 0, true);
        // Every layer tabulates its encoding up to M (RoPE's [M, d] tables, T5's and Sandwich's
        // per-distance rows, GPT-2's positions): 2^20 keeps that within memory.
        if (t.randomPositions > (1 << 20))
            random.error("max_position",
                         std::to_string(t.randomPositions) + " is too large (at most 1048576)");
        random.warnUnknown();
    }
    if (auto v = s.integer("gradient_accumulation_steps"); v && *v != 1)
        s.error("gradient_accumulation_steps", "only 1 is supported");
    // Keys of the reference's HF TrainingArguments that have no effect there either.
    s.ignore({"evaluation_strategy", "eval_gradient_accumulation_steps", "save_strategy",
              "save_total_limit", "metric_for_best_model", "eval_steps",
              "per_device_eval_batch_size"});
    s.warnUnknown();
}

void readPositionScaling(SectionReader scaling, PositionConfig& pos)
{
    if (!scaling.present())
        return;
    pos.explicitScaling = true;
    if (auto type = scaling.text("type")) {
        std::string t = *type;
        if (t == "none" || t == "default")
            t = "rope";
        if (!contains(knownPositionTypes(), t))
            scaling.error("type", "unknown position encoding '" + *type +
                                      "'; known: " + joined(knownPositionTypes()));
        pos.type = t;
    } else {
        scaling.error("type", "missing required key 'type'");
    }
    if (auto f = scaling.number("factor")) {
        if (*f <= 0)
            scaling.error("factor", "must be > 0");
        pos.factor = *f;
    }
    scaling.warnUnknown();
}

Backbone readFamily(SectionReader& model, IssueSink&)
{
    const auto family = model.text("family");
    if (!family) {
        if (!model.entry("family"))
            model.error("family", "missing required key 'family' (Llama2, Mamba or GPT2)");
        return Backbone::Llama;
    }
    if (*family == "Llama2" || *family == "Llama" || *family == "llama")
        return Backbone::Llama;
    if (*family == "Mamba" || *family == "mamba")
        return Backbone::Mamba;
    if (*family == "GPT2" || *family == "gpt2")
        return Backbone::Gpt2;
    model.error("family", "unknown model family '" + *family + "'; known: Llama2, Mamba, GPT2");
    return Backbone::Llama;
}

// model: of a GPT-2 backbone: its own key names, dropouts and head count.
void readGpt2Model(SectionReader& m, ModelConfig& out, IssueSink& sink)
{
    readInt(m, "n_layer", out.numLayers, 1, true);
    readInt(m, "n_head", out.numHeads, 1, true);
    if (m.entry("n_embd")) {
        readInt(m, "n_embd", out.hiddenSize, 1, true);
    } else if (const auto* e = m.entry("n_embed")) {
        readInt(m, "n_embed", out.hiddenSize, 1, true);
        sink.warn(e->keyLocation, m.pathOf("n_embed"),
                  "misspelt GPT-2 key 'n_embed' is honoured as n_embd (the reference ignored "
                  "it and built a 768-wide model)");
    } else {
        out.hiddenSize = 768;
    }
    for (auto [key, field] :
         {std::pair{"resid_pdrop", &out.residDropout}, std::pair{"embd_pdrop", &out.embdDropout},
          std::pair{"attn_pdrop", &out.attnDropout}})
        if (auto v = m.number(key)) {
            if (*v < 0 || *v >= 1)
                m.error(key, "must be in [0, 1)");
            *field = *v;
        }
    m.ignore({"n_positions"});  // = max_length
    if (out.hiddenSize > 0 && out.numHeads > 0 && out.hiddenSize % out.numHeads != 0)
        m.error("n_head", "n_embd " + std::to_string(out.hiddenSize) +
                              " is not divisible by n_head " + std::to_string(out.numHeads));
}

// model: of a Llama backbone: heads, activation, RoPE base, norm epsilon and rope_scaling.
void readLlamaModel(SectionReader& m, ModelConfig& out, PositionConfig& pos)
{
    readInt(m, "num_attention_heads", out.numHeads, 1, true);
    if (auto act = m.text("hidden_act"); act && *act != "silu")
        m.error("hidden_act", "only 'silu' is supported for Llama, got '" + *act + "'");
    if (auto theta = m.number("rope_theta")) {
        if (*theta <= 1)
            m.error("rope_theta", "must be > 1");
        out.ropeTheta = *theta;
    }
    if (auto eps = m.number("rms_norm_eps")) {
        if (*eps <= 0)
            m.error("rms_norm_eps", "must be > 0");
        out.rmsNormEps = *eps;
    }
    readPositionScaling(m.child("rope_scaling"), pos);
    if (out.hiddenSize > 0 && out.numHeads > 0 && out.hiddenSize % out.numHeads != 0)
        m.error("num_attention_heads", "hidden_size " + std::to_string(out.hiddenSize) +
                                           " is not divisible by num_attention_heads " +
                                           std::to_string(out.numHeads));
}

// Refuses a hidden or MLP width too large for the derived sizes to fit an int.
void checkModelWidths(SectionReader& m, const ModelConfig& out)
{
    // An absurd width is refused here, with its key: 4 x hidden_size (the derived MLP width)
    // overflowed an int past 2^29 and the resolved config no longer loaded (a fuzz finding).
    constexpr int kMaxWidth = 1 << 20;
    if (out.hiddenSize > kMaxWidth)
        m.error(out.backbone == Backbone::Gpt2 ? "n_embd" : "hidden_size",
                std::to_string(out.hiddenSize) + " is absurd (at most " +
                    std::to_string(kMaxWidth) + ")");
    if (out.intermediateSize > 4 * kMaxWidth)
        m.error("intermediate_size", std::to_string(out.intermediateSize) + " is absurd (at most " +
                                         std::to_string(4 * kMaxWidth) + ")");
}

void readModel(SectionReader m, ModelConfig& out, PositionConfig& pos, IssueSink& sink)
{
    if (!m.present()) {
        m.error("", "missing section 'model'");
        return;
    }
    out.backbone = readFamily(m, sink);
    out.family = m.text("family").value_or("Llama2");
    out.type = m.text("type").value_or(out.backbone == Backbone::Mamba ? "ssm" : "decoder");
    if (auto lengths = m.numberList("max_length")) {
        for (double v : *lengths)
            if (!(v > 0))
                m.error("max_length", "must be > 0");
            else if (v > kMaxLength && v != kInf)  // positions are int; "inf" = no limit (Mamba)
                m.error("max_length", "must be <= 2147483647 or inf");
        out.maxLengths = *lengths;
    }
    readInt(m, "num_hidden_layers", out.numLayers, 1, out.backbone != Backbone::Gpt2);
    readInt(m, "hidden_size", out.hiddenSize, 1, out.backbone != Backbone::Gpt2);
    if (out.backbone == Backbone::Gpt2) {
        readGpt2Model(m, out, sink);
    } else if (out.backbone == Backbone::Mamba) {
        readInt(m, "state_size", out.stateSize, 1, false);
        out.numHeads = 1;
        m.ignore({"expand", "conv_kernel", "time_step_rank"});
    } else {
        readLlamaModel(m, out, pos);
    }
    readInt(m, "intermediate_size", out.intermediateSize, 1, false);
    checkModelWidths(m, out);
    // Derived keys written into resolved configs; recomputed on load.
    m.ignore({"n_in_dims", "max_position_embeddings", "name"});
    m.warnUnknown();
}

void readPatch(SectionReader p, PositionConfig& pos)
{
    if (!p.present())
        return;
    pos.patchName = p.text("name").value_or("");
    readPositionScaling(p.child("rope_scaling"), pos);
    SectionReader fire = p.child("fire");
    readInt(fire, "mlp_width", pos.fireMlpWidth, 1, false);
    fire.warnUnknown();
    SectionReader t5 = p.child("t5");
    readInt(t5, "num_buckets", pos.t5Buckets, 2, false);
    readInt(t5, "max_distance", pos.t5MaxDistance, 2, false);
    // The log-spaced half of the buckets spans B/2..max_distance: it needs max_distance > B/2.
    if (pos.t5MaxDistance <= pos.t5Buckets / 2)
        t5.error("max_distance",
                 std::to_string(pos.t5MaxDistance) +
                     " is not above num_buckets / 2 = " + std::to_string(pos.t5Buckets / 2) +
                     " (the log-spaced buckets cover num_buckets / 2 .. max_distance)");
    t5.warnUnknown();
    SectionReader sandwich = p.child("sandwich");
    readInt(sandwich, "dim", pos.sandwichDim, 2, false);
    if (pos.sandwichDim % 2 != 0)  // d'/2 sinusoid pairs
        sandwich.error("dim",
                       std::to_string(pos.sandwichDim) + " is odd: Sandwich sums d'/2 cosines");
    else if (pos.sandwichDim > 65536)
        sandwich.error("dim", std::to_string(pos.sandwichDim) + " is absurd (at most 65536)");
    sandwich.warnUnknown();
    SectionReader xpos = p.child("xpos");
    if (auto v = xpos.number("scale_base")) {
        if (!(*v > 0) || *v > 1e9)
            xpos.error("scale_base", "must be > 0 and at most 1e9, got " + std::to_string(*v));
        else
            pos.xposScaleBase = *v;
    }
    xpos.warnUnknown();
    SectionReader cope = p.child("cope");
    readInt(cope, "npos_max", pos.copeMaxPositions, 2, false);
    if (pos.copeMaxPositions > 1 << 20)
        cope.error("npos_max",
                   std::to_string(pos.copeMaxPositions) + " positions is absurd (at most 1048576)");
    if (const auto divide = cope.boolean("divide_position_logits"))
        pos.copeDividePositionLogits = *divide;
    cope.warnUnknown();
    p.warnUnknown();
}

// Derived values of §5.4 for one max_length value.
RunConfig resolveRun(const RunConfig& base, double maxLength, const std::string& source)
{
    RunConfig run = base;
    run.sourceFile = source;
    run.model.maxLength = maxLength;
    run.model.maxLengths = {maxLength};
    run.model.nInDims = run.task.curriculum.dims.end;
    // What was written, before deriving: the studio's draft writes only these back.
    run.model.intermediateSizeGiven = base.model.intermediateSize != 0;
    run.position.factorGiven = base.position.factor.has_value();
    if (run.model.intermediateSize == 0)
        run.model.intermediateSize = 4 * run.model.hiddenSize;
    run.model.maxPositionEmbeddings =
        std::isfinite(maxLength) ? static_cast<int>(std::lround(maxLength)) : 0;
    // GPT-2's learned table must hold every position randomized training draws: that is what
    // lets it learn positions past the training length (Ruoss et al. 2023).
    if (run.model.backbone == Backbone::Gpt2 &&
        run.training.randomPositions > run.model.maxPositionEmbeddings)
        run.model.maxPositionEmbeddings = static_cast<int>(run.training.randomPositions);
    // The reference's FIRE MLP is max_position_embeddings wide (§9.5): under compat: reference
    // the stored config says so, as the model it builds is.
    if (run.compat == CompatMode::Reference && run.position.type == "fire" &&
        run.model.maxPositionEmbeddings > 0)
        run.position.fireMlpWidth = run.model.maxPositionEmbeddings;
    // Factor rule of the reference, recomputed for every max_length value (§9.12).
    if (run.position.explicitScaling && !run.position.factor && std::isfinite(maxLength))
        run.position.factor = maxLength / run.task.curriculum.points.end / 2.0 * 8.0;
    return run;
}

// Randomized positions need an encoding that reads positions, and a range that holds the
// longest training prompt.
void checkRandomPositions(SectionReader training, const RunConfig& c)
{
    const auto m = c.training.randomPositions;
    if (m <= 0)
        return;
    SectionReader random = training.child("random_positions");
    const auto& pe = encodingOf(c);
    if (!pe.readsPositions)
        random.error("max_position",
                     pe.display + " reads no token positions: randomized positions "
                                  "change nothing for it (remove training.random_positions)");
    if (pe.lengthDependent)
        random.error("max_position",
                     pe.display +
                         " rescales its table with each forward's largest position: "
                         "random positions up to " +
                         std::to_string(m) + " would rescale it in training");
    // xPos scales q and k by zeta_0^(+-(M/2)/gamma), ln zeta_0 = ln(0.4/1.4): past e^80 float32
    // overflows.
    if (pe.type == "xpos" && double(m) / 2 / c.position.xposScaleBase * 1.2528 > 80)
        random.error("max_position",
                     "xPos would scale q and k by e^" +
                         std::to_string(int(double(m) / 2 / c.position.xposScaleBase * 1.2528)) +
                         " at position " + std::to_string(m - 1) +
                         ", past float32's range: lower it or raise patch.xpos.scale_base");
    const std::int64_t tokens = 2 * std::int64_t(c.task.curriculum.points.end);
    if (m < tokens)
        random.error("max_position", std::to_string(m) + " is below the longest training prompt, " +
                                         std::to_string(tokens) + " tokens (2 × points.end)");
}

LoadedConfig parseRoot(const config::NodePtr& root, const std::string& source)
{
    IssueSink sink;
    SectionReader top(root.get(), "", sink);
    RunConfig base;
    if (!top.present()) {
        sink.error(root->location, "",
                   "the config must be a mapping with model, task and "
                   "training sections");
        throw ConfigError(sink.allErrors());
    }
    readTask(top.child("task"), base.task);
    readModel(top.child("model"), base.model, base.position, sink);
    readPatch(top.child("patch"), base.position);
    SectionReader training = top.child("training");
    if (!training.present())
        top.error("training", "missing section 'training'");
    readTraining(training, base.training);
    if (auto compat = top.text("compat")) {
        if (*compat == "reference")
            base.compat = CompatMode::Reference;
        else if (*compat != "intended" && *compat != "none")
            top.error("compat", "expected 'reference' or 'intended', got '" + *compat + "'");
    }
    if (auto seed = top.integer("seed")) {
        if (*seed < 0)
            top.error("seed", "must be >= 0");
        base.seed = static_cast<std::uint64_t>(*seed);
    }
    top.entry("wandb");
    top.ignore({"wandb_id", "max_length"});
    top.warnUnknown();
    if (base.model.backbone != Backbone::Llama && base.position.explicitScaling &&
        base.position.type != "rope")
        sink.warn(top.location(), "patch",
                  "position encoding '" + base.position.type +
                      "' applies to Llama only; ignored "
                      "for " +
                      base.model.family);
    if (base.model.backbone != Backbone::Llama)
        base.position = PositionConfig{base.position.patchName, "rope", std::nullopt, false};
    // Rotary encodings turn pairs of a head's dimensions: an odd head width has no partner for
    // its last one (training went NaN at step 0). NoPE, ALiBi and FIRE do not rotate.
    const auto& m = base.model;
    const bool rotary = encodingOf(base).kind == PositionKind::Rotary;
    if (m.backbone == Backbone::Llama && rotary && m.hiddenSize > 0 && m.numHeads > 0 &&
        m.hiddenSize % m.numHeads == 0 && (m.hiddenSize / m.numHeads) % 2 != 0)
        top.child("model").error(
            "num_attention_heads",
            "hidden_size / num_attention_heads = " + std::to_string(m.hiddenSize / m.numHeads) +
                " is odd: " + base.position.type +
                " rotates pairs of a head's dimensions "
                "and needs an even head width");
    checkRandomPositions(top.child("training"), base);
    if (!sink.errors.empty())
        throw ConfigError(sink.allErrors());

    LoadedConfig loaded;
    loaded.warnings = sink.allWarnings();
    std::vector<double> lengths = base.model.maxLengths;
    if (lengths.empty())  // not given: the reference's convention T = 2 * points.end
        lengths = {2.0 * base.task.curriculum.points.end};
    for (double len : lengths)
        loaded.runs.push_back(resolveRun(base, len, source));
    return loaded;
}

}  // namespace

LoadedConfig loadConfigFile(const std::string& path)
{
    return parseRoot(config::loadYamlFile(path), path);
}

LoadedConfig loadConfigText(const std::string& yaml, const std::string& name)
{
    return parseRoot(config::loadYamlText(yaml, name), name);
}

RunConfig storedRunConfig(const std::string& yaml, const std::string& runFile)
{
    LoadedConfig loaded;
    try {
        loaded = loadConfigText(yaml, runFile + ":/config");
    } catch (const ConfigError& e) {
        throw Error(ErrorKind::RunFile,
                    "the config stored in " + runFile +
                        " is invalid (damaged file?): " + e.issues().front().toString(),
                    e.what());
    }
    if (loaded.runs.size() != 1)
        throw Error(ErrorKind::RunFile, "the config stored in " + runFile + " describes " +
                                            std::to_string(loaded.runs.size()) +
                                            " runs instead of one (damaged file?)");
    return loaded.runs.front();
}

LoadedConfig loadConfigTextAt(const std::string& yaml, const std::string& name,
                              const std::string& includeDir)
{
    return parseRoot(config::loadYamlText(yaml, name, includeDir), name);
}

std::vector<std::string> knownTaskNames()
{
    std::vector<std::string> all = kGaussianTasks;
    all.insert(all.end(), kBooleanTasks.begin(), kBooleanTasks.end());
    return all;
}

std::vector<std::string> knownPositionTypes()
{
    std::vector<std::string> types;
    for (const auto& e : encodingTable())
        if (e.backbone == Backbone::Llama)
            types.push_back(e.type);
    return types;
}

bool isBooleanTaskName(const std::string& name) { return contains(kBooleanTasks, name); }

bool isClassificationTaskName(const std::string& name)
{
    return isBooleanTaskName(name) || name == "linear_classification";
}

}  // namespace lengen::engine
