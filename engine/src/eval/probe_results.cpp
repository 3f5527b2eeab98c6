// Reading stored probe results (docs/analysis-format.md, /probes).

#include <filesystem>

#include "io/analysis_store.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/probes.h"

namespace fs = std::filesystem;

namespace lengen::engine {

namespace {

// Every attribute of an object, as doubles where numeric (names ending in _span are pairs).
void readNumbers(hid_t obj, std::map<std::string, double>& values,
                 std::map<std::string, std::pair<double, double>>* spans)
{
    H5O_info_t info;
    H5Oget_info2(obj, &info, H5O_INFO_NUM_ATTRS);
    for (hsize_t i = 0; i < info.num_attrs; ++i) {
        io::H5Handle attr(H5Aopen_by_idx(obj, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT,
                                         H5P_DEFAULT),
                          H5Aclose);
        io::H5Handle type(H5Aget_type(attr.id()), H5Tclose);
        const auto cls = H5Tget_class(type.id());
        if (cls != H5T_FLOAT && cls != H5T_INTEGER)
            continue;
        char name[256] = {};
        H5Aget_name(attr.id(), sizeof name, name);
        io::H5Handle space(H5Aget_space(attr.id()), H5Sclose);
        std::vector<double> v(static_cast<size_t>(H5Sget_simple_extent_npoints(space.id())));
        H5Aread(attr.id(), H5T_NATIVE_DOUBLE, v.data());
        const std::string n = name;
        if (spans && v.size() == 2 && n.size() > 5 && n.compare(n.size() - 5, 5, "_span") == 0)
            (*spans)[n.substr(0, n.size() - 5)] = {v[0], v[1]};
        else if (!v.empty())
            values[n] = v[0];
    }
}

std::vector<float> readFloatsIn(hid_t g, const std::string& name, const std::string& path)
{
    const auto d = io::readDoubles(g, name, path);
    return {d.begin(), d.end()};
}

}  // namespace

std::vector<ProbeGroup> readProbeGroups(const std::string& run)
{
    const auto path = analysisFileFor(run);
    std::vector<ProbeGroup> out;
    if (!fs::exists(path))
        return out;
    auto file = io::openAnalysis(path);
    io::H5Lock lock(io::h5Mutex());
    for (const std::string groupPath : {"duplicated/count_sweep", "duplicated/inst_noise_target",
                                        "duplicated/instruction_position", "serial_position"}) {
        const std::string full = "probes/" + groupPath;
        if (!io::exists(file.id(), "probes") || H5Lexists(file.id(), full.c_str(), H5P_DEFAULT) <= 0) {
            H5Eclear2(H5E_DEFAULT);
            continue;
        }
        auto g = io::openGroup(file.id(), full, path);
        ProbeGroup pg;
        pg.path = groupPath;
        readNumbers(g.id(), pg.params, nullptr);
        pg.classification = pg.params["classification"] != 0;
        pg.model = io::stringAttr(g.id(), "model", path);
        for (const auto& name : io::readOrder(g.id(), path)) {
            ProbeCurve c;
            const auto ec = io::readCurve(g.id(), name, path);
            c.name = name;
            c.stats = ec.stats;
            auto cg = io::openGroup(g.id(), name, path);
            readNumbers(cg.id(), c.values, &c.spans);
            pg.curves.push_back(std::move(c));
        }
        out.push_back(std::move(pg));
    }
    return out;
}

std::vector<AttentionSetting> readAttentionSettings(const std::string& run)
{
    const auto path = analysisFileFor(run);
    std::vector<AttentionSetting> out;
    if (!fs::exists(path))
        return out;
    auto file = io::openAnalysis(path);
    io::H5Lock lock(io::h5Mutex());
    if (!io::exists(file.id(), "probes") || !io::exists(io::openGroup(file.id(), "probes", path).id(), "attention"))
        return out;
    auto att = io::openGroup(file.id(), "probes/attention", path);
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
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<float> readAttentionTile(const std::string& run, const std::string& setting,
                                     int prompt, int layer, int head, int r0, int r1, int c0, int c1)
{
    const auto path = (fs::path(analysisFileFor(run)).parent_path() / "attention_maps.h5").string();
    auto file = io::openAnalysis(path);
    io::H5Lock lock(io::h5Mutex());
    auto ds = io::openDataset(file.id(), setting + "/maps", path);
    const auto dims = io::datasetShape(ds.id());  // [prompts, layers, heads, T, T]
    const auto t = static_cast<int>(dims.at(3));
    if (prompt < 0 || hsize_t(prompt) >= dims[0] || layer < 0 || hsize_t(layer) >= dims[1] ||
        head < 0 || hsize_t(head) >= dims[2] || r0 < 0 || c0 < 0 || r1 > t || c1 > t || r0 >= r1 ||
        c0 >= c1)
        throw Error(ErrorKind::Usage, "attention tile out of range for '" + setting + "'");
    const std::vector<hsize_t> start{hsize_t(prompt), hsize_t(layer), hsize_t(head), hsize_t(r0), hsize_t(c0)};
    const std::vector<hsize_t> count{1, 1, 1, hsize_t(r1 - r0), hsize_t(c1 - c0)};
    io::H5Handle space(H5Dget_space(ds.id()), H5Sclose);
    H5Sselect_hyperslab(space.id(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
    io::H5Handle mem(H5Screate_simple(5, count.data(), nullptr), H5Sclose);
    std::vector<float> out(static_cast<size_t>((r1 - r0) * (c1 - c0)));
    if (H5Dread(ds.id(), H5T_NATIVE_FLOAT, mem.id(), space.id(), H5P_DEFAULT, out.data()) < 0)
        io::throwH5(ErrorKind::RunFile, "cannot read the attention maps", path);
    return out;
}

}  // namespace lengen::engine
