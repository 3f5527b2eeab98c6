#pragma once
// Llama decoder backbone as configured by the reference (§3.3): pre-RMSNorm blocks with causal
// attention and a SwiGLU MLP, final norm. Module names give the reference's state-dict keys
// (transformer.layers.{i}.self_attn.q_proj.weight, ...). No token embedding table: inputs
// arrive as embeddings (the reference's unused `embed_tokens` is skipped on import).

#include <torch/torch.h>

#include "model/attention.h"
#include "model/fused_layer.h"

namespace lengen::engine {
struct RunConfig;
}

namespace lengen::engine::model {

/// g * v / sqrt(mean(v^2) + eps), g initialised to 1.
class RmsNormImpl : public torch::nn::Module {
public:
    RmsNormImpl(int hidden, double eps);
    /// `fused`: LibTorch's rms_norm (one kernel each way on a GPU; KernelPolicy::fusesOnDevice).
    torch::Tensor forward(const torch::Tensor& x, bool fused = false);
    const torch::Tensor& weight() const { return m_weight; }
    double eps() const { return m_eps; }

private:
    torch::Tensor m_weight;
    double m_eps;
};
TORCH_MODULE(RmsNorm);

/// down(silu(gate(x)) * up(x)), no biases; H -> intermediate -> H.
class SwiGluImpl : public torch::nn::Module {
public:
    SwiGluImpl(int hidden, int intermediate);
    /// `fused`: SwiGLU's gate as one kernel each way (device/device_fused.h).
    torch::Tensor forward(const torch::Tensor& x, bool fused = false);
    const torch::Tensor& gateWeight() const { return m_gate->weight; }  ///< [I, H]
    const torch::Tensor& upWeight() const { return m_up->weight; }      ///< [I, H]
    const torch::Tensor& downWeight() const { return m_down->weight; }  ///< [H, I]

private:
    torch::nn::Linear m_gate{nullptr}, m_up{nullptr}, m_down{nullptr};
};
TORCH_MODULE(SwiGlu);

class LlamaLayerImpl : public torch::nn::Module {
public:
    explicit LlamaLayerImpl(const RunConfig& config);
    torch::Tensor forward(const torch::Tensor& h, const PositionSpan& pos, AttentionTap* tap,
                          const KernelPolicy& policy);
    /// Whether this layer can take the fused stack (fused_layer.h) for a forward of h at pos.
    bool fusedFor(const torch::Tensor& h, const PositionSpan& pos,
                  const KernelPolicy& policy) const;
    /// Its weights and its PE's tables at `pos`, for the fused stack (fused_layer.h).
    FusedLayerParams fusedParams(const PositionSpan& pos) const;
    PositionEncoding positionEncoding() const { return m_attn->positionEncoding(); }

private:
    RmsNorm m_inputNorm{nullptr}, m_postNorm{nullptr};
    Attention m_attn{nullptr};
    SwiGlu m_mlp{nullptr};
    bool m_fusable = true;  // the encoding's fusedCpu (CoPE's bias comes from the content)
};
TORCH_MODULE(LlamaLayer);

/// Backbone interface shared by Llama, Mamba and GPT-2: [B, T, H] -> [B, T, H].
class BackboneImpl : public torch::nn::Module {
public:
    /// `tap`, if non-null, chunks the attention scores and may capture the weights of every
    /// layer (attention backbones only; others ignore it).
    virtual torch::Tensor forward(const torch::Tensor& h, const PositionSpan& pos,
                                  AttentionTap* tap) = 0;
    virtual bool hasAttention() const { return true; }
    /// Rows 0, 2, 4, ... of forward(h, pos, nullptr) ([B, T/2, H], T even: the x tokens the
    /// read-out takes), where the backbone saves work by computing only those in its last
    /// layer (Llama's fused training path: its out-projection and MLP on half the rows, issue
    /// 57); undefined where it cannot, and the caller takes forward.
    virtual torch::Tensor forwardEvenRows(const torch::Tensor& h, const PositionSpan& pos)
    {
        (void)h;
        (void)pos;
        return {};
    }
    /// How the layers compute and on which threads (kernel_policy.h). Set by the session that
    /// owns the model; a model built without one takes the module path on the calling thread.
    void setKernelPolicy(KernelPolicy policy) { m_policy = std::move(policy); }
    const KernelPolicy& kernelPolicy() const { return m_policy; }

protected:
    KernelPolicy m_policy;
};

class LlamaImpl : public BackboneImpl {
public:
    explicit LlamaImpl(const RunConfig& config);
    torch::Tensor forward(const torch::Tensor& h, const PositionSpan& pos,
                          AttentionTap* tap) override;
    torch::Tensor forwardEvenRows(const torch::Tensor& h, const PositionSpan& pos) override;
    /// The PE of one layer (for constants reporting).
    PositionEncoding positionEncoding(size_t layer) const;

private:
    /// Whether every layer takes the fused stack for this forward (LlamaLayerImpl::fusedFor).
    bool fusedFor(const torch::Tensor& h, const PositionSpan& pos) const;
    torch::Tensor fusedStack(const torch::Tensor& h, const PositionSpan& pos, bool evenRowsOut);

    torch::nn::ModuleList m_layers{nullptr};
    std::vector<LlamaLayer> m_layerList;
    RmsNorm m_norm{nullptr};
    std::shared_ptr<FusedScratch> m_scratch = std::make_shared<FusedScratch>();
};

}  // namespace lengen::engine::model
