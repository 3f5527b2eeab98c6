#pragma once
// RoPE variants that only change frequencies, position scale and the attention temperature
// (reference §4.5–4.7): YaRN, dynamic YaRN, linear position interpolation (PI), dynamic NTK.
// Derived tables are recomputed, never stored in checkpoints.

#include "model/position_encoding.h"

namespace lengen::engine::model {

inline constexpr double kPi = 3.14159265358979323846;

/// YaRN frequency blend for scale s (§4.5): ramp between the correction dimensions of
/// beta_fast = 32 and beta_slow = 1 rotations over the original context lOrig.
struct YarnTables {
    double low = 0, high = 0;     ///< correction dimensions (after floor/ceil/clamp)
    std::vector<double> invFreq;  ///< theta'_i
    double mscale = 1;            ///< 0.1 ln s + 1 (s > 1), applied to cos and sin
};
YarnTables yarnTables(int headDim, double base, double lOrig, double scale);

/// Static YaRN: the blended frequencies and mscale at every length, from the first step.
class YarnImpl : public RotaryImpl {
public:
    YarnImpl(int headDim, double theta, double factor, int lOrig);
    std::map<std::string, std::vector<double>> constants() const override;

protected:
    void tables(std::int64_t maxPos, std::vector<double>& invFreq, double& posScale,
                double& mscale) const override;

private:
    YarnTables m_yarn;
    double m_factor;
    int m_lOrig;
};

/// Shared shape of the length-triggered variants: plain RoPE until the sequence length T
/// reaches the threshold, then a table computed for T. Stateless by default; `stateful`
/// (compat: reference) keeps the last triggered table for later shorter inputs and triggers
/// only on T > threshold (strict), as the reference's modules do.
class DynamicRotaryImpl : public RotaryImpl {
public:
    DynamicRotaryImpl(int headDim, double theta, double threshold, bool stateful);
    std::map<std::string, std::vector<double>> constants() const override;

protected:
    void tables(std::int64_t maxPos, std::vector<double>& invFreq, double& posScale,
                double& mscale) const override;
    /// Table for a triggering length T.
    virtual void scaledTables(double length, std::vector<double>& invFreq,
                              double& mscale) const = 0;

private:
    double m_threshold;
    bool m_stateful;
    // Stateful mode only: the last triggered table (mutable: updated inside a forward).
    mutable bool m_fired = false;
    mutable std::vector<double> m_lastFreq;
    mutable double m_lastMscale = 1;
};

/// Dynamic YaRN (§4.6): for T >= s * lOrig, YaRN with s' = T / (s * lOrig).
class DynamicYarnImpl : public DynamicRotaryImpl {
public:
    DynamicYarnImpl(int headDim, double theta, double factor, int lOrig, bool stateful);

protected:
    void scaledTables(double length, std::vector<double>& invFreq, double& mscale) const override;

private:
    double m_factor;
    int m_lOrig;
};

/// Dynamic NTK (§4.7): for T >= lOrig, base' = base * ((s T / lOrig) - (s - 1))^(d / (d - 2)).
class DynamicNtkImpl : public DynamicRotaryImpl {
public:
    DynamicNtkImpl(int headDim, double theta, double factor, int lOrig, bool stateful);

protected:
    void scaledTables(double length, std::vector<double>& invFreq, double& mscale) const override;

private:
    double m_factor;
    int m_lOrig;
};

/// Linear position interpolation (PI): angles of position p / s.
class LinearPiImpl : public RotaryImpl {
public:
    LinearPiImpl(int headDim, double theta, double factor);

protected:
    void tables(std::int64_t maxPos, std::vector<double>& invFreq, double& posScale,
                double& mscale) const override;

private:
    double m_factor;
};

}  // namespace lengen::engine::model
