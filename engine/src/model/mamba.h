#pragma once
// Mamba backbone (reference §3.4, HuggingFace MambaModel as configured): blocks
// h = h + Mixer(RMSNorm(h)) and a final RMSNorm (eps 1e-5). Module names give the reference's
// keys: backbone.layers.{i}.norm.weight, backbone.layers.{i}.mixer.{A_log, D, conv1d.weight,
// conv1d.bias, in_proj.weight, x_proj.weight, dt_proj.weight, dt_proj.bias, out_proj.weight},
// backbone.norm_f.weight. The unused token-embedding table is left out.

#include <torch/torch.h>

#include "model/llama.h"

namespace lengen::engine::model {

struct FusedMambaParams;

struct MambaSizes {
    int hidden = 256;  ///< H
    int state = 16;    ///< N_s
    int inner = 512;   ///< E = expand (2) * H
    int dtRank = 16;   ///< R = ceil(H / 16)
    int convKernel = 4;
    double eps = 1e-5;
};

class MambaMixerImpl : public torch::nn::Module {
public:
    explicit MambaMixerImpl(const MambaSizes& sizes);
    /// [B, T, H] -> [B, T, H]; `dtScale` multiplies the step Delta (mamba_dt, evaluation only).
    /// u [B, T, H] -> [B, T, H]; the scan runs on `kernels`' threads.
    torch::Tensor forward(const torch::Tensor& u, double dtScale, const KernelPolicy& policy);
    /// HF Mamba initialisation from `gen` (PyTorch-default Linear/conv init, dt bias as
    /// inverse softplus of a log-uniform step in [1e-3, 1e-1], A_log = ln(n + 1), D = 1).
    void initialise(at::Generator& gen);
    /// The mixer's parameters for the fused block (fused_layer.h); the norm is left empty.
    FusedMambaParams fusedParams() const;

private:
    MambaSizes m_s;
    torch::nn::Linear m_inProj{nullptr}, m_xProj{nullptr}, m_dtProj{nullptr}, m_outProj{nullptr};
    torch::nn::Conv1d m_conv{nullptr};
    torch::Tensor m_aLog, m_d;
};
TORCH_MODULE(MambaMixer);

class MambaBlockImpl : public torch::nn::Module {
public:
    explicit MambaBlockImpl(const MambaSizes& sizes);
    torch::Tensor forward(const torch::Tensor& h, double dtScale, const KernelPolicy& policy);
    MambaMixer mixer() const { return m_mixer; }

private:
    RmsNorm m_norm{nullptr};
    MambaMixer m_mixer{nullptr};
};
TORCH_MODULE(MambaBlock);

class MambaImpl : public BackboneImpl {
public:
    MambaImpl(const MambaSizes& sizes, int layers);
    torch::Tensor forward(const torch::Tensor& h, const PositionSpan& pos,
                          AttentionTap* tap) override;
    bool hasAttention() const override { return false; }
    void initialise(at::Generator& gen);

private:
    torch::nn::ModuleList m_layers{nullptr};
    std::vector<MambaBlock> m_blocks;
    RmsNorm m_norm{nullptr};
};

/// PyTorch's default nn.Linear / nn.Conv1d initialisation: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
/// for weight and bias.
void defaultUniformInit(torch::Tensor& weight, torch::Tensor* bias, at::Generator& gen);

}  // namespace lengen::engine::model
