// Reading stored probe results (docs/analysis-format.md, /probes).

#include <cctype>
#include <filesystem>

#include "io/analysis_store.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/probe_records.h"

namespace fs = std::filesystem;

namespace lengen::engine {

namespace {

// Every attribute of an object, as doubles where numeric (names ending in _span are pairs).
void readNumbers(hid_t obj, std::map<std::string, double>& values,
                 std::map<std::string, std::pair<double, double>>* spans, const std::string& path)
{
    for (const auto& [n, v] : io::numericAttributes(obj, path)) {
        if (spans && v.size() == 2 && n.size() > 5 && n.compare(n.size() - 5, 5, "_span") == 0)
            (*spans)[n.substr(0, n.size() - 5)] = {v[0], v[1]};
        else if (!v.empty())
            values[n] = v[0];
    }
}

// Figures index the curve with its spans and print the target trio together: a damaged file
// must fail here, with its name, not as an out-of-range index later.
void checkCurve(const ProbeCurve& c, const std::string& where, const std::string& path)
{
    const double length = double(c.stats.mean.size());
    for (const auto& [mark, span] : c.spans)
        if (!(span.first >= 0 && span.first <= span.second && span.second <= length))
            throw Error(ErrorKind::RunFile, "'" + where + "' in " + path + ": the " + mark +
                                                "_span attribute lies outside the curve "
                                                "(damaged file)");
    const int trio = int(c.values.count("target_mean")) + int(c.values.count("target_low")) +
                     int(c.values.count("target_high"));
    if (trio != 0 && trio != 3)
        throw Error(ErrorKind::RunFile, "'" + where + "' in " + path +
                                            " has only part of target_mean, target_low, "
                                            "target_high (damaged file)");
}

std::vector<float> readFloatsIn(hid_t g, const std::string& name, const std::string& path)
{
    const auto d = io::readDoubles(g, name, path);
    return {d.begin(), d.end()};
}

}  // namespace

std::string probeRoot(const std::string& intervention)
{
    return intervention.empty() || intervention == "none" ? "probes"
                                                          : "intervention_probes/" + intervention;
}

std::string attentionMapsName(const std::string& intervention)
{
    if (intervention.empty() || intervention == "none")
        return "attention_maps.h5";
    std::string safe = intervention;
    for (auto& c : safe)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '=' && c != '.' && c != '-' &&
            c != '_')
            c = '_';
    return "attention_maps." + safe + ".h5";
}

std::vector<ProbeGroup> readProbeGroups(const std::string& run, const std::string& intervention)
{
    const auto root = probeRoot(intervention);
    const auto path = analysisFileFor(run);
    std::vector<ProbeGroup> out;
    if (!fs::exists(path))
        return out;
    auto file = io::openAnalysis(path);
    io::H5Lock lock(io::h5Mutex());
    for (const std::string groupPath : {"duplicated/count_sweep", "duplicated/inst_noise_target",
                                        "duplicated/instruction_position", "serial_position"}) {
        const std::string full = root + "/" + groupPath;
        if (!io::exists(file.id(), root) || !io::exists(file.id(), full))
            continue;
        auto g = io::openGroup(file.id(), full, path);
        ProbeGroup pg;
        pg.path = groupPath;
        readNumbers(g.id(), pg.params, nullptr, path);
        pg.classification = pg.params["classification"] != 0;
        pg.model = io::stringAttr(g.id(), "model", path);
        for (const auto& name : io::readOrder(g.id(), path)) {
            ProbeCurve c;
            const auto ec = io::readCurve(g.id(), name, path);
            c.name = name;
            c.stats = ec.stats;
            auto cg = io::openGroup(g.id(), name, path);
            readNumbers(cg.id(), c.values, &c.spans, path);
            checkCurve(c, full + "/" + name, path);
            pg.curves.push_back(std::move(c));
        }
        out.push_back(std::move(pg));
    }
    io::TrainedLength trained(run);  // probes stored before they recorded it (issue 52)
    for (auto& pg : out)
        if (!pg.params.count("trained_points"))
            pg.params["trained_points"] = trained.at(std::int64_t(pg.params["checkpoint_step"]),
                                                     int(pg.params["train_points"]));
    return out;
}

std::vector<AttentionSetting> readAttentionSettings(const std::string& run,
                                                    const std::string& intervention)
{
    const auto root = probeRoot(intervention);
    const auto path = analysisFileFor(run);
    std::vector<AttentionSetting> out;
    if (!fs::exists(path))
        return out;
    auto file = io::openAnalysis(path);
    io::H5Lock lock(io::h5Mutex());
    if (!io::exists(file.id(), root) || !io::exists(file.id(), root + "/attention"))
        return out;
    auto att = io::openGroup(file.id(), root + "/attention", path);
    for (const auto& name : io::memberNames(att.id())) {
        auto g = io::openGroup(att.id(), name, path);
        AttentionSetting s;
        s.name = name;
        s.points = static_cast<int>(io::intAttr(g.id(), "points", 0, path));
        s.tokens = static_cast<int>(io::intAttr(g.id(), "tokens", 0, path));
        s.layers = static_cast<int>(io::intAttr(g.id(), "layers", 0, path));
        s.heads = static_cast<int>(io::intAttr(g.id(), "heads", 0, path));
        s.query = static_cast<int>(io::intAttr(g.id(), "query", 0, path));
        s.mapPrompts = static_cast<int>(io::intAttr(g.id(), "map_prompts", 0, path));
        s.lastQueryMean = readFloatsIn(g.id(), "last_query_mean", path);
        s.lastQueryLow = readFloatsIn(g.id(), "last_query_low", path);
        s.lastQueryHigh = readFloatsIn(g.id(), "last_query_high", path);
        s.yAttention = readFloatsIn(g.id(), "y_attention", path);
        // Views index these arrays by [layer, head, token]: sizes must agree with the counts.
        const double cells = double(s.layers) * s.heads * s.tokens;
        const bool sane = s.layers > 0 && s.heads > 0 && s.points > 0 && s.tokens == 2 * s.points &&
                          s.query >= 0 && s.query < s.tokens && s.mapPrompts >= 0 &&
                          double(s.lastQueryMean.size()) == cells &&
                          s.lastQueryLow.size() == s.lastQueryMean.size() &&
                          s.lastQueryHigh.size() == s.lastQueryMean.size() &&
                          double(s.yAttention.size()) == double(s.layers) * s.points;
        if (!sane)
            throw Error(ErrorKind::RunFile, "attention setting '" + name + "' in " + path +
                                                ": its sizes (points, tokens, layers, heads, "
                                                "query) do not match its arrays (damaged file)");
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<float> readAttentionTile(const std::string& run, const std::string& setting, int prompt,
                                     int layer, int head, int r0, int r1, int c0, int c1,
                                     const std::string& intervention)
{
    const auto path =
        (fs::path(analysisFileFor(run)).parent_path() / attentionMapsName(intervention)).string();
    auto file = io::openAnalysis(path);
    io::H5Lock lock(io::h5Mutex());
    auto ds = io::openDataset(file.id(), setting + "/maps", path);
    const auto dims = io::shapeOf(ds.id(), 5, path);  // [prompts, layers, heads, T, T]
    // Callers check the tile against the setting's counts (readAttentionSettings), so a tile
    // outside the stored array means the array's shape is damaged: exit 3 naming the file.
    if (r0 < 0 || c0 < 0 || r0 >= r1 || c0 >= c1)
        throw Error(ErrorKind::Usage, "attention tile out of range for '" + setting + "'");
    const auto inside = [](int i, hsize_t n) { return i >= 0 && hsize_t(i) < n; };
    if (dims[3] != dims[4] || !inside(prompt, dims[0]) || !inside(layer, dims[1]) ||
        !inside(head, dims[2]) || hsize_t(r1) > dims[3] || hsize_t(c1) > dims[4])
        throw Error(ErrorKind::RunFile,
                    "dataset '" + setting + "/maps' in " + path + " has shape [" +
                        std::to_string(dims[0]) + ", " + std::to_string(dims[1]) + ", " +
                        std::to_string(dims[2]) + ", " + std::to_string(dims[3]) + ", " +
                        std::to_string(dims[4]) +
                        "], which does not hold the maps its run's "
                        "analysis.h5 describes (damaged file)");
    const std::vector<hsize_t> start{hsize_t(prompt), hsize_t(layer), hsize_t(head), hsize_t(r0),
                                     hsize_t(c0)};
    const std::vector<hsize_t> count{1, 1, 1, hsize_t(r1 - r0), hsize_t(c1 - c0)};
    std::vector<float> out(static_cast<size_t>((r1 - r0) * (c1 - c0)));
    io::readBlock(ds.id(), H5T_NATIVE_FLOAT, start, count, out.data(), path);
    return out;
}

}  // namespace lengen::engine
