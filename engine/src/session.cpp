// The session switches from the environment: what `lengen` and the studio read once at start
// (lengen/engine/session.h). Torch-free, so lengen-light reads them as lengen-core does;
// applying them (threads, the allocator) is train/threads.cpp's.

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "lengen/engine/session.h"

namespace lengen::engine {

SessionSwitches sessionSwitchesFromEnvironment()
{
    auto off = [](const char* name) {
        const char* v = std::getenv(name);
        return v && std::strcmp(v, "0") == 0;
    };
    SessionSwitches s;
    s.fused = !off("LENGEN_FUSED");
    s.fusedAttention = !off("LENGEN_FUSED_ATTENTION");
    s.cudaGraphs = !off("LENGEN_CUDA_GRAPHS");
    s.parallelScan = !off("LENGEN_PARALLEL_SCAN");
    s.deviceFusion = !off("LENGEN_DEVICE_FUSION");
    const auto on = [](const char* name) {
        const char* v = std::getenv(name);
        return v && std::strcmp(v, "1") == 0;
    };
    s.onednnGemm = !off("LENGEN_ONEDNN");
    s.deviceKernels = on("LENGEN_DEVICE_KERNELS");
    s.deviceRotary = !off("LENGEN_DEVICE_ROTARY");
    s.prefetchBatch = on("LENGEN_PREFETCH");
    s.threadPolicy = std::getenv("LENGEN_NO_THREAD_POLICY") == nullptr;
    if (const char* cli = std::getenv("LENGEN_CLI"); cli && *cli && ::access(cli, X_OK) == 0)
        s.cellExecutable = cli;
    return s;
}

}  // namespace lengen::engine
