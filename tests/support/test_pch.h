#pragma once
// Precompiled header shared by the engine tests (see tests/CMakeLists.txt).
#include <torch/torch.h>
#include <QtTest/QtTest>
