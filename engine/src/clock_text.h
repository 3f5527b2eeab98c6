#pragma once
// The current UTC time as text: run and result timestamps, run folder dates.

#include <string>

namespace lengen::engine {

/// strftime of the current UTC time; the default is ISO 8601 ("2026-11-23T14:07:00Z").
std::string utcNow(const char* format = "%Y-%m-%dT%H:%M:%SZ");

}  // namespace lengen::engine
