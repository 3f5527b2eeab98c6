#pragma once
// Precompiled header for the engine (see engine/CMakeLists.txt). Never include it by hand.
#include <torch/torch.h>
