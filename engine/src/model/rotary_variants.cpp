#include "model/rotary_variants.h"

#include <algorithm>
#include <cmath>

namespace lengen::engine::model {

namespace {
constexpr double kBetaFast = 32.0;
constexpr double kBetaSlow = 1.0;

double yarnMscale(double scale) { return scale > 1 ? 0.1 * std::log(scale) + 1.0 : 1.0; }
}  // namespace

YarnTables yarnTables(int headDim, double base, double lOrig, double scale)
{
    const double d = headDim;
    auto correctionDim = [&](double rotations) {
        return d * std::log(lOrig / (rotations * 2 * kPi)) / (2 * std::log(base));
    };
    YarnTables t;
    t.low = std::max(std::floor(correctionDim(kBetaFast)), 0.0);
    t.high = std::min(std::ceil(correctionDim(kBetaSlow)), d - 1);
    if (t.low == t.high)
        t.high += 0.001;                                            // avoid a zero-width ramp
    const auto theta = RotaryImpl::baseFrequencies(headDim, base);  // once per table, not per step
    t.invFreq.resize(theta.size());
    for (size_t i = 0; i < theta.size(); ++i) {
        const double ramp =
            std::clamp((static_cast<double>(i) - t.low) / (t.high - t.low), 0.0, 1.0);
        const double extrapolate = 1.0 - ramp;  // 1 keeps the original frequency
        t.invFreq[i] = theta[i] / scale * (1 - extrapolate) + theta[i] * extrapolate;
    }
    t.mscale = yarnMscale(scale);
    return t;
}

YarnImpl::YarnImpl(int headDim, double theta, double factor, int lOrig)
    : RotaryImpl(headDim, theta), m_yarn(yarnTables(headDim, theta, lOrig, factor)),
      m_factor(factor), m_lOrig(lOrig)
{}

void YarnImpl::tables(std::int64_t, std::vector<double>& invFreq, double& posScale,
                      double& mscale) const
{
    invFreq = m_yarn.invFreq;
    posScale = 1.0;
    mscale = m_yarn.mscale;
}

std::map<std::string, std::vector<double>> YarnImpl::constants() const
{
    return {{"inv_freq", m_yarn.invFreq},
            {"mscale", {m_yarn.mscale}},
            {"low_high", {m_yarn.low, m_yarn.high}},
            {"factor", {m_factor}},
            {"original_max_position", {static_cast<double>(m_lOrig)}}};
}

DynamicRotaryImpl::DynamicRotaryImpl(int headDim, double theta, double threshold, bool stateful)
    : RotaryImpl(headDim, theta), m_threshold(threshold), m_stateful(stateful)
{}

void DynamicRotaryImpl::tables(std::int64_t maxPos, std::vector<double>& invFreq, double& posScale,
                               double& mscale) const
{
    posScale = 1.0;
    const double length = static_cast<double>(maxPos + 1);
    const bool trigger = m_stateful ? length > m_threshold : length >= m_threshold;
    if (trigger) {
        scaledTables(length, invFreq, mscale);
        if (m_stateful) {
            m_fired = true;
            m_lastFreq = invFreq;
            m_lastMscale = mscale;
        }
        return;
    }
    if (m_stateful && m_fired) {  // the reference keeps the stale table (§9.3)
        invFreq = m_lastFreq;
        mscale = m_lastMscale;
        return;
    }
    RotaryImpl::tables(maxPos, invFreq, posScale, mscale);
}

std::map<std::string, std::vector<double>> DynamicRotaryImpl::constants() const
{
    auto c = RotaryImpl::constants();
    c["threshold_tokens"] = {m_threshold};
    c["stateful"] = {m_stateful ? 1.0 : 0.0};
    return c;
}

DynamicYarnImpl::DynamicYarnImpl(int headDim, double theta, double factor, int lOrig, bool stateful)
    : DynamicRotaryImpl(headDim, theta, factor * lOrig, stateful), m_factor(factor), m_lOrig(lOrig)
{}

void DynamicYarnImpl::scaledTables(double length, std::vector<double>& invFreq,
                                   double& mscale) const
{
    // Ramp bounds stay those of the original context (lOrig), as in the reference.
    const auto t = yarnTables(m_headDim, m_theta, m_lOrig, length / (m_factor * m_lOrig));
    invFreq = t.invFreq;
    mscale = t.mscale;
}

DynamicNtkImpl::DynamicNtkImpl(int headDim, double theta, double factor, int lOrig, bool stateful)
    : DynamicRotaryImpl(headDim, theta, lOrig, stateful), m_factor(factor), m_lOrig(lOrig)
{}

void DynamicNtkImpl::scaledTables(double length, std::vector<double>& invFreq, double& mscale) const
{
    const double d = m_headDim;
    const double base =
        m_theta * std::pow(m_factor * length / m_lOrig - (m_factor - 1), d / (d - 2));
    invFreq = RotaryImpl::baseFrequencies(m_headDim, base);
    mscale = 1.0;
}

LinearPiImpl::LinearPiImpl(int headDim, double theta, double factor)
    : RotaryImpl(headDim, theta), m_factor(factor)
{}

void LinearPiImpl::tables(std::int64_t maxPos, std::vector<double>& invFreq, double& posScale,
                          double& mscale) const
{
    RotaryImpl::tables(maxPos, invFreq, posScale, mscale);
    posScale = m_factor;
}

}  // namespace lengen::engine::model
