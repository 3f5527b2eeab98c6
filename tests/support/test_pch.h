#pragma once
// Precompiled header shared by the engine tests (see tests/CMakeLists.txt).
#include <QtTest/QtTest>
#include <torch/torch.h>
