#pragma once
// Accepted ranges of the command-line values (docs/cli.md, "Accepted ranges"). Like config
// values, a value outside its range is a usage error (exit 64) that names the option, raised
// while parsing, before any file is opened: a zero length used to end in SIGFPE, a huge count
// in LibTorch's allocator (exit 1), a huge step count or thread count in a hang, and a negative
// seed wrapped silently to 2^64 - 1.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>

namespace lengen::cli {

/// A finite number in [lo, hi] (integral when `integer`): NaN, infinities, trailing text and
/// values that would wrap or overflow the option's type are refused.
inline CLI::Validator inRange(double lo, double hi, bool integer = true)
{
    auto text = [](double v) {
        std::string s = std::to_string(v);
        s.erase(s.find_last_not_of('0') + 1);
        if (!s.empty() && s.back() == '.')
            s.pop_back();
        return s;
    };
    const std::string range = "[" + text(lo) + ", " + text(hi) + "]";
    return CLI::Validator(
        [=](std::string& value) -> std::string {
            errno = 0;
            char* end = nullptr;
            const double v = std::strtod(value.c_str(), &end);
            const bool parsed = end && end != value.c_str() && *end == '\0' && errno == 0;
            if (!parsed || !std::isfinite(v) || v < lo || v > hi || (integer && v != std::floor(v)))
                return "must be " + std::string(integer ? "a whole number" : "a number") + " in " +
                       range + ", not " + value;
            return {};
        },
        range);
}

/// Thread counts: 0 (the default policy) up to four per core.
inline CLI::Validator threadRange()
{
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    return inRange(0, 4.0 * cores);
}

/// Seeds: 0 .. 2^53 (every such seed is stored exactly, also where a reader takes it as double).
inline CLI::Validator seedRange() { return inRange(0, 9007199254740992.0); }

}  // namespace lengen::cli
