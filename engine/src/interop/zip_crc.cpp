#include "interop/zip_crc.h"

#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <vector>

namespace lengen::engine::interop {

namespace {

std::uint32_t readLe(const unsigned char* p, int n)
{
    std::uint32_t v = 0;
    for (int i = 0; i < n; ++i)
        v |= static_cast<std::uint32_t>(p[i]) << (8 * i);
    return v;
}

}  // namespace

std::map<std::string, std::uint32_t> zipRecordCrcs(const std::string& path)
{
    std::map<std::string, std::uint32_t> out;
    std::ifstream in(path, std::ios::binary);
    in.seekg(0, std::ios::end);
    const std::uint64_t size = static_cast<std::uint64_t>(in.tellg());
    const std::uint64_t tail = std::min<std::uint64_t>(size, 65536 + 22 + 20);
    std::vector<unsigned char> t(tail);
    in.seekg(static_cast<std::streamoff>(size - tail));
    in.read(reinterpret_cast<char*>(t.data()), static_cast<std::streamsize>(tail));
    if (!in || tail < 22)
        return out;
    std::int64_t eocd = -1;
    for (std::int64_t i = static_cast<std::int64_t>(tail) - 22; i >= 0 && eocd < 0; --i)
        if (readLe(&t[i], 4) == 0x06054b50)
            eocd = i;
    if (eocd < 0)
        return out;
    std::uint64_t cdOffset = readLe(&t[eocd + 16], 4), cdSize = readLe(&t[eocd + 12], 4);
    if ((cdOffset == 0xffffffffu || cdSize == 0xffffffffu) && eocd >= 20 &&
        readLe(&t[eocd - 20], 4) == 0x07064b50) {
        // zip64: the locator names the zip64 end record, which holds the real offset and size.
        const std::uint64_t rec =
            readLe(&t[eocd - 12], 4) | (std::uint64_t(readLe(&t[eocd - 8], 4)) << 32);
        unsigned char z[56];
        in.seekg(static_cast<std::streamoff>(rec));
        in.read(reinterpret_cast<char*>(z), 56);
        if (!in || readLe(z, 4) != 0x06064b50)
            return out;
        cdSize = readLe(z + 40, 4) | (std::uint64_t(readLe(z + 44, 4)) << 32);
        cdOffset = readLe(z + 48, 4) | (std::uint64_t(readLe(z + 52, 4)) << 32);
    }
    if (cdOffset > size || cdSize > size - cdOffset || cdSize > (64u << 20))
        return out;
    std::vector<unsigned char> cd(cdSize);
    in.seekg(static_cast<std::streamoff>(cdOffset));
    in.read(reinterpret_cast<char*>(cd.data()), static_cast<std::streamsize>(cdSize));
    if (!in)
        return out;
    for (std::uint64_t p = 0; p + 46 <= cdSize && readLe(&cd[p], 4) == 0x02014b50;) {
        const std::uint32_t nameLen = readLe(&cd[p + 28], 2), extra = readLe(&cd[p + 30], 2),
                            comment = readLe(&cd[p + 32], 2);
        if (p + 46 + nameLen > cdSize)
            break;
        std::string name(reinterpret_cast<const char*>(&cd[p + 46]), nameLen);
        const auto slash = name.find('/');
        out[slash == std::string::npos ? name : name.substr(slash + 1)] = readLe(&cd[p + 16], 4);
        p += 46 + nameLen + extra + comment;
    }
    return out;
}

std::uint32_t crc32Of(const void* data, std::size_t size)
{
    auto crc = crc32(0L, Z_NULL, 0);
    const auto* bytes = static_cast<const Bytef*>(data);
    for (std::size_t done = 0; done < size;) {
        const auto n = static_cast<uInt>(std::min<std::size_t>(size - done, 1u << 30));
        crc = crc32(crc, bytes + done, n);
        done += n;
    }
    return static_cast<std::uint32_t>(crc);
}

}  // namespace lengen::engine::interop
