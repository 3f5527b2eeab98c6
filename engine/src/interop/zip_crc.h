#pragma once
// CRC-32 checks of zip records. LibTorch's zip reader is built without them, so a torch.save
// file with a flipped byte in its tensor data would load silently; the importer compares each
// record with the CRC the zip's central directory lists for it.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace lengen::engine::interop {

/// CRC-32 of every record of the zip at `path`, by name without the archive folder
/// ("data.pkl", "data/0", ...); zip64 end records are understood. Empty when the central
/// directory cannot be found or read.
std::map<std::string, std::uint32_t> zipRecordCrcs(const std::string& path);

/// CRC-32 (zlib's) of `size` bytes.
std::uint32_t crc32Of(const void* data, std::size_t size);

}  // namespace lengen::engine::interop
