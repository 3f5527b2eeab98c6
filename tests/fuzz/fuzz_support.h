#pragma once
// Shared by the fuzz targets (tests/fuzz/README.md). A target's contract: whatever the bytes,
// the engine either returns or throws lengen::engine::Error — the exception the CLI turns into
// a sentence and a documented exit code. Anything else (a signal, a sanitizer report, another
// exception type, which the CLI would print as "internal error") is a finding.

#include <cstddef>
#include <cstdint>
#include <string>

#include "lengen/engine/errors.h"

namespace lengen::fuzz {

/// A private scratch folder for this process (under $TMPDIR, removed at exit): the HDF5
/// readers take paths, so each input is written to a file there first.
const std::string& scratchDir();

/// Writes `size` bytes to scratchDir()/name and returns the path.
std::string writeScratch(const std::string& name, const std::uint8_t* data, std::size_t size);

[[noreturn]] void finding(const char* what, const std::string& message);

/// Runs `body`; an Error is an expected outcome, any other exception aborts with its text.
template <typename Body>
void expectOnlyErrors(const char* what, Body&& body)
{
    try {
        body();
    } catch (const lengen::engine::Error&) {
        // The documented outcome for bad input.
    } catch (const std::exception& e) {
        finding(what, std::string("escaped as a non-engine exception: ") + e.what());
    }
}

}  // namespace lengen::fuzz
