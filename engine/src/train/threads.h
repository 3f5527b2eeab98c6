#pragma once
// The CPU thread and allocator policy shared by training, evaluation and probes.

namespace lengen::engine::training {

/// `threads` > 0: that many BLAS threads; 0: one for models narrower than 128, else all cores.
/// Torch's own pool gets one thread whenever OpenBLAS is the BLAS (see threads.cpp). Also
/// keeps freed heap memory for the next step (glibc mallopt, once per process).
void applyThreadPolicy(int threads, int hiddenSize);

}  // namespace lengen::engine::training
