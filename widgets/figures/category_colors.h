#pragma once
// The colour of a group or category value wherever it is drawn: Compare's groups, the
// Hyperparameters tab's lines when it colours by a column, the Sweeps grid's curves and their
// exports (issue 80, defect 23: the Hyperparameters tab drew RoPE pink, the Sweeps grid blue,
// Compare a third colour, each by its own drawing order). GUI thread, or a process that draws
// alone (the CLI's export).

#include <string>

namespace lengen::figures {

/// An encoding's own colour when `value` names one ("rope", "RoPE", "dynamic_ntk", "Dynamic
/// NTK": its row in engine::encodingTable, the run palette's colour of that row), whatever was
/// drawn before; any other value plots::categoryColor's (the first drawn, the first served).
std::string categoryColor(const std::string& value);
/// The encoding's colour only: "" when `value` names no encoding.
std::string encodingColor(const std::string& value);

}  // namespace lengen::figures
