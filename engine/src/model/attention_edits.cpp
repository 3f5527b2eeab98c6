// Evaluation-time interventions inside attention (docs/interventions.md): the sliding window,
// LM-Infinite's Λ-mask with its capped global branch, logit scaling with length, and
// LongHeads' per-head chunk selection. Training never reaches this file.

#include <cmath>
#include <limits>

#include "model/attention.h"
#include "model/attention_detail.h"

namespace lengen::engine::model {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

torch::Tensor range(std::int64_t a, std::int64_t b, const torch::Device& device)
{
    return torch::arange(a, b, torch::TensorOptions(torch::kLong).device(device));
}

}  // namespace

ScoreEdit AttentionImpl::scoreEditFor(const Intervention& e, const torch::Tensor& q0,
                                      const torch::Tensor& k0, const PositionSpan& pos)
{
    using Kind = Intervention::Kind;
    const auto device = q0.device();
    if (e.kind == Kind::Window) {
        const auto w = e.local;
        return [w, device](const torch::Tensor& logits, std::int64_t r0, std::int64_t r1) {
            auto dist = range(r0, r1, device).unsqueeze(1) - range(0, r1, device).unsqueeze(0);
            return logits.masked_fill(dist >= w, kNegInf);  // [B, h, R, r1]
        };
    }
    if (e.kind == Kind::LogitScale) {
        // Query at position n (1-based count of tokens it sees): logits * log(n) / log(L).
        const double logL = std::log(double(e.trainTokens));
        const auto first = pos.q0 + 1;
        return [=](const torch::Tensor& logits, std::int64_t r0, std::int64_t r1) {
            auto n = torch::arange(first + r0, first + r1, torch::kFloat64);
            auto s = torch::clamp_min(torch::log(n) / logL, 1.0).to(torch::kFloat32);
            return logits * s.to(device).view({1, 1, -1, 1});
        };
    }
    if (e.kind != Kind::Lambda)
        return {};
    // LM-Infinite (Han et al. 2024): query i sees keys j < g (global) and i - j < w (local);
    // a global key farther than `cap` is scored as if it were exactly `cap` away: rotary PEs
    // rotate q at distance cap from the key, bias PEs read their bias at distance cap.
    const auto t = q0.size(2);
    const auto g = std::min(e.global, t), w = e.local, cap = e.cap;
    torch::Tensor globalScores;  // [B, h, T, g]: q rotated at cap . k rotated at 0, scaled
    if (g > 0 && t - 1 > cap) {
        auto qc = q0, kg = k0.slice(2, 0, g);
        PositionSpan at;
        at.q = torch::full({t}, cap, torch::TensorOptions(torch::kLong).device(device));
        at.k = torch::zeros({g}, torch::TensorOptions(torch::kLong).device(device));
        at.q0 = cap;
        at.maxPos = pos.maxPos;
        at.consecutive = false;  // every query at cap
        m_pe->rotate(qc, kg, at);
        globalScores = torch::matmul(qc * m_scale, kg.transpose(-1, -2));
    }
    auto* pe = m_pe.get();
    return [=](const torch::Tensor& logits, std::int64_t r0, std::int64_t r1) {
        auto rows = range(r0, r1, device).unsqueeze(1);  // [R, 1]
        auto out = logits;
        const auto gb = std::min(g, r1);
        if (globalScores.defined() && gb > 0) {
            auto capped = globalScores.slice(2, r0, r1).slice(3, 0, gb);  // [B, h, R, gb]
            // Bias PEs: bias(i, i - cap) for each row, the diagonal of a [h, R, R] block.
            PositionSpan sub;
            sub.q = pos.q.slice(0, r0, r1);
            sub.k = sub.q - cap;
            sub.q0 = pos.q0 + r0;
            sub.k0 = sub.q0 - cap;
            // Off the diagonal q - k reaches cap + R - 1: PEs that tabulate per distance
            // (T5, Sandwich) size their tables by maxPos, which must bound it.
            sub.maxPos = pos.maxPos + cap;
            auto b = pe->logitBias(sub);
            if (b.defined())
                capped = capped + torch::diagonal(b, 0, 1, 2).unsqueeze(0).unsqueeze(-1);
            auto far = (rows - range(0, gb, device).unsqueeze(0)) > cap;  // [R, gb]
            out = torch::cat(
                {torch::where(far, capped, logits.slice(3, 0, gb)), logits.slice(3, gb)}, 3);
        }
        auto cols = range(0, r1, device).unsqueeze(0);          // [1, r1]
        auto allowed = (cols < g).logical_or(rows - cols < w);  // [R, r1]
        return out.masked_fill(allowed.logical_not(), kNegInf);
    };
}

namespace {

// LongHeads' chunks for a block of queries qb [B, h, R, d], as [B, h, R, K] booleans: the first
// chunk, the query's own (own [R]), and the m - 2 earlier chunks whose mean key (rep
// [B, h, K, d]) best matches the query.
torch::Tensor keptChunks(const torch::Tensor& qb, const torch::Tensor& rep,
                         const torch::Tensor& own, const torch::Tensor& chunkIds, std::int64_t m)
{
    const auto b = qb.size(0), h = qb.size(1), rn = qb.size(2), nChunks = rep.size(2);
    auto scores = torch::matmul(qb, rep.transpose(-1, -2));  // [B, h, R, K]
    auto candidate =
        (chunkIds.unsqueeze(0) >= 1).logical_and(chunkIds.unsqueeze(0) < own.unsqueeze(1));
    scores = scores.masked_fill(candidate.logical_not(), kNegInf);
    auto member =
        torch::zeros({b, h, rn, nChunks}, torch::TensorOptions(torch::kBool).device(qb.device()));
    member.select(3, 0).fill_(true);
    member.scatter_(3, own.view({1, 1, rn, 1}).expand({b, h, rn, 1}), true);
    const auto extra = std::min<std::int64_t>(m - 2, nChunks);
    if (extra > 0) {
        auto top = scores.topk(extra, -1);
        auto valid = std::get<0>(top) > kNegInf;  // [B, h, R, extra]
        member = member.logical_or(torch::zeros_like(member).scatter(3, std::get<1>(top), valid));
    }
    return member;
}

// What LongHeads fixes once for every block of queries.
struct LongHeadsSetup {
    std::int64_t chunk = 0;    // c: tokens per chunk
    std::int64_t chunks = 0;   // m: chunks each query keeps
    std::int64_t budget = 0;   // m * c: the compact positions 0..budget-1
    double scale = 1;          // the attention's score scale
    torch::Tensor rep;         // [B, h, K, d]: each chunk's mean key
    torch::Tensor chunkIds;    // [K]: 0..K-1
    torch::Tensor cosT, sinT;  // [M, d]: rotary tables at the compact positions; undefined if none
    torch::Tensor biasTable;   // [h, M, M]: a bias PE's bias at them; undefined if none
};

// Each chunk's mean key of k0 [B, h, T, d] in chunks of c tokens (the last may be short), as
// [B, h, K, d] with K = ceil(T / c).
torch::Tensor longHeadsChunkMeans(const torch::Tensor& k0, std::int64_t c)
{
    const auto b = k0.size(0), h = k0.size(1), t = k0.size(2), d = k0.size(3);
    const auto nChunks = (t + c - 1) / c;
    auto padded = torch::zeros({b, h, nChunks * c, d}, k0.options());
    padded.slice(2, 0, t).copy_(k0);
    auto counts = torch::full({nChunks}, double(c), k0.options());
    counts[nChunks - 1] = double(t - (nChunks - 1) * c);
    return padded.view({b, h, nChunks, c, d}).sum(3) / counts.view({1, 1, -1, 1});
}

// The keys a block of queries [r0, r1) keeps, in ascending order, with their compact positions.
struct LongHeadsPick {
    torch::Tensor order;     // [B, h, R, ms]: key index per slot, unselected keys sorted behind
    torch::Tensor valid;     // [B, h, R, ms]: the slot holds a selected key
    torch::Tensor keyPos;    // [B, h, R, ms]: the slot's key's compact position
    torch::Tensor queryPos;  // [B, h, R]: the query's compact position
};

// Chooses the chunks of queries qb [B, h, R, d] (rows r0..r1-1) and lays them side by side.
LongHeadsPick pickLongHeadsKeys(const torch::Tensor& qb, const LongHeadsSetup& s, std::int64_t r0,
                                std::int64_t r1)
{
    const auto b = qb.size(0), h = qb.size(1), rn = r1 - r0;
    const auto device = qb.device();
    const auto c = s.chunk, budget = s.budget;
    auto rows = range(r0, r1, device);
    auto own = torch::floor_divide(rows, c);  // [R]
    auto member = keptChunks(qb, s.rep, own, s.chunkIds, s.chunks);
    auto slot = member.to(torch::kLong).cumsum(-1) - 1;  // [B, h, R, K]
    auto keys = range(0, r1, device);
    auto keyChunk = torch::floor_divide(keys, c);
    auto selected = member.index_select(3, keyChunk)
                        .logical_and(keys.unsqueeze(0) <= rows.unsqueeze(1));  // [B,h,R,r1]
    auto keyPos = slot.index_select(3, keyChunk) * c + torch::remainder(keys, c);
    LongHeadsPick pick;
    pick.queryPos = (slot.gather(3, own.view({1, 1, rn, 1}).expand({b, h, rn, 1})).squeeze(3) * c +
                     torch::remainder(rows, c))
                        .clamp(0, budget - 1);  // [B, h, R]
    // The selected keys, ascending: sort unselected ones behind.
    const auto ms = std::min(budget, r1);
    pick.order = (selected.logical_not().to(torch::kLong) * r1 + keys)
                     .argsort(/*dim=*/-1, /*descending=*/false)
                     .slice(3, 0, ms);
    pick.valid = selected.gather(3, pick.order);  // [B, h, R, ms]
    pick.keyPos = keyPos.gather(3, pick.order).clamp(0, budget - 1);
    return pick;
}

// Rows of x [B, h, T, d] at each query's kept keys (order [B, h, R, ms]): [B, h, R, ms, d].
torch::Tensor gatherKeptRows(const torch::Tensor& x, const torch::Tensor& order)
{
    const auto b = x.size(0), h = x.size(1), t = x.size(2), d = x.size(3);
    const auto rn = order.size(2), ms = order.size(3);
    return x.unsqueeze(2)
        .expand({b, h, rn, t, d})
        .gather(3, order.unsqueeze(-1).expand({b, h, rn, ms, d}));
}

// Attention probabilities of queries qb [B, h, R, d] over their kept keys of k0, at the
// compact positions: [B, h, R, ms].
torch::Tensor longHeadsProbs(const torch::Tensor& qb, const torch::Tensor& k0,
                             const LongHeadsPick& pick, const LongHeadsSetup& s)
{
    const auto h = qb.size(1), d = qb.size(3);
    auto ks = gatherKeptRows(k0, pick.order);  // [B, h, R, ms, d]
    auto qr = qb;
    if (s.cosT.defined()) {
        auto at = [&](const torch::Tensor& table, const torch::Tensor& p) {  // [..., d]
            auto sizes = p.sizes().vec();
            sizes.push_back(d);
            return table.index_select(0, p.flatten()).view(sizes);
        };
        ks = ks * at(s.cosT, pick.keyPos) + detail::rotateHalf(ks) * at(s.sinT, pick.keyPos);
        qr = qb * at(s.cosT, pick.queryPos) + detail::rotateHalf(qb) * at(s.sinT, pick.queryPos);
    }
    auto logits = (qr.unsqueeze(3) * ks).sum(-1) * s.scale;  // [B, h, R, ms]
    if (s.biasTable.defined()) {
        auto head = range(0, h, qb.device()).view({1, h, 1, 1});
        logits = logits + s.biasTable.take(head * s.budget * s.budget +
                                           pick.queryPos.unsqueeze(-1) * s.budget + pick.keyPos);
    }
    return torch::softmax(logits.masked_fill(pick.valid.logical_not(), kNegInf), -1);
}

}  // namespace

torch::Tensor AttentionImpl::attendLongHeads(const torch::Tensor& q0, const torch::Tensor& k0,
                                             const torch::Tensor& v, const Intervention& e,
                                             AttentionTap* tap)
{
    // LongHeads (Lu et al. 2024), per head and query: the context is cut into chunks of c
    // tokens; the query keeps the first chunk, its own chunk, and the chunks whose mean key
    // best matches it (unrotated q . mean k), m = budget / c chunks in all. The kept chunks are
    // laid side by side in their order, so positions stay below the budget.
    const auto b = q0.size(0), h = q0.size(1), t = q0.size(2), d = q0.size(3);
    const auto device = q0.device();
    LongHeadsSetup s;
    s.chunk = e.chunk;
    s.chunks = e.budget / e.chunk;
    s.budget = s.chunks * s.chunk;
    s.scale = m_scale;
    s.rep = longHeadsChunkMeans(k0, s.chunk);  // [B, h, K, d]

    // Rotary PEs: cos/sin at the compact positions 0..budget-1; bias PEs: their bias there.
    if (auto* rotary = dynamic_cast<RotaryImpl*>(m_pe.get()))
        std::tie(s.cosT, s.sinT) =
            rotary->tablesAt(range(0, s.budget, device), s.budget - 1);            // [M, d]
    s.biasTable = m_pe->logitBias(PositionSpan::contiguous(0, s.budget, device));  // [hb, M, M]
    if (s.biasTable.defined())
        s.biasTable = s.biasTable.expand({h, s.budget, s.budget}).contiguous();

    const bool capture = tap && tap->capture;
    torch::Tensor kept;
    if (capture)
        kept = torch::zeros({b, h, tap->rows.defined() ? tap->rows.size(0) : t, t},
                            q0.options().dtype(tap->captureType));
    const auto rowsCpu =
        capture && tap->rows.defined() ? tap->rows.to(torch::kCPU) : torch::Tensor();
    auto out = torch::empty({b, h, t, d}, v.options());
    const std::int64_t block = tap && tap->queryChunk > 0 ? tap->queryChunk : 128;
    s.chunkIds = range(0, s.rep.size(2), device);
    for (std::int64_t r0 = 0; r0 < t; r0 += block) {
        const auto r1 = std::min(t, r0 + block), rn = r1 - r0;
        auto qb = q0.slice(2, r0, r1);  // [B, h, R, d]
        const auto pick = pickLongHeadsKeys(qb, s, r0, r1);
        auto probs = longHeadsProbs(qb, k0, pick, s);  // [B, h, R, ms]
        out.slice(2, r0, r1).copy_((probs.unsqueeze(-1) * gatherKeptRows(v, pick.order)).sum(3));
        if (capture) {  // the weights back at their keys: [B, h, R, r1]
            auto map = torch::zeros({b, h, rn, r1}, probs.options()).scatter(3, pick.order, probs);
            if (!tap->rows.defined())
                kept.slice(2, r0, r1).slice(-1, 0, r1).copy_(map);
            else
                detail::captureRows(kept, rowsCpu, map, r0, r1);
        }
    }
    if (capture)
        tap->weights.push_back(kept);
    return out;
}

}  // namespace lengen::engine::model
