#pragma once
// Removing a folder and everything under it, without std::filesystem::remove_all. PyPI's
// LibTorch libraries carry and export their own copy of libstdc++'s filesystem code; where one
// of them comes before libstdc++ in a program's lookup order, remove_all binds to that copy, and
// in PyTorch 2.11+cu130 it jumps to address 0 (`sweep run --mps` crashed in the daemon's
// clean-up on an H100 and again on an H200, after the link-order fix of cmake/LengenOptions).
// nftw and remove are libc's: no other library exports them. tests/code_rules.sh keeps
// remove_all out of the code.

#include <string>

namespace lengen::engine {

/// Removes `path` (a file, a link, or a folder with all it holds; links are removed, never
/// followed). True when nothing is left there, a missing path included; never throws.
bool removeTree(const std::string& path) noexcept;

}  // namespace lengen::engine
