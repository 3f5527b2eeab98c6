#pragma once
// Opening a run file to read it: what run_reader.cpp (metadata, log; no Torch) and
// checkpoint_reader.cpp (the checkpoints' tensors) share.

#include <cstdint>
#include <string>

#include "io/h5.h"
#include "lengen/engine/run_file.h"

namespace lengen::engine::io {

/// The run file opened SWMR-read, after checking it is a LenGen run of a format this build
/// reads: Error(RunFile) naming the file otherwise.
H5Handle openRunForReading(const std::string& path);

/// /checkpoint/current: 0 or 1, or -1 while the run has no checkpoint; Error(RunFile) for any
/// other value.
std::int64_t currentCheckpointSlot(hid_t file, const std::string& path);

/// The root attributes of runInfoFields() into info (run_info_fields.cpp); the caller holds the
/// HDF5 lock. Error(RunFile) naming the file and attribute for a required one missing.
void readInfoAttributes(hid_t file, const std::string& path, RunFileInfo& info);

}  // namespace lengen::engine::io
