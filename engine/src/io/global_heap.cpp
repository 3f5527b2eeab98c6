// Checks HDF5 global heap collections before a variable-length string is read from them.
//
// Variable-length strings (earlier LenGen files, files written by h5py) live in "global heap
// collections" (GCOL blocks). HDF5 1.10 trusts the object sizes inside a collection: one
// flipped byte there makes H5Aread memcpy past the collection (SIGSEGV in H5HG_read), and a
// free-space object of size 0 makes its loader loop for ever. So before the first such read
// from a file, every collection in it is walked the way HDF5's loader walks it (1.10 format:
// "GCOL", version 1, 3 reserved bytes, 8-byte size; objects of 2-byte index, 2-byte refcount,
// 4 reserved bytes, 8-byte size, data padded to 8 bytes; index 0 is free space whose size
// counts its header) and a file whose objects do not fit their collection is refused as
// damaged. A file is walked once per (size, modification time).
// Not covered: a damaged heap ID in the attribute itself (HDF5 offers no way to read it raw).

#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "io/h5.h"
#include "io/h5_internal.h"

namespace lengen::engine::io {

namespace {

std::uint64_t little(const unsigned char* p, int bytes)
{
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i)
        v = (v << 8) | p[i];
    return v;
}

// Empty when the collection at `at` (whose 16 header bytes are in `head`) is sound.
std::string walkCollection(std::ifstream& in, std::uint64_t at, std::uint64_t fileSize)
{
    unsigned char head[16];
    in.clear();
    in.seekg(std::streamoff(at));
    if (!in.read(reinterpret_cast<char*>(head), 16))
        return {};  // no room for a header: not a collection
    const std::uint64_t size = little(head + 8, 8);
    // HDF5 makes collections of at least 4 KiB inside the file; other "GCOL" bytes (tensor
    // data, a freed collection's leftovers) are not heaps HDF5 would read: skip them.
    if (size < 4096 || size > fileSize - at)
        return {};
    std::vector<unsigned char> chunk(size);
    in.seekg(std::streamoff(at));
    if (!in.read(reinterpret_cast<char*>(chunk.data()), std::streamsize(size)))
        return "it is cut off";
    std::uint64_t p = 16;
    while (size - p >= 16) {  // a smaller tail is free space (as HDF5 reads it)
        const auto index = little(&chunk[p], 2);
        const auto objectSize = little(&chunk[p + 8], 8);
        const std::uint64_t need = index > 0 ? 16 + ((objectSize + 7) / 8) * 8 : objectSize;
        if (objectSize > size || need == 0 || need > size - p)
            return "object " + std::to_string(index) + " at byte " + std::to_string(p) +
                   " claims " + std::to_string(objectSize) + " bytes";
        p += need;
    }
    return {};
}

}  // namespace

void checkGlobalHeaps(hid_t object, const std::string& path)
{
    const ssize_t nameLength = H5Fget_name(object, nullptr, 0);
    if (nameLength <= 0)
        return;  // not in a file on disk (nothing to walk)
    std::string file(size_t(nameLength), '\0');
    H5Fget_name(object, file.data(), size_t(nameLength) + 1);
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0)
        return;
    static std::map<std::string, std::pair<off_t, std::int64_t>> walked;  // guarded by h5Mutex
    const std::pair<off_t, std::int64_t> stamp{
        st.st_size, std::int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
    const auto it = walked.find(file);
    if (it != walked.end() && it->second == stamp)
        return;
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return;
    const auto fileSize = std::uint64_t(st.st_size);
    // Find every "GCOL" + version 1 by scanning the file in blocks (overlapping by 4 bytes).
    std::vector<std::uint64_t> found;
    std::vector<char> block(1 << 20);
    for (std::uint64_t at = 0; at < fileSize;) {
        in.clear();
        in.seekg(std::streamoff(at));
        in.read(block.data(), std::streamsize(block.size()));
        const auto got = std::uint64_t(in.gcount());
        if (got < 5)
            break;
        for (std::uint64_t i = 0; i + 5 <= got; ++i)
            if (block[i] == 'G' && std::memcmp(&block[i], "GCOL\x01", 5) == 0)
                found.push_back(at + i);
        at += got - 4;
        if (got < block.size())
            break;
    }
    for (std::uint64_t at : found)
        if (const std::string why = walkCollection(in, at, fileSize); !why.empty())
            throw Error(ErrorKind::RunFile,
                        path + ": the global heap at byte " + std::to_string(at) + " is damaged (" +
                            why + "); its strings cannot be read safely (damaged file)");
    walked[file] = stamp;
}

}  // namespace lengen::engine::io
