#pragma once
// GPT-2 backbone (reference §3.5, HF GPT2Model): learned absolute positions, pre-LayerNorm
// blocks (eps 1e-5), GELU (tanh), biases everywhere, dropout. Keys: transformer.wpe.weight,
// transformer.h.{i}.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}.{weight,bias},
// transformer.ln_f.{weight,bias}; Conv1D weights are [in, out] as in HF. The unused token
// table `wte` is left out. Dropout masks come from the run's generator (reproducible, resumable).

#include <torch/torch.h>

#include <mutex>

#include "model/llama.h"

namespace lengen::engine::model {

struct Gpt2Sizes {
    int hidden = 768;
    int layers = 12;
    int heads = 12;
    int positions = 1024;  ///< n_positions = max_length
    double residDropout = 0.1, embdDropout = 0.1, attnDropout = 0.1;
};

/// HF's Conv1D: y = x W + b with W stored [in, out].
class Conv1DImpl : public torch::nn::Module {
public:
    Conv1DImpl(int in, int out);
    torch::Tensor forward(const torch::Tensor& x);
    const torch::Tensor& weight() const { return m_weight; }  ///< [in, out]
    const torch::Tensor& bias() const { return m_bias; }      ///< [out]

private:
    torch::Tensor m_weight, m_bias;
};
TORCH_MODULE(Conv1D);

class Gpt2BlockImpl;

class Gpt2Impl : public BackboneImpl {
public:
    explicit Gpt2Impl(const Gpt2Sizes& sizes);
    torch::Tensor forward(const torch::Tensor& h, const PositionSpan& pos,
                          AttentionTap* tap) override;
    torch::Tensor forwardEvenRows(const torch::Tensor& h, const PositionSpan& pos) override;
    /// The generator dropout draws its masks from (the run's); unset = no dropout.
    void setDropoutGenerator(const at::Generator& gen) { m_gen = gen; }
    /// Inverted dropout. On the CPU the mask comes from the run's generator; on a GPU it is
    /// drawn there from the device's generator, which seedDeviceDropout seeds once per step.
    torch::Tensor dropout(const torch::Tensor& x, double p);
    /// On a GPU in training with dropout: seeds the device's generator from one draw of the
    /// run's generator, so that the step's masks (drawn in turn, offsets from 0) follow from
    /// the run's (checkpointed) generator alone, eager or replayed from a CUDA graph alike.
    /// The lock returned keeps other sessions of this process off that generator: hold it
    /// until the step's forward has run (or its graph has been replayed). Elsewhere: no lock,
    /// no draw.
    std::unique_lock<std::mutex> seedDeviceDropout(const torch::Device& device);
    /// Whether dropout(x, p) would drop anything now.
    bool dropsOut(double p) const { return is_training() && p > 0 && m_gen.defined(); }
    int layers() const { return m_sizes.layers; }

private:
    Gpt2Sizes m_sizes;
    torch::nn::Embedding m_wpe{nullptr};
    torch::nn::ModuleList m_h{nullptr};
    std::vector<std::shared_ptr<Gpt2BlockImpl>> m_blocks;
    torch::nn::LayerNorm m_lnF{nullptr};
    at::Generator m_gen;
};

}  // namespace lengen::engine::model
