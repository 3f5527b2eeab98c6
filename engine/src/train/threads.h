#pragma once
// The CPU thread policy shared by training, evaluation and probes.

namespace lengen::engine::training {

/// `threads` > 0: that many BLAS threads; 0: one for models narrower than 128, else all cores.
/// Torch's own pool gets one thread whenever OpenBLAS is the BLAS (see threads.cpp).
void applyThreadPolicy(int threads, int hiddenSize);

}  // namespace lengen::engine::training
