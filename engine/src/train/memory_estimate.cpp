#include "train/memory_estimate.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "lengen/engine/encodings.h"
#include "lengen/engine/errors.h"

namespace lengen::engine::training {

namespace {

// Weights of one block, by backbone (H hidden, I MLP width, n Mamba state size).
double blockParameters(const RunConfig& c)
{
    const ModelConfig& m = c.model;
    const double h = m.hiddenSize, i = std::max(m.intermediateSize, 1);
    switch (m.backbone) {
    case Backbone::Gpt2:  // attention 4H^2 + MLP 2HI, biases, two LayerNorms
        return 4 * h * h + 2 * h * i + 9 * h + i;
    case Backbone::Mamba: {  // in_proj H->4H, conv, x_proj, dt_proj, A, D, out_proj 2H->H, norm
        const double inner = 2 * h, n = m.stateSize, dtRank = std::ceil(h / 16);
        return h * 2 * inner + inner * 4 + inner * (dtRank + 2 * n) + dtRank * inner + inner +
               inner * n + inner + inner * h + h;
    }
    case Backbone::Llama:
    default: {  // q, k, v, o; gate, up, down; two RMSNorms; the encoding's own weights
        // The encoding's own weights (FIRE's MLP, T5's table, …): its row of the table says.
        const auto& e = encodingOf(c);
        return 4 * h * h + 3 * h * i + 2 * h + (e.layerParameters ? e.layerParameters(c) : 0.0);
    }
    }
}

// Floats one block keeps per token for the backward, and per (head, query, key) pair.
void activationsPerToken(const ModelConfig& m, double& perToken, double& perPair)
{
    const double h = m.hiddenSize, i = std::max(m.intermediateSize, 1);
    switch (m.backbone) {
    case Backbone::Mamba:
        perToken = 2 * h * (3.0 * m.stateSize + 8) + 4 * h;
        perPair = 0;
        break;
    case Backbone::Gpt2:
        perToken = 12 * h + 2 * i;
        perPair = 3;  // scores, probabilities, dropout mask
        break;
    case Backbone::Llama:
    default:
        perToken = 12 * h + 3 * i;
        perPair = 2;
        break;
    }
}

}  // namespace

MemoryEstimate estimateTraining(const RunConfig& c)
{
    const ModelConfig& m = c.model;
    MemoryEstimate e;
    const double h = m.hiddenSize, dims = std::max(c.inputDims(), 1);
    // Read-in (D+1 -> H) and read-out (H -> 1), final norm, GPT-2's learned positions.
    double p = (dims + 1) * h + h + h + 1;
    if (m.backbone == Backbone::Gpt2)
        p += std::max(double(m.maxPositionEmbeddings), 2.0 * c.trainPoints()) * h;
    p += m.numLayers * blockParameters(c);
    e.parameterCount = p;
    e.stateBytes = 4.0 * 4 * p;  // weights, gradients, exp_avg, exp_avg_sq
    double perToken = 0, perPair = 0;
    activationsPerToken(m, perToken, perPair);
    if (m.backbone == Backbone::Llama)
        perPair += encodingOf(c).pairActivations;
    const double batch = c.training.batchSize, tokens = 2.0 * c.trainPoints();
    const double heads = m.backbone == Backbone::Mamba ? 0 : m.numHeads;
    e.activationBytes =
        4.0 * batch * m.numLayers * (tokens * perToken + heads * tokens * tokens * perPair);
    e.activationBytes += 4.0 * batch * tokens * (dims + 2 * h);  // inputs, embeddings, output
    return e;
}

double physicalMemoryBytes()
{
    const long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? double(pages) * double(size) : 0.0;
}

std::string bytesText(double bytes)
{
    const char* units[] = {"bytes", "KB", "MB", "GB", "TB", "PB"};
    int u = 0;
    while (bytes >= 1000 && u < 5) {
        bytes /= 1000;
        ++u;
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, bytes < 10 && u > 0 ? "%.1f %s" : "%.0f %s", bytes, units[u]);
    return buf;
}

void checkTrainingFits(const RunConfig& config, const std::string& device, double availableBytes,
                       int members)
{
    if (device.rfind("cpu", 0) != 0 || availableBytes <= 0)
        return;
    const auto e = estimateTraining(config);
    if (e.total() * members <= availableBytes)
        return;
    const std::string file = config.sourceFile.empty() ? "the config" : config.sourceFile;
    char params[32];
    std::snprintf(params, sizeof params, "%.3g", e.parameterCount);
    const std::string each = members > 1 ? std::to_string(members) + " members need about " +
                                               bytesText(e.total() * members) + ", each " +
                                               bytesText(e.total())
                                         : "training needs about " + bytesText(e.total());
    throw Error(ErrorKind::Config,
                file + ": " + each + " (" + bytesText(e.stateBytes) +
                    " for the weights, gradients and AdamW state of " + params + " parameters, " +
                    bytesText(e.activationBytes) +
                    " for one step's activations); this machine has " + bytesText(availableBytes) +
                    ". Lower model.hidden_size, model.num_hidden_layers, "
                    "training.per_device_train_batch_size or the number of points.");
}

}  // namespace lengen::engine::training
