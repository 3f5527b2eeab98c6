#pragma once
// Mamba's selective scan (reference §3.4 step 6) as one autograd function:
//   s_t = exp(delta_t * A) * s_{t-1} + delta_t * B_t * v_t,   y_t = <s_t, C_t> + D * v_t
// CPU: the vectorised kernels of model/cpu_scan.h over (batch, channel) rows that never
// store the [B, T, E, N] state history (the backward recomputes one row's states, T x N
// floats). Other devices (and other dtypes): the parallel scan of model/parallel_scan.h, or the
// naive recurrence in tensor ops where `parallel` is false (LENGEN_PARALLEL_SCAN=0).

#include <torch/torch.h>

#include "model/kernel_context.h"

namespace lengen::engine::model {

/// v, delta: [B, T, E]; A: [E, N]; Bm, Cm: [B, T, N]; D: [E]  ->  y: [B, T, E]. On the CPU the
/// batch items run in slices over `context`'s threads, forward and backward.
torch::Tensor selectiveScan(const kernels::KernelContext& context, const torch::Tensor& v,
                            const torch::Tensor& delta, const torch::Tensor& A,
                            const torch::Tensor& Bm, const torch::Tensor& Cm,
                            const torch::Tensor& D, bool parallel = true);

/// The same recurrence written step by step with tensor ops (autograd does the backward).
/// The reference implementation the kernel is tested against, and the non-CPU path.
torch::Tensor selectiveScanNaive(const torch::Tensor& v, const torch::Tensor& delta,
                                 const torch::Tensor& A, const torch::Tensor& Bm,
                                 const torch::Tensor& Cm, const torch::Tensor& D);

}  // namespace lengen::engine::model
