// The table of position encodings and backbones (lengen/engine/encodings.h): one row each,
// read by the config reader, sweeps, display names, the studio's form and interventions.

#include "lengen/engine/encodings.h"

#include <algorithm>
#include <cstdio>

namespace lengen::engine {

namespace {

std::string number(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::vector<EncodingInfo> makeTable()
{
    using K = PositionKind;
    const std::vector<std::string> scaled = {"patch.rope_scaling.factor", "model.max_length",
                                             "model.rope_theta"};
    std::vector<EncodingInfo> t;
    t.reserve(20);  // rows are amended through references right after they are added
    auto row = [&](std::string name, std::string type, std::string display, K kind,
                   std::vector<std::string> keys, std::string summary) -> EncodingInfo& {
        EncodingInfo e;
        e.name = std::move(name);
        e.type = std::move(type);
        e.display = std::move(display);
        e.kind = kind;
        e.keys = std::move(keys);
        e.summary = std::move(summary);
        t.push_back(std::move(e));
        return t.back();
    };
    row("rope", "rope", "RoPE", K::Rotary, {"model.rope_theta"},
        "rotary: q and k turned by position × θ_i (Su et al. 2021)")
        .paperCase = true;
    row("nope", "nope", "NoPE", K::None, {},
        "no position signal; the causal mask alone orders tokens (Kazemnejad et al. 2023)")
        .referencePatch = "nope";
    t.back().readsPositions = false;
    t.back().paperCase = true;
    auto& alibi = row("alibi", "alibi", "ALiBi", K::Bias, {},
                      "logit bias -m_h (i - j), slopes 2^(-8h/H) (Press et al. 2022)");
    alibi.referencePatch = "alibi";
    alibi.paperCase = true;
    alibi.derived = [](const RunConfig& c) {
        const auto h = std::to_string(c.model.numHeads);
        return std::vector<std::string>{"ALiBi slopes 2^(-8·h/" + h + "), h = 1…" + h};
    };
    auto& fire =
        row("fire", "fire", "FIRE", K::Bias, {"patch.fire.mlp_width", "model.max_length"},
            "learned bias of the progressive distance log(c(i-j)+1)/log(c max(L,i)+1) by a "
            "small MLP (Li et al. 2024)");
    fire.referencePatch = "fire";
    fire.paperCase = true;
    fire.layerParameters =
        [](const RunConfig& c) {  // Linear(1, w), Linear(w, heads), c, L, multiplier
            const double w = c.position.fireMlpWidth;
            return 2 * w + (w + 1) * c.model.numHeads + 3;
        };
    fire.derived = [](const RunConfig& c) {
        return std::vector<std::string>{"FIRE MLP width " +
                                        std::to_string(c.position.fireMlpWidth)};
    };
    auto& t5 =
        row("t5", "t5", "T5 bias", K::Bias, {"patch.t5.num_buckets", "patch.t5.max_distance"},
            "learned bias per head and bucket of the distance: exact below B/2, log-spaced "
            "up to max_distance (Raffel et al. 2020)");
    t5.inReference = false;
    t5.layerParameters = [](const RunConfig& c) {
        return double(c.position.t5Buckets) * c.model.numHeads;
    };
    t5.derived = [](const RunConfig& c) {
        const auto& p = c.position;
        return std::vector<std::string>{"T5 buckets " + std::to_string(p.t5Buckets) +
                                        " (exact below " + std::to_string(p.t5Buckets / 2) +
                                        "), max_distance " + std::to_string(p.t5MaxDistance)};
    };
    const auto kerpleParameters = [](const RunConfig& c) {
        return 2.0 * c.model.numHeads;
    };  // p_h, a_h
    auto& kerpleLog = row("kerple_log", "kerple_log", "KERPLE (log)", K::Bias, {},
                          "learned bias -p_h ln(1 + a_h (i - j)) per head (Chi et al. 2022)");
    kerpleLog.inReference = false;
    kerpleLog.layerParameters = kerpleParameters;
    auto& kerplePower =
        row("kerple_power", "kerple_power", "KERPLE (power)", K::Bias, {},
            "learned bias -a_h (i - j)^p_h per head, 0 < p_h <= 2 (Chi et al. 2022)");
    kerplePower.inReference = false;
    kerplePower.layerParameters = kerpleParameters;
    auto& sandwich = row("sandwich", "sandwich", "Sandwich", K::Bias, {"patch.sandwich.dim"},
                         "fixed bias from the inner product of sinusoidal positions, "
                         "(sum_k cos((i-j)/10000^(2k/d')) - d'/2) H/(8h) (Chi et al. 2023)");
    sandwich.inReference = false;
    sandwich.derived = [](const RunConfig& c) {
        const auto h = std::to_string(c.model.numHeads);
        return std::vector<std::string>{"Sandwich d' " + std::to_string(c.position.sandwichDim) +
                                        ", head scales " + h + "/(8·h), h = 1…" + h};
    };
    auto& cope =
        row("cope", "cope", "CoPE", K::Bias,
            {"patch.cope.npos_max", "patch.cope.divide_position_logits"},
            "contextual positions: sigmoid gates on q.k counted from each key to the query, "
            "a learned embedding interpolated there (Golovneva et al. 2024)");
    cope.inReference = false;
    cope.readsPositions = false;
    // The fused kernel takes a bias fixed by positions; CoPE's is computed from q and k.
    cope.fusedCpu = false;
    cope.pairActivations = 6;
    cope.layerParameters = [](const RunConfig& c) {  // one [head_dim, npos_max] table per layer
        return double(c.model.hiddenSize / std::max(1, c.model.numHeads)) *
               c.position.copeMaxPositions;
    };
    cope.derived = [](const RunConfig& c) {
        const int n = c.position.copeMaxPositions;
        return std::vector<std::string>{
            "CoPE positions 0…" + std::to_string(n - 1) + " (npos_max " + std::to_string(n) + ")" +
            (c.position.copeDividePositionLogits ? ", position logits / √d" : "")};
    };
    cope.refusedInterventions = {
        {"lambda", "lambda caps a key's distance; CoPE's positions are counted from the content"},
        {"longheads",
         "longheads re-positions chunks by token; CoPE counts positions from the content"}};
    auto& xpos =
        row("xpos", "xpos", "xPos", K::Rotary, {"model.rope_theta", "patch.xpos.scale_base"},
            "RoPE with an exponential decay: q scaled by zeta_i^(n/gamma), k by zeta_i^(-m/gamma), "
            "zeta_i = (2i/d + 0.4)/1.4 (Sun et al. 2023)");
    xpos.inReference = false;
    xpos.derived = [](const RunConfig& c) {
        return std::vector<std::string>{"xPos ζ_i = (2i/d + 0.4)/1.4, scale_base γ = " +
                                        number(c.position.xposScaleBase)};
    };
    xpos.refusedInterventions = {
        {"longheads",
         "longheads re-positions keys through the rotary table alone; xPos's decay would be lost"}};
    row("yarn", "yarn", "YaRN", K::Rotary, scaled,
        "RoPE with YaRN's frequency ramp and temperature from the first step (Peng et al. 2023)")
        .usesFactor = true;
    t.back().referencePatch = "yarn";
    auto& dynYarn =
        row("dynamic_yarn", "dynamic-yarn", "Dynamic YaRN", K::Rotary, scaled,
            "YaRN applied only to forwards longer than factor × max_position_embeddings");
    dynYarn.usesFactor = dynYarn.lengthDependent = true;
    dynYarn.referencePatch = "yarn";
    row("pi", "linear", "PI", K::Rotary, {"patch.rope_scaling.factor", "model.rope_theta"},
        "position interpolation: RoPE of position / factor (Chen et al. 2023)")
        .usesFactor = true;
    auto& dynNtk =
        row("dynamic_ntk", "dynamic", "Dynamic NTK", K::Rotary, scaled,
            "RoPE base rescaled for forwards longer than max_position_embeddings (bloc97 2023)");
    dynNtk.usesFactor = dynNtk.lengthDependent = true;
    row("mamba", "", "Mamba", K::Recurrent, {"model.state_size"},
        "selective state-space backbone, no attention (Gu and Dao 2023)")
        .backbone = Backbone::Mamba;
    t.back().readsPositions = false;
    row("gpt2", "", "GPT-2", K::Learned, {"model.max_length", "model.*_pdrop"},
        "GPT-2 with learned absolute positions for max_length tokens (Radford et al. 2019)")
        .backbone = Backbone::Gpt2;
    return t;
}

}  // namespace

const std::vector<EncodingInfo>& encodingTable()
{
    static const std::vector<EncodingInfo> table = makeTable();
    return table;
}

const EncodingInfo* findEncoding(const std::string& name)
{
    const std::string key = name == "gpt" ? "gpt2" : name;
    for (const auto& e : encodingTable())
        if (e.name == key || (!e.type.empty() && e.type == key))
            return &e;
    return nullptr;
}

const EncodingInfo& encodingOf(const RunConfig& config)
{
    const auto& table = encodingTable();
    for (const auto& e : table)
        if (e.backbone == config.model.backbone &&
            (e.backbone != Backbone::Llama || e.type == config.position.type))
            return e;
    return table.front();  // unreachable for a config the reader accepted
}

std::vector<std::string> derivedSettings(const RunConfig& c)
{
    std::vector<std::string> parts;
    const auto& p = c.position;
    const auto& e = encodingOf(c);
    if (c.model.backbone == Backbone::Llama) {
        if (p.explicitScaling && p.factor && e.usesFactor)
            parts.push_back(p.type + " factor " + number(*p.factor) +
                            (p.factorGiven ? "" : " (max_length / points.end / 2 × 8)"));
        if (e.derived)
            for (auto& part : e.derived(c))
                parts.push_back(std::move(part));
        if (e.kind == PositionKind::Rotary)
            parts.push_back("rope θ " + number(c.model.ropeTheta));
        parts.push_back("intermediate size " + std::to_string(c.model.intermediateSize));
    }
    if (c.model.maxPositionEmbeddings > 0)
        parts.push_back("max_position_embeddings " + std::to_string(c.model.maxPositionEmbeddings));
    parts.push_back("n_in_dims " + std::to_string(c.model.nInDims));
    if (c.training.randomPositions > 0)
        parts.push_back("training positions: a sorted random " +
                        std::to_string(2 * c.task.curriculum.points.end) + " of 0…" +
                        std::to_string(c.training.randomPositions - 1) + " per step");
    return parts;
}

}  // namespace lengen::engine
