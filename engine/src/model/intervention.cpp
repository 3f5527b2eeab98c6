#include "model/intervention.h"
#include "model/rotary_variants.h"  // kPi

#include <algorithm>
#include <cmath>

namespace lengen::engine::model {

namespace {

// theta_i * s^(-2i/(d-2)) for i < d/2: the frequencies of base * s^(d/(d-2)) (NTK-aware
// scaling, bloc97 2023), applied to whatever table the run trained with.
void ntkScale(std::vector<double>& invFreq, int headDim, double s)
{
    const double d = headDim;
    for (size_t i = 0; i < invFreq.size(); ++i)
        invFreq[i] *= std::pow(s, -2.0 * double(i) / (d - 2));
}
}  // namespace

bool Intervention::identityAt(std::int64_t tokens) const
{
    switch (kind) {
    case Kind::None: return true;
    case Kind::Pi:
    case Kind::Ntk:
    case Kind::Yarn:
    case Kind::MambaDt: return factor == 1.0 && (kind != Kind::Yarn || yarnMscale == 1.0);
    case Kind::DynamicNtk:
    case Kind::LogitScale: return tokens <= trainTokens;
    case Kind::Lambda:
    case Kind::Window: return local >= tokens;
    case Kind::LongHeads: return budget >= tokens;
    }
    return false;
}

void editRotaryTable(const Intervention& edit, int headDim, std::int64_t maxPos,
                     std::vector<double>& invFreq, double& posScale, double& mscale)
{
    const double d = headDim;
    switch (edit.kind) {
    case Intervention::Kind::Pi:  // Chen et al. 2023: position p read as p / s
        posScale *= edit.factor;
        return;
    case Intervention::Kind::Ntk: ntkScale(invFreq, headDim, edit.factor); return;
    case Intervention::Kind::DynamicNtk: {  // the NTK scale recomputed for this length T
        const double t = double(maxPos + 1), l = double(edit.trainTokens);
        if (t > l)
            ntkScale(invFreq, headDim, edit.alpha * t / l - (edit.alpha - 1));
        return;
    }
    case Intervention::Kind::Yarn: {
        // Peng et al. 2023: dimension i turns r_i = L / wavelength_i times over the training
        // length L. Dimensions that turn more than beta_fast times keep their frequency,
        // fewer than beta_slow are interpolated (theta / s), a linear ramp in i between the
        // correction dimensions; cos and sin are multiplied by the temperature mscale.
        const double s = edit.factor, l = double(edit.trainTokens);
        if (s == 1.0 && edit.yarnMscale == 1.0)
            return;
        // Correction dimension of r rotations, from the table's own slowest frequency ratio:
        // theta_i = theta_0 * base^(-2i/d), so i(r) = d ln(L theta_0 / (2 pi r)) / (2 ln base).
        const double base = invFreq.size() > 1 ? std::pow(invFreq[0] / invFreq[1], d / 2) : 10000.0;
        auto dim = [&](double r) {
            return d * std::log(l * invFreq[0] / (posScale * 2 * kPi * r)) / (2 * std::log(base));
        };
        double low = std::max(std::floor(dim(edit.betaFast)), 0.0);
        double high = std::min(std::ceil(dim(edit.betaSlow)), d - 1);
        if (low == high)
            high += 0.001;
        if (s != 1.0)
            for (size_t i = 0; i < invFreq.size(); ++i) {
                const double ramp = std::clamp((double(i) - low) / (high - low), 0.0, 1.0);
                invFreq[i] = invFreq[i] / s * ramp + invFreq[i] * (1 - ramp);
            }
        mscale *= edit.yarnMscale;
        return;
    }
    default: return;
    }
}

}  // namespace lengen::engine::model
