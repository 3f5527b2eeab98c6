#pragma once
// Mamba's selective scan as a parallel scan in LibTorch ops, for devices without the CPU kernel
// (a GPU). The recurrence h_t = a_t * h_{t-1} + b_t is associative in (a, b), so it runs in
// O(log T) passes over whole tensors instead of T dependent steps:
//
//   within chunks of Q positions: Hillis-Steele doubling, log2(Q) passes over [B, T, E, N];
//   across chunks: the same doubling over the chunks' last states, [B, T/Q, E, N];
//   then every position adds its chunk's cumulative decay times the state the chunk starts from.
//
// At the standard size (T = 202, Q = 8) a Mamba block's scan is about 45 kernels forward instead
// of the sequential loop's 2,000 (about 10 a position), each over the whole tensor. The backward is
// the reverse recurrence (lambda_t = g_t + a_{t+1} lambda_{t+1}) by the same scan. linearScan's
// autograd keeps a and h ([B, T, ...] each); selectiveScanParallel keeps only its inputs and
// recomputes decay and h ([B, T, E, N]) in the backward, as the CPU kernel does: 32 Mamba layers
// otherwise hold 64 such tensors. No host synchronisation: a CUDA graph captures it.

#include <torch/torch.h>

namespace lengen::engine::model {

/// h_t = a_t * h_{t-1} + b_t along dim 1, h_{-1} = 0. a, b: [B, T, ...] of one shape -> h, the
/// same shape. `chunk` >= 1 positions per chunk (1 and >= T are plain doubling). Differentiable
/// in a and b.
torch::Tensor linearScan(const torch::Tensor& a, const torch::Tensor& b, std::int64_t chunk = 8);

/// The selective scan of selective_scan.h through linearScan: same inputs, same result.
/// v, delta: [B, T, E]; A: [E, N]; Bm, Cm: [B, T, N]; D: [E] -> y: [B, T, E].
torch::Tensor selectiveScanParallel(const torch::Tensor& v, const torch::Tensor& delta,
                                    const torch::Tensor& A, const torch::Tensor& Bm,
                                    const torch::Tensor& Cm, const torch::Tensor& D,
                                    std::int64_t chunk = 8);

}  // namespace lengen::engine::model
