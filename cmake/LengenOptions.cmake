# Build switches and the INTERFACE target that carries the compile policy for every target.
option(LENGEN_BUILD_GUI "Build the Qt desktop studio (widgets/, lengen-studio)" ON)
option(LENGEN_BUILD_BENCH "Build the benchmarks in bench/" OFF)
option(LENGEN_WARNINGS_AS_ERRORS "Treat compiler warnings as errors" OFF)
set(LENGEN_SANITIZE "" CACHE STRING "Sanitizers to enable, e.g. address;undefined or thread")
option(LENGEN_FUZZ "Link the fuzz/ targets with libFuzzer (needs clang; see tests/fuzz/README.md)" OFF)

add_library(lengen_build_options INTERFACE)
add_library(lengen::build_options ALIAS lengen_build_options)
target_compile_features(lengen_build_options INTERFACE cxx_std_17)
target_compile_options(lengen_build_options INTERFACE
    -Wall -Wextra -Wnon-virtual-dtor -Woverloaded-virtual -Wcast-qual
    $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local>)
if(LENGEN_WARNINGS_AS_ERRORS)
    target_compile_options(lengen_build_options INTERFACE -Werror)
endif()
# Torch headers declare `slots`-named members; keep Qt's keyword macros away from them.
target_compile_definitions(lengen_build_options INTERFACE
    QT_NO_KEYWORDS QT_NO_NARROWING_CONVERSIONS_IN_CONNECT)
# PyPI's libtorch_cpu carries its own std::filesystem and exports it; listed before libstdc++
# among a program's libraries (the linker adds -lstdc++ last), it takes every such call, and in
# PyTorch 2.11+cu130 its remove_all jumps to address 0. Naming libstdc++ ahead of the objects
# puts it first in the lookup order (tst_kernel_context::fileSystemCallsReachTheSystemLibrary).
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_link_options(lengen_build_options INTERFACE
        "SHELL:-Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state")
endif()
if(LENGEN_SANITIZE)
    string(REPLACE ";" "," _lengen_san "${LENGEN_SANITIZE}")
    target_compile_options(lengen_build_options INTERFACE -fsanitize=${_lengen_san} -fno-omit-frame-pointer)
    target_link_options(lengen_build_options INTERFACE -fsanitize=${_lengen_san})
endif()

# Unity builds (.ci/build turns them on): each target's sources compiled in batches, so that a
# batch pays once for what every file pays alone — above all the load of the Torch PCH (~3 s a
# file on two cores, even for an empty file). Off by default: an edit then rebuilds one file,
# not its batch. Files with their own compile options stay out of the batches.
option(LENGEN_UNITY_BUILD "Compile each target's sources in batches (faster clean builds)" OFF)
set(LENGEN_UNITY_BATCH 8 CACHE STRING "Sources per unity batch when LENGEN_UNITY_BUILD is on")
function(lengen_unity target)
    if(LENGEN_UNITY_BUILD)
        set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE BATCH
                              UNITY_BUILD_BATCH_SIZE ${LENGEN_UNITY_BATCH})
    endif()
endfunction()
