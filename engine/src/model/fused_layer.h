#pragma once
// A Llama decoder stack (and one GPT-2 block, fused_gpt2.cpp, and one Mamba block,
// fused_mamba.cpp) as a single autograd node on the CPU: forward and backward written
// out over raw buffers (cpu_kernels.h), with q/k/v in one matrix product, gate/up in one, and
// attention computed straight from the projection's output. It computes what the module path
// (llama.cpp, attention.cpp) computes, to float rounding (tests/engine/tst_fused_layer.cpp
// checks forward and every gradient for each PE), with ~3x fewer passes over memory and no
// per-op graph bookkeeping: bench/README.md has the figures. Training only; evaluation, probes
// and other devices keep the module path. Each node splits its batch over the KernelContext it
// is given (the session's, through the backbone's KernelPolicy) and keeps it for its backward.

#include <torch/torch.h>

#include <array>
#include <mutex>

#include "model/kernel_policy.h"

namespace lengen::engine::model {

/// One Llama layer's weights and its PE's tables.
struct FusedLayerParams {
    torch::Tensor inputNorm;   ///< [H]
    torch::Tensor q, k, v, o;  ///< [H, H] each (out, in)
    torch::Tensor postNorm;    ///< [H]
    torch::Tensor gate, up;    ///< [I, H] each
    torch::Tensor down;        ///< [H, I]
    /// [T, d] each, rotating q and k where defined (k by cosK/sinK instead where those are
    /// defined: xPos).
    torch::Tensor cos, sin, cosK, sinK;
    /// [heads|1, T, T], added to the scaled logits where defined (its gradient flows back when
    /// it requires one: FIRE).
    torch::Tensor bias;
    int heads = 1;
    double eps = 1e-6;
};

/// Buffers a fused stack keeps from one step to the next (its saved rows, its weight copies,
/// its gradient sums, its backward's scratch), so that a step allocates none of them. A buffer
/// is taken again only when nothing else holds it any more: the graph that saved it was freed
/// and the gradients that view it were dropped; otherwise a new one replaces it.
class FusedScratch {
public:
    enum Slot { Rows, Weights, Grads, Backward, kSlots };
    /// A float32 CPU tensor of at least `floats` elements, in `slot`.
    torch::Tensor take(Slot slot, std::int64_t floats);

private:
    std::mutex m_mutex;
    std::array<torch::Tensor, kSlots> m_slots;
};

/// Whether a forward of `x` under `policy` takes the fused nodes: the Fused path, autograd
/// recording, x float32 [B, T, H] on the CPU. (The callers add their own conditions: no tap,
/// no dropout, no intervention.)
bool fusedApplies(const KernelPolicy& policy, const torch::Tensor& x);

/// x [B, T, H] through `layers` in order, each x + attn(norm(x)), then + mlp(norm(...)) as
/// LlamaLayerImpl::forward, as one autograd node: one wake-up of the context's threads for the
/// whole forward and one for the backward, each thread taking its batch items through every
/// layer. With evenRowsOut only rows 0, 2, 4, ... of the output (T even): the last layer's
/// out-projection, MLP and their gradients run on those rows alone
/// (LlamaImpl::forwardEvenRows); output [B, T/2, H]. `scratch` keeps buffers between
/// calls (null: buffers for this call alone); the graph holds a share of it.
torch::Tensor fusedLlamaStack(const torch::Tensor& x, const std::vector<FusedLayerParams>& layers,
                              bool evenRowsOut, const kernels::KernelContext& context,
                              std::shared_ptr<FusedScratch> scratch);

struct FusedGpt2Params {
    torch::Tensor ln1Weight, ln1Bias;          ///< [H]
    torch::Tensor attnWeight, attnBias;        ///< c_attn: [H, 3H] (in, out), [3H]
    torch::Tensor projWeight, projBias;        ///< attn.c_proj: [H, H], [H]
    torch::Tensor ln2Weight, ln2Bias;          ///< [H]
    torch::Tensor fcWeight, fcBias;            ///< mlp.c_fc: [H, 4H], [4H]
    torch::Tensor mlpProjWeight, mlpProjBias;  ///< mlp.c_proj: [4H, H], [H]
    int heads = 1;
    double eps = 1e-5;
    bool evenRowsOut = false;  ///< as fusedLlamaStack's
};

/// One GPT-2 block without dropout, as Gpt2BlockImpl::forward with every p = 0:
/// x + c_proj(attn(ln_1(x))), then + mlp.c_proj(gelu_tanh(c_fc(ln_2(...)))). x [B, T, H].
torch::Tensor fusedGpt2Block(const torch::Tensor& x, const FusedGpt2Params& p,
                             const kernels::KernelContext& context);

struct FusedMambaParams {
    torch::Tensor norm;                  ///< [H]
    torch::Tensor inProj;                ///< [2E, H]
    torch::Tensor convWeight, convBias;  ///< [E, 1, K], [E]
    torch::Tensor xProj;                 ///< [R + 2N, E]
    torch::Tensor dtWeight, dtBias;      ///< [E, R], [E]
    torch::Tensor aLog, d;               ///< [E, N], [E]
    torch::Tensor outProj;               ///< [H, E]
    double eps = 1e-5;
};

/// One Mamba block (fused_mamba.cpp), as MambaBlockImpl::forward: x + mixer(rms_norm(x)).
torch::Tensor fusedMambaBlock(const torch::Tensor& x, const FusedMambaParams& p,
                              const kernels::KernelContext& context);

}  // namespace lengen::engine::model
