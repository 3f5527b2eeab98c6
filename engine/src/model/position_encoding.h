#pragma once
// Pluggable position encodings (reference §4). One instance per attention layer, registered as
// `self_attn.rotary_emb` so learned PEs (FIRE) get the reference's state-dict keys. A PE either
// rotates q/k (RoPE family), adds a logit bias (ALiBi, FIRE), or does nothing (NoPE).

#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/intervention.h"

namespace lengen::engine {
struct RunConfig;
}

namespace lengen::engine::model {

/// Integer positions of the queries and keys of one forward on the model's device (contiguous,
/// q0..q0+Tq-1 and k0..k0+Tk-1, except under randomized positions in training), plus
/// host-side facts so that PEs never synchronise with the device to read them.
struct PositionSpan {
    torch::Tensor q;          ///< [Tq] int64
    torch::Tensor k;          ///< [Tk] int64
    std::int64_t q0 = 0;      ///< first query position
    std::int64_t k0 = 0;      ///< first key position
    std::int64_t maxPos = 0;  ///< largest position in either
    /// q and k run q0, q0 + 1, ... (false under randomized positions: PEs must not cache by q0).
    bool consecutive = true;
    /// Contiguous positions start..start+len-1 for both queries and keys.
    static PositionSpan contiguous(std::int64_t start, std::int64_t len, torch::Device device);
    /// The given ascending positions (int64 [T] on the CPU) for queries and keys, on `device`.
    static PositionSpan at(const torch::Tensor& positions, torch::Device device);
    /// How far each key lies behind each query, max(i - j, 0): int64 [Tq, Tk] (keys after the
    /// query read 0; the causal mask removes them). The relative biases read it.
    torch::Tensor distances() const { return (q.unsqueeze(1) - k.unsqueeze(0)).clamp_min(0); }
};

class PositionEncodingImpl : public torch::nn::Module {
public:
    /// Replace q [B, h, Tq, d] and k [B, h, Tk, d] by their encoded versions. Default: none.
    /// A rotary `edit` (evaluation only) rescales the table first.
    virtual void rotate(torch::Tensor& q, torch::Tensor& k, const PositionSpan& pos,
                        const Intervention* edit = nullptr);
    /// Additive bias on the scaled logits, [h, Tq, Tk] (or [1, Tq, Tk]); undefined = none.
    virtual torch::Tensor logitBias(const PositionSpan& pos);
    /// The cos and sin tables [Tq, d] that rotate() applies to q and k of one span (q and k at
    /// the same positions); undefined for PEs that do not rotate. The fused layer uses them.
    virtual std::pair<torch::Tensor, torch::Tensor> rotaryTables(const PositionSpan& pos);
    /// The keys' tables [Tk, d] where they differ from the queries' (xPos scales them the
    /// other way); undefined: the keys use rotaryTables().
    virtual std::pair<torch::Tensor, torch::Tensor> keyTables(const PositionSpan& pos);
    /// A bias computed from the content (CoPE): from the queries q [B, h, R, d] of rows
    /// [r0, r1) and their scaled logits over keys 0..r1-1 with the causal mask applied
    /// ([B, h, R, r1], -inf after each query), the bias to add, [B, h, R, r1]; undefined for
    /// PEs whose bias depends on positions alone (logitBias).
    virtual torch::Tensor contentBias(const torch::Tensor& q, const torch::Tensor& maskedLogits);
    /// Whether contentBias() applies (the attention then computes the logits it needs).
    virtual bool readsContent() const { return false; }
    /// Derived constants a researcher checks (stored in the run file, printed by `info`).
    virtual std::map<std::string, std::vector<double>> constants() const { return {}; }
};
TORCH_MODULE(PositionEncoding);

/// Rotary encoding with the rotate-half pairing (dimension j with j + d/2): q' = q*C + rot(q)*S
/// where C/S hold cos/sin of position * inv_freq, concatenated twice, times `mscale`.
/// Subclasses only choose the frequencies, the position scale and mscale.
class RotaryImpl : public PositionEncodingImpl {
public:
    RotaryImpl(int headDim, double theta);
    void rotate(torch::Tensor& q, torch::Tensor& k, const PositionSpan& pos,
                const Intervention* edit = nullptr) override;
    std::pair<torch::Tensor, torch::Tensor> rotaryTables(const PositionSpan& pos) override;
    /// cos and sin [T, d] of positions `pos` (int64 [T]) for a forward whose largest position
    /// is `maxPos`, under an optional rotary edit (LongHeads' re-assigned positions).
    std::pair<torch::Tensor, torch::Tensor> tablesAt(const torch::Tensor& pos, std::int64_t maxPos,
                                                     const Intervention* edit = nullptr);
    std::map<std::string, std::vector<double>> constants() const override;
    /// Frequencies theta_i = base^(-2i/d), i < d/2, in double precision.
    static std::vector<double> baseFrequencies(int headDim, double theta);

protected:
    /// Per forward: the frequencies (length d/2), a position divisor and mscale for a
    /// sequence whose largest position is `maxPos`. Default: plain RoPE.
    virtual void tables(std::int64_t maxPos, std::vector<double>& invFreq, double& posScale,
                        double& mscale) const;
    int m_headDim;
    double m_theta;
    std::vector<double> m_baseFreq;  // baseFrequencies(m_headDim, m_theta), computed once

private:
    // The tables' rows at `pos` [T] (int64): a copy (index_select), or, where the positions
    // are known to run first, first + 1, ... (first >= 0), a view of the cached tables' rows.
    std::pair<torch::Tensor, torch::Tensor> cosSin(const torch::Tensor& pos, std::int64_t maxPos,
                                                   const Intervention* edit,
                                                   std::int64_t first = -1);
    // Cache of the last table: [T, d] cos and sin for positions 0..maxPos on one device.
    torch::Tensor m_cos, m_sin;
    std::int64_t m_cachedMax = -1;
    std::vector<double> m_cachedFreq;
    double m_cachedScale = 0, m_cachedMscale = 0;
};

/// ALiBi (§4.3): fixed per-head slopes, bias -slope_h * (i - j). Equal to the reference's
/// slope * (j - (T-1)) up to a per-row constant, which softmax ignores.
class AlibiImpl : public PositionEncodingImpl {
public:
    explicit AlibiImpl(int numHeads);
    torch::Tensor logitBias(const PositionSpan& pos) override;
    std::map<std::string, std::vector<double>> constants() const override;
    static std::vector<double> slopes(int numHeads);

private:
    torch::Tensor m_slopes;  // [h]
    torch::Tensor m_cached;
    std::int64_t m_cachedTq = -1, m_cachedTk = -1, m_cachedQ0 = -1, m_cachedK0 = -1;
};

/// Build the PE of one layer for a Llama config. Throws Error(Config) for a type this build
/// cannot construct.
PositionEncoding makePositionEncoding(const RunConfig& config);

}  // namespace lengen::engine::model
