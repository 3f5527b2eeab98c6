#pragma once
// Opening a run file to read it: what run_reader.cpp (metadata, log; no Torch) and
// checkpoint_reader.cpp (the checkpoints' tensors) share.

#include <cstdint>
#include <string>

#include "io/h5.h"

namespace lengen::engine::io {

/// The run file opened SWMR-read, after checking it is a LenGen run of a format this build
/// reads: Error(RunFile) naming the file otherwise.
H5Handle openRunForReading(const std::string& path);

/// /checkpoint/current: 0 or 1, or -1 while the run has no checkpoint; Error(RunFile) for any
/// other value.
std::int64_t currentCheckpointSlot(hid_t file, const std::string& path);

}  // namespace lengen::engine::io
