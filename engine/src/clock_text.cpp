#include "clock_text.h"

#include <chrono>
#include <ctime>

namespace lengen::engine {

std::string utcNow(const char* format)
{
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, format, &tm);
    return buf;
}

}  // namespace lengen::engine
