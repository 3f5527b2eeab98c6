#pragma once
// The one non-cryptographic hash of LenGen: 64-bit FNV-1a. It seeds what must be the same on
// every machine (each evaluation method's prompts, an intervention's positions, an imported
// run's generator) and names a config in figure provenance ("fnv1a64:…"); changing it changes
// stored results, so it is written once.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace lengen::engine {

/// LenGen's offset basis: FNV's 14695981039346656037 without its last digit, as every copy of
/// the hash had it. Kept: it seeds stored results (a prompt set evaluated again must be the
/// same), so "fnv1a64" in provenance names this variant.
inline constexpr std::uint64_t kFnv1aOffset = 1469598103934665603ull;

/// FNV-1a over `size` bytes, continuing from `h` (the offset basis to start). Named apart from
/// the text overload: fnv1a64("text", h) would otherwise take `h` for a size.
inline std::uint64_t fnv1a64Bytes(const void* data, std::size_t size,
                                  std::uint64_t h = kFnv1aOffset)
{
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i)
        h = (h ^ bytes[i]) * 1099511628211ull;
    return h;
}

inline std::uint64_t fnv1a64(std::string_view text, std::uint64_t h = kFnv1aOffset)
{
    return fnv1a64Bytes(text.data(), text.size(), h);
}

}  // namespace lengen::engine
