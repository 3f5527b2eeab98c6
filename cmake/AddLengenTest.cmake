# lengen_add_qtest(<name> SOURCES ... LIBS ... LABELS ... [TIMEOUT s])
# One Qt Test executable per test class, registered with ctest under its labels, run offscreen.
function(lengen_add_qtest name)
    cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
    add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE Qt6::Test lengen::build_options ${ARG_LIBS})
    target_compile_definitions(${name} PRIVATE
        LENGEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}" LENGEN_BINARY_DIR="${PROJECT_BINARY_DIR}")
    add_test(NAME ${name} COMMAND ${name})
    if(NOT ARG_TIMEOUT)
        set(ARG_TIMEOUT 600)
    endif()
    set_tests_properties(${name} PROPERTIES
        LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
        ENVIRONMENT "QT_QPA_PLATFORM=offscreen;OMP_NUM_THREADS=1;OPENBLAS_NUM_THREADS=1")
endfunction()
