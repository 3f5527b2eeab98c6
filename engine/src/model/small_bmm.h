#pragma once
// Batched matrix product for attention on the CPU. ATen's CPU bmm (built without MKL, as
// Debian's) runs one select + dispatched mm per batch item, ~10 us each: with B * heads = 128
// items that is a third of a quick-preset training step. This calls the system BLAS sgemm
// directly per item on raw pointers, forward and backward. bench/README.md has the figures.

#include <torch/torch.h>

namespace lengen::engine::model {

/// op(a) @ op(b) over the leading dimensions: a [..., m, k] (or [..., k, m] if transA),
/// b [..., k, n] (or [..., n, k] if transB) -> [..., m, n]. Falls back to torch::matmul off the
/// CPU, for non-float32 tensors, or when no BLAS sgemm is loaded.
torch::Tensor batchedMatmul(const torch::Tensor& a, const torch::Tensor& b, bool transA,
                            bool transB);

/// Whether the direct-BLAS path is available in this process.
bool hasDirectBlas();

}  // namespace lengen::engine::model
