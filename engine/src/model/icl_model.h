#pragma once
// The in-context-learning wrapper of reference §3.1–3.2: interleave x and (zero-widened) y
// tokens, project D -> H without bias, run a backbone, read a bias-free scalar head at the x
// tokens. Parameter names: input.weight, transformer.*, output.weight.

#include <torch/torch.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "model/gpt2.h"
#include "model/llama.h"
#include "model/mamba.h"

namespace lengen::engine {
struct RunConfig;
}

namespace lengen::engine::model {

struct ForwardOptions {
    std::int64_t positionOffset = 0;  ///< first token's position (0 in training)
    /// The tokens' positions, int64 [2N] ascending on the CPU (randomized positions in
    /// training, Ruoss et al. 2023); undefined: positionOffset, positionOffset + 1, ...
    torch::Tensor positions;
    bool returnAttention = false;  ///< fill ForwardResult::attention
    /// Token rows (queries) whose attention to keep, int64 [R]; undefined = all 2N rows.
    torch::Tensor attentionRows;
    /// Compute attention scores this many query rows at a time (0 = all): bounds memory at
    /// long lengths without changing the results.
    std::int64_t queryChunk = 0;
    torch::ScalarType attentionType = torch::kFloat32;  ///< type of the returned weights
    /// An evaluation-time intervention (docs/interventions.md); none = the model as trained.
    const Intervention* intervention = nullptr;
};

struct ForwardResult {
    torch::Tensor predictions;             ///< [B, N], read at token 2i (x_i)
    std::vector<torch::Tensor> attention;  ///< per layer [B, heads, R, 2N] when asked
};

class InContextModelImpl : public torch::nn::Module {
public:
    explicit InContextModelImpl(const RunConfig& config);
    /// xs [B, N, D], ys [B, N] -> predictions [B, N].
    ForwardResult forward(const torch::Tensor& xs, const torch::Tensor& ys,
                          const ForwardOptions& options = {});
    /// Interleaved tokens z [B, 2N, D]: x_0, (y_0,0,..,0), x_1, ...
    static torch::Tensor interleave(const torch::Tensor& xs, const torch::Tensor& ys);
    /// Reference initialisation from `gen` (Llama: every Linear N(0, 0.02^2), norms 1;
    /// Mamba: its own scheme, heads with PyTorch's default uniform init).
    void initialise(at::Generator& gen);
    std::int64_t parameterCount() const;
    /// Derived PE constants of layer 0, e.g. {"slopes": [...]} for ALiBi.
    std::map<std::string, std::vector<double>> positionConstants() const;
    bool hasAttention() const { return m_backbone->hasAttention(); }
    /// Where stochastic layers (GPT-2 dropout) draw from: the run's generator.
    void setDropoutGenerator(const at::Generator& gen);
    /// Before a training step on a GPU: seeds the device's generator for the step's dropout
    /// masks (Gpt2Impl::seedDeviceDropout; no lock and no draw without dropout). Hold the lock
    /// until the step's forward has run or its graph has been replayed.
    std::unique_lock<std::mutex> seedDeviceDropout(const torch::Device& device);
    /// How the backbone computes and on which threads (kernel_policy.h): set by the session.
    void setKernelPolicy(KernelPolicy policy) { m_backbone->setKernelPolicy(std::move(policy)); }
    const KernelPolicy& kernelPolicy() const { return m_backbone->kernelPolicy(); }
    /// The Llama backbone (null for the others): its layers' position encodings, which the
    /// members' batched forward (member_model.h) shares.
    std::shared_ptr<LlamaImpl> llamaBackbone() const { return m_llama; }

private:
    torch::nn::Linear m_input{nullptr}, m_output{nullptr};
    std::shared_ptr<BackboneImpl> m_backbone;
    std::shared_ptr<LlamaImpl> m_llama;  // set when the backbone is Llama
    std::shared_ptr<MambaImpl> m_mamba;  // set when the backbone is Mamba
    std::shared_ptr<Gpt2Impl> m_gpt2;    // set when the backbone is GPT-2
};
TORCH_MODULE(InContextModel);

/// Build the model a config describes. Throws Error(Config) for a backbone or PE this build
/// does not provide.
InContextModel buildModel(const RunConfig& config);

}  // namespace lengen::engine::model
