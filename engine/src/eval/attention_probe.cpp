// The attention probe (reference §7, with its defects fixed: any head count, nothing
// materialised that is not stored). Per setting (prompt length), one forward per micro-batch
// keeps only the last x-token query's row of every layer; a few prompts also keep their full
// maps, stored float16 and chunked in attention_maps.h5 so a heatmap reads one tile at a time.

#include <filesystem>
#include <functional>

#include "data/tasks.h"
#include "eval/eval_methods.h"
#include "eval/probe_common.h"
#include "eval/probe_layouts.h"
#include "eval/statistics.h"

namespace fs = std::filesystem;

namespace lengen::engine::eval {

namespace {

constexpr hsize_t kTile = 128;  // map chunk edge: a 128 x 128 float16 tile is 32 KiB

using Setting = AttentionSetting;

std::vector<float> floats(const std::vector<double>& v) { return {v.begin(), v.end()}; }

void writeFloats(hid_t loc, const std::string& name, const std::vector<float>& values,
                 const std::vector<hsize_t>& dims, const std::string& path)
{
    auto ds = io::createDataset(loc, name, H5T_IEEE_F32LE, dims, path);
    io::writeAll(ds.id(), H5T_NATIVE_FLOAT, values.data(), values.size(), path);
}

// Full maps [prompts, layers, heads, T, T] of the first `count` prompts of the setting.
// Where prompt p of xs/ys is read: random_positions' draw for it, or undefined (0..T-1).
using PositionsOf = std::function<torch::Tensor(std::int64_t p)>;

void storeMaps(ProbeContext& ctx, const model::Intervention* edit, const PositionsOf& positionsOf,
               io::AnalysisWriter& maps, const Setting& s, const torch::Tensor& xs,
               const torch::Tensor& ys, int count)
{
    const auto& cfg = ctx.run.config;
    const hsize_t t = static_cast<hsize_t>(2 * xs.size(1)), layers = cfg.model.numLayers,
                  heads = cfg.model.numHeads;
    io::H5Lock lock(io::h5Mutex());
    auto g = maps.group(s.name, true);
    const std::vector<hsize_t> dims{hsize_t(count), layers, heads, t, t};
    const std::vector<hsize_t> chunk{1, 1, 1, std::min(t, kTile), std::min(t, kTile)};
    // float16, deflated: the causal upper triangle is zeros (~2x smaller).
    const auto half = io::halfType();
    auto ds = io::createChunkedDataset(g.id(), "maps", half.id(), dims, chunk, maps.path());
    const auto plan = planForward(cfg, 1, static_cast<std::int64_t>(t), ctx.budgetBytes);
    for (int p = 0; p < count; ++p) {
        torch::NoGradGuard noGrad;
        model::ForwardOptions opt;
        opt.returnAttention = true;
        opt.attentionType = torch::kHalf;
        opt.queryChunk = plan.queryChunk;
        opt.intervention = edit;
        opt.positions = positionsOf(p);
        auto res = ctx.run.model->forward(xs.slice(0, p, p + 1).to(ctx.run.device),
                                          ys.slice(0, p, p + 1).to(ctx.run.device), opt);
        for (hsize_t l = 0; l < layers; ++l) {
            auto w = res.attention[l].to(torch::kCPU).contiguous();  // [1, heads, T, T]
            const std::vector<hsize_t> start{hsize_t(p), l, 0, 0, 0}, count5{1, 1, heads, t, t};
            io::writeBlock(ds.id(), half.id(), start, count5, w.data_ptr(), maps.path());
        }
    }
}

// The last query's attention of every prompt, one micro-batch at a time (one prompt a forward
// where positions are drawn per prompt): [P, L, H, T].
torch::Tensor lastQueryAttention(ProbeContext& ctx, const torch::Tensor& xs,
                                 const torch::Tensor& ys, std::int64_t t,
                                 const model::Intervention* edit, const PositionsOf& positionsOf,
                                 bool drawn)
{
    const auto& o = *ctx.options;
    const auto plan = planForward(ctx.run.config, o.attentionPrompts, t, ctx.budgetBytes);
    const std::int64_t q = t - 2, step = drawn ? 1 : plan.microBatch;
    std::vector<torch::Tensor> rows;  // per micro-batch [b, L, H, T]
    for (std::int64_t b0 = 0; b0 < o.attentionPrompts; b0 += step) {
        const auto b1 = std::min<std::int64_t>(o.attentionPrompts, b0 + step);
        torch::NoGradGuard noGrad;
        model::ForwardOptions opt;
        opt.returnAttention = true;
        opt.attentionRows = torch::tensor({q}, torch::kLong);
        opt.queryChunk = plan.queryChunk;
        opt.intervention = edit;
        opt.positions = positionsOf(b0);
        auto res = ctx.run.model->forward(xs.slice(0, b0, b1).to(ctx.run.device),
                                          ys.slice(0, b0, b1).to(ctx.run.device), opt);
        std::vector<torch::Tensor> layers;
        for (auto& w : res.attention)
            layers.push_back(w.select(2, 0).to(torch::kCPU));  // [b, H, T]
        rows.push_back(torch::stack(layers, 1));               // [b, L, H, T]
    }
    return torch::cat(rows, 0);  // [P, L, H, T]
}

// One setting's stored group: the last query's mean and bands over prompts [L, H, T], the
// attention on the y tokens by layer [L, N], its attributes, and its maps where short enough.
void storeSetting(ProbeContext& ctx, io::AnalysisWriter& writer, io::AnalysisWriter& maps,
                  const std::string& mapsName, const Setting& s, const torch::Tensor& all,
                  const torch::Tensor& xs, const torch::Tensor& ys, const model::Intervention* edit,
                  const PositionsOf& positionsOf, at::Generator& bootGen)
{
    const auto& cfg = ctx.run.config;
    const auto& o = *ctx.options;
    const std::int64_t t = 2 * s.points, q = t - 2;
    const auto p = all.size(0), l = all.size(1), h = all.size(2);
    const auto st = aggregate(all.reshape({p, -1}), o.common.bootstrapTrials, bootGen);
    auto yKeys = torch::arange(1, t, 2, torch::kLong);
    auto yAtt = all.index_select(3, yKeys).mean(2).mean(0).contiguous();  // [L, N]

    io::H5Lock lock(io::h5Mutex());
    auto g = writer.group(ctx.root + "/attention/" + s.name, true);
    const auto& path = writer.path();
    const std::vector<hsize_t> shape{hsize_t(l), hsize_t(h), hsize_t(t)};
    writeFloats(g.id(), "last_query_mean", floats(st.mean), shape, path);
    writeFloats(g.id(), "last_query_std", floats(st.std), shape, path);
    writeFloats(g.id(), "last_query_low", floats(st.bootstrapLow), shape, path);
    writeFloats(g.id(), "last_query_high", floats(st.bootstrapHigh), shape, path);
    writeFloats(g.id(), "y_attention",
                std::vector<float>(yAtt.data_ptr<float>(), yAtt.data_ptr<float>() + yAtt.numel()),
                {hsize_t(l), hsize_t(s.points)}, path);
    const int mapCount = t <= o.mapMaxTokens ? std::min(o.mapPrompts, o.attentionPrompts) : 0;
    for (const auto& [name, value] :
         std::map<std::string, std::int64_t>{{"points", s.points},
                                             {"tokens", t},
                                             {"query", q},
                                             {"layers", l},
                                             {"heads", h},
                                             {"prompts", p},
                                             {"map_prompts", mapCount},
                                             {"checkpoint_step", ctx.run.checkpointStep}})
        io::writeAttribute(g.id(), name, value, path);
    io::writeAttribute(g.id(), "model", modelKey(cfg), path);
    io::writeAttribute(g.id(), "seed", o.common.seed, path);
    if (mapCount > 0) {
        io::writeAttribute(g.id(), "maps_file", mapsName, path);
        storeMaps(ctx, edit, positionsOf, maps, s, xs, ys, mapCount);
    }
}

}  // namespace

bool runAttentionProbe(ProbeContext& ctx)
{
    const auto& cfg = ctx.run.config;
    const auto& o = *ctx.options;
    const std::int64_t n = cfg.trainPoints(), dims = cfg.inputDims();
    const auto settings = attentionSettings(n, o.longPoints, o.extraLengths);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(methodSeed(o.common.seed, "attention"));
    auto bootGen =
        at::make_generator<at::CPUGeneratorImpl>(methodSeed(o.common.seed, "attention/bootstrap"));
    data::TaskSampler sampler(cfg.task.name, data::TaskShape{o.attentionPrompts, dims});
    auto functions = sampler.sample(gen);  // one set of functions for every setting (§7)

    io::AnalysisWriter writer(ctx.analysisFile, ctx.run.info.runId);
    const auto mapsName =
        attentionMapsName(ctx.intervention.isNone() ? "" : ctx.intervention.text());
    const auto mapsFile = (fs::path(ctx.analysisFile).parent_path() / mapsName).string();
    io::AnalysisWriter maps(mapsFile, ctx.run.info.runId, /*startEmpty=*/true);
    writer.group(ctx.root + "/attention", /*fresh=*/true).reset();
    for (size_t si = 0; si < settings.size(); ++si) {
        const auto& s = settings[si];
        if (!ctx.control->shouldContinue())
            return false;
        const std::int64_t t = 2 * s.points;
        if (cfg.model.backbone == Backbone::Gpt2 && t > cfg.model.maxPositionEmbeddings) {
            ctx.observer->onWarning("attention '" + s.name +
                                    "' skipped: GPT-2 has learned "
                                    "positions for " +
                                    std::to_string(cfg.model.maxPositionEmbeddings) + " tokens");
            continue;
        }
        ctx.observer->onProgress("attention: " + s.name, static_cast<std::int64_t>(si),
                                 static_cast<std::int64_t>(settings.size()));
        auto xs = s.tiled ? functions->sampleXs(n, dims, gen).repeat({1, 4, 1})
                          : functions->sampleXs(s.points, dims, gen);  // [P, N, D]
        auto ys = functions->evaluate(xs);
        ResolvedIntervention resolved;
        try {
            resolved = resolveIntervention(ctx.intervention, cfg, s.points);
        } catch (const Error& e) {
            // random_positions cannot read a prompt longer than its range (the default "long"
            // setting is 400 tokens, a run's range often 144): that setting only, after its
            // prompts were drawn, so the next settings draw what the plain probe draws.
            if (ctx.intervention.name != "random_positions")
                throw;
            ctx.observer->onWarning("attention '" + s.name + "' skipped: " + e.what());
            continue;
        }
        const model::Intervention* edit =
            resolved.level == ResolvedIntervention::Level::Model ? &resolved.model : nullptr;
        // random_positions: each prompt at its own draw, as the evaluation reads it (one prompt
        // a forward); a prompt that fills the range has only 0..T-1.
        const bool drawn =
            resolved.level == ResolvedIntervention::Level::Positions && t < resolved.range;
        const PositionsOf positionsOf = [&](std::int64_t p) {
            return drawn ? promptPositions(xs.slice(0, p, p + 1), ys.slice(0, p, p + 1),
                                           resolved.range, resolved.seed)
                         : torch::Tensor();
        };
        const auto all = lastQueryAttention(ctx, xs, ys, t, edit, positionsOf, drawn);
        storeSetting(ctx, writer, maps, mapsName, s, all, xs, ys, edit, positionsOf, bootGen);
    }
    maps.commit();
    writer.commit();
    return true;
}

}  // namespace lengen::engine::eval
