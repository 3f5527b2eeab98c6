#pragma once
// Helpers shared by the h5*.cpp files of the HDF5 layer; not part of its interface.

#include "io/h5.h"

namespace lengen::engine::io {

/// UTF-8 string type: fixed-length NUL-padded of `bytes` bytes (at least 1), or variable-length
/// for kVariableString; caller closes it.
constexpr size_t kVariableString = 0;
hid_t stringType(size_t bytes);

/// Refuses (Error RunFile, naming `path`) a file whose global heap collections, where
/// variable-length strings live, are damaged: HDF5 1.10 would crash or hang reading them.
/// `object` is any open object of the file. Walks a file once per size and modification time.
void checkGlobalHeaps(hid_t object, const std::string& path);

/// Throws throwH5(kind, what, path) when an HDF5 call returned a negative id or status.
template <typename T>
void check(T result, ErrorKind kind, const std::string& what, const std::string& path)
{
    if (result < 0)
        throwH5(kind, what, path);
}

}  // namespace lengen::engine::io
