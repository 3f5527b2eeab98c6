#include "model/position_encoding.h"

#include <cmath>

#include "lengen/engine/config.h"
#include "lengen/engine/errors.h"
#include "model/attention_detail.h"
#include "model/cope.h"
#include "model/fire.h"
#include "model/kerple.h"
#include "model/rotary_variants.h"
#include "model/sandwich.h"
#include "model/t5_bias.h"
#include "model/xpos.h"

namespace lengen::engine::model {

namespace {

// The first of a span's consecutive positions (the rotary tables' rows are a view from it), or
// -1 where the span's positions are given one by one.
std::int64_t firstOf(const PositionSpan& pos, std::int64_t first)
{
    return pos.consecutive ? first : -1;
}

}  // namespace

PositionSpan PositionSpan::contiguous(std::int64_t start, std::int64_t len, torch::Device device)
{
    PositionSpan span;
    span.q = torch::arange(start, start + len, torch::TensorOptions(torch::kLong).device(device));
    span.k = span.q;
    span.q0 = span.k0 = start;
    span.maxPos = start + len - 1;
    return span;
}

PositionSpan PositionSpan::at(const torch::Tensor& positions, torch::Device device)
{
    const auto cpu = positions.to(torch::kCPU, torch::kLong).contiguous();  // [T], ascending
    const auto* p = cpu.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < cpu.numel(); ++i)
        if (p[i] < 0 || (i > 0 && p[i] <= p[i - 1]))
            throw Error(ErrorKind::Internal,
                        "token positions must be distinct, ascending and >= 0");
    PositionSpan span;
    span.q = cpu.to(device);
    span.k = span.q;
    span.q0 = span.k0 = cpu.numel() ? p[0] : 0;
    span.maxPos = cpu.numel() ? p[cpu.numel() - 1] : 0;
    span.consecutive = false;
    return span;
}

void PositionEncodingImpl::rotate(torch::Tensor&, torch::Tensor&, const PositionSpan&,
                                  const Intervention*)
{}

torch::Tensor PositionEncodingImpl::logitBias(const PositionSpan&) { return {}; }

std::pair<torch::Tensor, torch::Tensor> PositionEncodingImpl::rotaryTables(const PositionSpan&)
{
    return {};
}

std::pair<torch::Tensor, torch::Tensor> PositionEncodingImpl::keyTables(const PositionSpan&)
{
    return {};
}

torch::Tensor PositionEncodingImpl::contentBias(const torch::Tensor&, const torch::Tensor&)
{
    return {};
}

// ---------------------------------------------------------------------------------- rotary

RotaryImpl::RotaryImpl(int headDim, double theta)
    : m_headDim(headDim), m_theta(theta), m_baseFreq(baseFrequencies(headDim, theta))
{}

std::vector<double> RotaryImpl::baseFrequencies(int headDim, double theta)
{
    std::vector<double> f(static_cast<size_t>(headDim / 2));
    for (size_t i = 0; i < f.size(); ++i)
        f[i] = std::pow(theta, -2.0 * static_cast<double>(i) / headDim);
    return f;
}

void RotaryImpl::tables(std::int64_t, std::vector<double>& invFreq, double& posScale,
                        double& mscale) const
{
    invFreq = m_baseFreq;
    posScale = 1.0;
    mscale = 1.0;
}

std::pair<torch::Tensor, torch::Tensor> RotaryImpl::cosSin(const torch::Tensor& pos,
                                                           std::int64_t maxPos,
                                                           const Intervention* edit,
                                                           std::int64_t first)
{
    std::vector<double> freq;
    double posScale = 1, mscale = 1;
    tables(maxPos, freq, posScale, mscale);
    if (edit && edit->rotary())
        editRotaryTable(*edit, m_headDim, maxPos, freq, posScale, mscale);
    const bool stale = m_cachedMax < maxPos || freq != m_cachedFreq || posScale != m_cachedScale ||
                       mscale != m_cachedMscale || m_cos.device() != pos.device();
    if (stale) {
        // Angles in float64 so long positions keep their precision, then float32 tables.
        const std::int64_t len = std::max<std::int64_t>(maxPos + 1, 1);
        auto p = torch::arange(len, torch::kFloat64) / posScale;  // [L]
        auto f = torch::tensor(freq, torch::kFloat64);            // [d/2]
        auto angles = torch::outer(p, f);                         // [L, d/2]
        angles = torch::cat({angles, angles}, 1);                 // [L, d]
        m_cos = (angles.cos() * mscale).to(torch::kFloat32).to(pos.device());
        m_sin = (angles.sin() * mscale).to(torch::kFloat32).to(pos.device());
        m_cachedMax = len - 1;
        m_cachedFreq = freq;
        m_cachedScale = posScale;
        m_cachedMscale = mscale;
    }
    // Positions first, first + 1, ...: the tables' rows as they are. The span's word is
    // checked at both ends (a span built by hand may hold other positions).
    const auto n = pos.numel();
    if (first >= 0 && n > 0 && pos.dim() == 1 && pos.device().is_cpu() &&
        pos.scalar_type() == torch::kLong && first + n - 1 <= m_cachedMax) {
        const auto* p = pos.data_ptr<std::int64_t>();
        if (p[0] == first && p[(n - 1) * pos.stride(0)] == first + n - 1)
            return {m_cos.narrow(0, first, n), m_sin.narrow(0, first, n)};
    }
    return {m_cos.index_select(0, pos), m_sin.index_select(0, pos)};
}

void RotaryImpl::rotate(torch::Tensor& q, torch::Tensor& k, const PositionSpan& pos,
                        const Intervention* edit)
{
    auto [cq, sq] = detail::tablesLike(q, cosSin(pos.q, pos.maxPos, edit, firstOf(pos, pos.q0)));
    q = detail::applyRotary(q, cq, sq);
    if (pos.k.is_same(pos.q)) {  // self-attention over one span (training): same table
        k = detail::applyRotary(k, cq, sq);
        return;
    }
    auto [ck, sk] = detail::tablesLike(k, cosSin(pos.k, pos.maxPos, edit, firstOf(pos, pos.k0)));
    k = detail::applyRotary(k, ck, sk);
}

std::pair<torch::Tensor, torch::Tensor> RotaryImpl::rotaryTables(const PositionSpan& pos)
{
    return cosSin(pos.q, pos.maxPos, nullptr, firstOf(pos, pos.q0));
}

std::pair<torch::Tensor, torch::Tensor>
RotaryImpl::tablesAt(const torch::Tensor& pos, std::int64_t maxPos, const Intervention* edit)
{
    return cosSin(pos, maxPos, edit);
}

std::map<std::string, std::vector<double>> RotaryImpl::constants() const
{
    std::vector<double> freq;
    double posScale = 1, mscale = 1;
    tables(0, freq, posScale, mscale);
    return {{"inv_freq", freq}, {"position_scale", {posScale}}, {"mscale", {mscale}}};
}

// ---------------------------------------------------------------------------------- ALiBi

std::vector<double> AlibiImpl::slopes(int numHeads)
{
    // P = next power of two >= h; slope_k = 2^(-8k/P), k = 1..P. For h != P the list is
    // reordered odd indices first (1, 3, 5, ...), then even (0, 2, ...), and cut to h.
    int p = 1;
    while (p < numHeads)
        p *= 2;
    std::vector<double> base(static_cast<size_t>(p));
    for (int k = 1; k <= p; ++k)
        base[static_cast<size_t>(k - 1)] = std::pow(2.0, -8.0 * k / p);
    if (p == numHeads)
        return base;
    std::vector<double> reordered;
    for (int i = 1; i < p; i += 2)
        reordered.push_back(base[static_cast<size_t>(i)]);
    for (int i = 0; i < p; i += 2)
        reordered.push_back(base[static_cast<size_t>(i)]);
    reordered.resize(static_cast<size_t>(numHeads));
    return reordered;
}

AlibiImpl::AlibiImpl(int numHeads) { m_slopes = torch::tensor(slopes(numHeads), torch::kFloat32); }

torch::Tensor AlibiImpl::logitBias(const PositionSpan& pos)
{
    const auto tq = pos.q.size(0), tk = pos.k.size(0);
    const auto q0 = pos.q0, k0 = pos.k0;
    if (!pos.consecutive || tq != m_cachedTq || tk != m_cachedTk || q0 != m_cachedQ0 ||
        k0 != m_cachedK0 || m_cached.device() != pos.q.device()) {
        auto rel = (pos.q.unsqueeze(1) - pos.k.unsqueeze(0)).to(torch::kFloat32);  // [Tq, Tk]
        if (m_slopes.device() !=
            pos.q.device())  // moved once: randomized positions rebuild every step
            m_slopes = m_slopes.to(pos.q.device());
        m_cached = -m_slopes.view({-1, 1, 1}) * rel.unsqueeze(0);  // [h,Tq,Tk]
        m_cachedTq = pos.consecutive ? tq : -1;                    // random positions: never reused
        m_cachedTk = tk, m_cachedQ0 = q0, m_cachedK0 = k0;
    }
    return m_cached;
}

std::map<std::string, std::vector<double>> AlibiImpl::constants() const
{
    auto s = m_slopes.to(torch::kCPU).contiguous();  // the slopes may live on a GPU
    return {{"slopes", std::vector<double>(s.data_ptr<float>(), s.data_ptr<float>() + s.numel())}};
}

// ---------------------------------------------------------------------------------- factory

PositionEncoding makePositionEncoding(const RunConfig& config)
{
    using Base = std::shared_ptr<PositionEncodingImpl>;
    const auto& m = config.model;
    const int headDim = m.hiddenSize / m.numHeads;
    const std::string& type = config.position.type;
    if (type == "rope")
        return PositionEncoding(Base(std::make_shared<RotaryImpl>(headDim, m.ropeTheta)));
    if (type == "nope")
        return PositionEncoding(std::make_shared<PositionEncodingImpl>());
    if (type == "alibi")
        return PositionEncoding(Base(std::make_shared<AlibiImpl>(m.numHeads)));
    const bool reference = config.compat == CompatMode::Reference;
    const double factor = config.position.factor.value_or(1.0);
    const int lOrig = m.maxPositionEmbeddings;
    if (type == "yarn")
        return PositionEncoding(
            Base(std::make_shared<YarnImpl>(headDim, m.ropeTheta, factor, lOrig)));
    if (type == "dynamic-yarn")
        return PositionEncoding(Base(
            std::make_shared<DynamicYarnImpl>(headDim, m.ropeTheta, factor, lOrig, reference)));
    if (type == "dynamic")
        return PositionEncoding(
            Base(std::make_shared<DynamicNtkImpl>(headDim, m.ropeTheta, factor, lOrig, reference)));
    if (type == "linear")
        return PositionEncoding(Base(std::make_shared<LinearPiImpl>(headDim, m.ropeTheta, factor)));
    if (type == "kerple_log" || type == "kerple_power")
        return PositionEncoding(Base(std::make_shared<KerpleImpl>(
            m.numHeads,
            type == "kerple_log" ? KerpleImpl::Kernel::Log : KerpleImpl::Kernel::Power)));
    if (type == "sandwich")
        return PositionEncoding(
            Base(std::make_shared<SandwichImpl>(m.numHeads, config.position.sandwichDim)));
    if (type == "xpos")
        return PositionEncoding(
            Base(std::make_shared<XposImpl>(headDim, m.ropeTheta, config.position.xposScaleBase)));
    if (type == "cope")
        return PositionEncoding(Base(std::make_shared<CopeImpl>(
            headDim, config.position.copeMaxPositions, config.position.copeDividePositionLogits)));
    if (type == "t5")
        return PositionEncoding(Base(std::make_shared<T5BiasImpl>(
            m.numHeads, config.position.t5Buckets, config.position.t5MaxDistance)));
    if (type == "fire") {
        // The reference's width is max_position_embeddings by a positional-argument slip (§9.5).
        const int width = reference ? lOrig : config.position.fireMlpWidth;
        return PositionEncoding(Base(std::make_shared<FireImpl>(m.numHeads, width)));
    }
    throw Error(ErrorKind::Config, "unknown position encoding '" + type + "'");
}

}  // namespace lengen::engine::model
