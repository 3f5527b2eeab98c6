#pragma once
// Helpers shared by the h5*.cpp files of the HDF5 layer; not part of its interface.

#include "io/h5.h"

namespace lengen::engine::io {

/// Variable-length UTF-8 string type, or the fixed 16-byte status type; caller closes it.
hid_t stringType(bool variable);

/// Throws throwH5(kind, what, path) when an HDF5 call returned a negative id or status.
template <typename T>
void check(T result, ErrorKind kind, const std::string& what, const std::string& path)
{
    if (result < 0)
        throwH5(kind, what, path);
}

}  // namespace lengen::engine::io
