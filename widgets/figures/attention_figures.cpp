// The attention figures of a run: the reference's per-head and per-layer curves, a tile of a
// full map (one head or the mean over heads), one query's row of a map, and the layers × heads
// thumbnails the studio's grid draws. Layers, heads and prompts count from 0 everywhere, as
// the stored arrays and `lengen export --layer/--head/--prompt` do.

#include <algorithm>
#include <cmath>

#include "figures_internal.h"
#include "lengen/engine/errors.h"

namespace lengen::figures {

using engine::Error;
using engine::ErrorKind;
using plots::FigureSpec;
using plots::Series;

namespace {

const engine::AttentionSetting& settingNamed(const std::string& run, const std::string& name,
                                             std::vector<engine::AttentionSetting>& keep)
{
    keep = engine::readAttentionSettings(run);
    for (const auto& s : keep)
        if (s.name == name && s.mapPrompts > 0)
            return s;
    throw Error(ErrorKind::Usage, "no attention map '" + name + "' stored for this run");
}

void checkSelection(const engine::AttentionSetting& s, const MapSelection& m)
{
    if (m.prompt < 0 || m.prompt >= s.mapPrompts || m.layer < -1 || m.layer >= s.layers ||
        m.head < -1 || m.head >= s.heads)
        throw Error(ErrorKind::Usage,
                    "attention map '" + s.name + "': prompt " + std::to_string(m.prompt) +
                        ", layer " + std::to_string(m.layer) + ", head " + std::to_string(m.head) +
                        " out of range (" + std::to_string(s.mapPrompts) + " prompts, " +
                        std::to_string(s.layers) + " layers, " + std::to_string(s.heads) +
                        " heads, counted from 0)");
}

// Rows [r0, r1) x columns [c0, c1) of one head's map, or the mean over heads (head -1).
std::vector<float> readTile(const std::string& run, const engine::AttentionSetting& s, int prompt,
                            int layer, int head, int r0, int r1, int c0, int c1,
                            const std::string& intervention = "")
{
    if (head >= 0)
        return engine::readAttentionTile(run, s.name, prompt, layer, head, r0, r1, c0, c1,
                                         intervention);
    std::vector<float> sum;
    for (int h = 0; h < s.heads; ++h) {
        const auto t =
            engine::readAttentionTile(run, s.name, prompt, layer, h, r0, r1, c0, c1, intervention);
        if (sum.empty())
            sum.assign(t.size(), 0.f);
        for (size_t i = 0; i < t.size(); ++i)
            sum[i] += t[i];
    }
    for (auto& v : sum)
        v /= float(std::max(s.heads, 1));
    return sum;
}

std::string headName(int head)
{
    return head < 0 ? "mean of heads" : "head " + std::to_string(head);
}

}  // namespace

FigureSpec attentionFigure(const engine::AttentionSetting& s, const RunFacts& rf)
{
    // Last layer: the query's weight on each x token (even tokens), one curve per head.
    FigureSpec f;
    f.title = rf.config.task.name + " - " + rf.info.positionEncoding + " - layer " +
              std::to_string(s.layers - 1) + " - " + s.name + " (" + std::to_string(s.tokens) +
              " tokens)";
    const size_t t = size_t(s.tokens), l = size_t(s.layers - 1);
    for (int h = 0; h < s.heads; ++h) {
        Series c;
        c.name = "Head " + std::to_string(h);
        for (size_t k = 0; k < t; k += 2) {
            const size_t at = (l * size_t(s.heads) + size_t(h)) * t + k;
            c.x.push_back(double(k / 2));
            c.y.push_back(s.lastQueryMean[at]);
            c.bandLow.push_back(s.lastQueryLow[at]);
            c.bandHigh.push_back(s.lastQueryHigh[at]);
        }
        f.series.push_back(c);
    }
    f.x.label = "Token position (x_i)";
    f.y.label = "Attention weight";
    // Between the last x the run trained on and the first beyond (issue 52: every figure marks
    // what the run reached), where the prompt goes beyond it.
    if (const int trained = rf.trainedPoints(); int(t / 2) > trained)
        f.vlines.push_back({double(trained) - 0.5, "train length"});
    f.widthInches = 6;
    f.heightInches = 4;
    return f;
}

FigureSpec averageAttentionFigure(const engine::AttentionSetting& s, const RunFacts& rf)
{
    FigureSpec f;
    f.title = rf.config.task.name + " - " + rf.info.positionEncoding +
              " - attention on y tokens (" + std::to_string(s.points) + " points)";
    const size_t n = size_t(s.points);
    for (int l = 0; l < s.layers; ++l) {
        Series c;
        c.name = "Layer " + std::to_string(l);
        c.x = positions(n, n > 1 ? 1.0 / double(n - 1) : 1.0);
        c.y.assign(s.yAttention.begin() + long(size_t(l) * n),
                   s.yAttention.begin() + long(size_t(l + 1) * n));
        f.series.push_back(c);
    }
    f.x.label = "Normalized token position";
    f.y.label = "Average attention weight";
    if (const int trained = rf.trainedPoints(); int(n) > trained && n > 1)  // the last y trained on
        f.vlines.push_back({double(trained - 1) / double(n - 1), "train length"});
    f.legend = plots::LegendPlace::OutsideRight;
    f.widthInches = 9;
    return f;
}

plots::HeatmapSpec mapFigure(const std::string& run, const engine::AttentionSetting& s,
                             const MapSelection& m, const RunFacts& rf)
{
    checkSelection(s, m);
    const int layer = m.layer < 0 ? s.layers - 1 : m.layer;
    const int r1 = m.r1 < 0 ? s.tokens : m.r1, c1 = m.c1 < 0 ? s.tokens : m.c1;
    plots::HeatmapSpec h;
    h.title = rf.info.positionEncoding + (m.intervention.empty() ? "" : " + " + m.intervention) +
              " - " + s.name + " - prompt " + std::to_string(m.prompt) + ", layer " +
              std::to_string(layer) + ", " + headName(m.head);
    h.values = readTile(run, s, m.prompt, layer, m.head, m.r0, r1, m.c0, c1, m.intervention);
    h.rows = r1 - m.r0;
    h.cols = c1 - m.c0;
    h.firstRow = m.r0;
    h.firstCol = m.c0;
    // The causal mask is not data: blank, not "0". Nor is what an intervention masks (a
    // Λ-mask's middle, a window's far keys): softmax gives those keys exactly 0, which no key
    // the model may see reaches in float32 at these lengths, so a 0 under an intervention is a
    // masked cell and is drawn like the causal triangle.
    const bool edited = !m.intervention.empty();
    for (int r = 0; r < h.rows; ++r)
        for (int c = 0; c < h.cols; ++c) {
            auto& v = h.values[size_t(r) * size_t(h.cols) + size_t(c)];
            if (m.c0 + c > m.r0 + r || (edited && v == 0.f))
                v = NAN;
        }
    h.tickLabel = tokenLabel;
    h.boundary = 2 * rf.trainedPoints();  // tokens of a training prompt (x, y per point)
    h.boundaryLabel = "train length";
    // Weights spread over hundreds of keys sit near 1/T: a log colour scale shows where they go.
    h.logScale = true;
    h.zMin = 1e-4;
    h.zMax = 1.0;
    return h;
}

FigureSpec attentionRowFigure(const std::string& run, const std::string& setting,
                              const MapSelection& m, int query)
{
    std::vector<engine::AttentionSetting> all;
    const auto& s = settingNamed(run, setting, all);
    checkSelection(s, m);
    if (query < 0 || query >= s.tokens)
        throw Error(ErrorKind::Usage, "attention map '" + setting + "': query " +
                                          std::to_string(query) + " out of range (0.." +
                                          std::to_string(s.tokens - 1) + ")");
    const auto rf = facts(run);
    const int layer = m.layer < 0 ? s.layers - 1 : m.layer;
    // [1, query + 1]: the keys this query may see (the causal mask hides the rest).
    const auto row =
        readTile(run, s, m.prompt, layer, m.head, query, query + 1, 0, query + 1, m.intervention);
    const bool edited = !m.intervention.empty();  // its masked keys (exactly 0) leave gaps
    FigureSpec f;
    f.title = rf.info.positionEncoding + " - " + s.name + " - query " + std::to_string(query) +
              " (" + tokenLabel(query) + "), prompt " + std::to_string(m.prompt) + ", layer " +
              std::to_string(layer) + ", " + headName(m.head);
    Series xs, ys;  // an x token's and a y token's keys: where the weight goes differs by kind
    xs.name = "keys x_i";
    ys.name = "keys y_i";
    for (int k = 0; k <= query && size_t(k) < row.size(); ++k) {
        auto& to = k % 2 ? ys : xs;
        to.x.push_back(k);
        to.y.push_back(edited && row[size_t(k)] == 0.f ? NAN : row[size_t(k)]);
    }
    xs.color = "#0173B2";
    ys.color = "#DE8F05";
    if (edited) {
        xs.name += " · " + m.intervention;
        ys.name += " · " + m.intervention;
        xs.dashed = ys.dashed = true;
        // Λ-mask's global keys sit alone between gaps (the masked middle): dots show them.
        xs.points = ys.points = true;
    }
    f.series = {xs, ys};
    f.x.label = "key token";
    f.y.label = "attention weight";
    f.x.min = -1;
    f.x.max = s.tokens;
    f.vlines.push_back({double(2 * rf.trainedPoints()) - 0.5, "train length"});
    // Beside the axes: inside, the legend covered the first keys, where the weight often is.
    f.legend = plots::LegendPlace::OutsideRight;
    f.widthInches = 6;
    f.heightInches = 2.5;
    return f;
}

MapThumbnails mapThumbnails(const std::string& run, const std::string& setting, int prompt,
                            int size)
{
    std::vector<engine::AttentionSetting> all;
    const auto& s = settingNamed(run, setting, all);
    MapSelection m;
    m.prompt = prompt;
    checkSelection(s, m);
    MapThumbnails out;
    out.layers = s.layers;
    out.heads = s.heads;
    out.tokens = s.tokens;
    out.size = std::clamp(std::min(size, s.tokens), 1, 4096);
    const int n = out.size, t = s.tokens;
    // Cell (i, j) of a thumbnail is the max over the block of the map it covers: a one-token
    // stripe (a previous-token head) stays visible at any size, where a mean would fade it.
    auto pool = [&](const std::vector<float>& map) {
        std::vector<float> th(size_t(n) * size_t(n), NAN);
        for (int r = 0; r < t; ++r)
            for (int c = 0; c <= r; ++c) {
                float& cell = th[size_t(r * n / t) * size_t(n) + size_t(c * n / t)];
                const float v = map[size_t(r) * size_t(t) + size_t(c)];
                cell = std::isnan(cell) ? v : std::max(cell, v);
            }
        return th;
    };
    for (int l = 0; l < s.layers; ++l) {
        std::vector<float> mean(size_t(t) * size_t(t), 0.f);
        for (int h = 0; h < s.heads; ++h) {
            const auto map = engine::readAttentionTile(run, s.name, prompt, l, h, 0, t, 0, t);
            for (size_t i = 0; i < map.size(); ++i)
                mean[i] += map[i] / float(s.heads);
            out.maps.push_back(pool(map));
        }
        out.maps.push_back(pool(mean));
    }
    return out;
}

}  // namespace lengen::figures
