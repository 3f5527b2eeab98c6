#include "lengen/engine/config_edit.h"
#include "lengen/engine/encodings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

namespace lengen::engine {

void setPositionEncoding(RunConfig& c, const std::string& type)
{
    const auto kept = c.position;  // each encoding's own keys stay what they were
    c.position = PositionConfig{};
    c.position.type = type;
    c.position.fireMlpWidth = kept.fireMlpWidth;
    c.position.t5Buckets = kept.t5Buckets;
    c.position.t5MaxDistance = kept.t5MaxDistance;
    c.position.sandwichDim = kept.sandwichDim;
    c.position.xposScaleBase = kept.xposScaleBase;
    c.position.copeMaxPositions = kept.copeMaxPositions;
    if (type != "rope") {
        c.position.patchName = type;
        c.position.explicitScaling = true;
    }
}

void setBackbone(RunConfig& c, Backbone b)
{
    if (c.model.backbone == b)
        return;
    auto& m = c.model;
    const bool fromMamba = m.backbone == Backbone::Mamba;
    m.backbone = b;
    m.family = b == Backbone::Llama ? "Llama2" : b == Backbone::Mamba ? "Mamba" : "GPT2";
    m.type = b == Backbone::Mamba ? "ssm" : "decoder";
    setPositionEncoding(c, "rope");  // only Llama reads a patch
    if (b == Backbone::Mamba) {
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
    RunConfig c;
    c.position.type = type;
    const std::string shown = c.peDisplayName();
    std::string lower = shown;
    for (auto& ch : lower)
        ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return lower == type ? shown : shown + " (" + type + ")";
}

void setTask(RunConfig& c, const std::string& name)
{
    c.task.name = name;
    c.task.data = isBooleanTaskName(name) ? "boolean" : "gaussian";
}

std::vector<std::string> sweepPeNames()
{
    std::vector<std::string> names;
    for (const auto& e : encodingTable())
        names.push_back(e.name);
    return names;
}

bool applyPeName(RunConfig& c, const std::string& pe)
{
    const EncodingInfo* e = findEncoding(pe);
    if (!e)
        return false;
    setBackbone(c, e->backbone);
    if (e->backbone == Backbone::Llama)
        setPositionEncoding(c, e->type);
    return true;
}

}  // namespace lengen::engine
