# lengen_add_qtest(<name> SOURCES ... LIBS ... LABELS ... [TIMEOUT s])  (default 600 s)
# One Qt Test executable per test class, registered with ctest under its labels, run offscreen.
# Labels: unit (fast, in-process), slow, cli (drives the lengen executable), gui, slurm, fuzz,
# torch (results can depend on the LibTorch version: CI's PyPI job runs these; docs/ci.md).
function(lengen_add_qtest name)
    cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
    add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE Qt6::Test lengen::build_options ${ARG_LIBS})
    # Each test's Q_OBJECT class lives in its .cpp, which includes "<file>.moc". moc runs here on
    # that file alone: AUTOMOC passed it every include path (1.4 s of moc following Torch's
    # headers, for the same output) and compiled an empty mocs_compilation.cpp (3-4 s of loading
    # the Torch PCH) per test.
    set_target_properties(${name} PROPERTIES AUTOMOC OFF)
    set(moc_dir ${CMAKE_CURRENT_BINARY_DIR}/${name}_moc)
    foreach(src IN LISTS ARG_SOURCES)
        get_filename_component(src_abs ${src} ABSOLUTE)
        get_filename_component(src_base ${src} NAME_WE)
        add_custom_command(OUTPUT ${moc_dir}/${src_base}.moc
            COMMAND Qt6::moc ${src_abs} -o ${moc_dir}/${src_base}.moc
            DEPENDS ${src_abs} Qt6::moc VERBATIM)
        target_sources(${name} PRIVATE ${moc_dir}/${src_base}.moc)
        set_source_files_properties(${moc_dir}/${src_base}.moc PROPERTIES HEADER_FILE_ONLY ON)
    endforeach()
    target_include_directories(${name} PRIVATE ${moc_dir})
    target_compile_definitions(${name} PRIVATE
        LENGEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}" LENGEN_BINARY_DIR="${PROJECT_BINARY_DIR}")
    add_test(NAME ${name} COMMAND ${name})
    if(NOT ARG_TIMEOUT)
        set(ARG_TIMEOUT 600)
    endif()
    # Qt Test's own watchdog ends a test function after 5 minutes. On a machine loaded to 10 on
    # 2 cores, tst_cli's and tst_interventions' longest functions took 404 and 465 s (issue 82):
    # each function may take the whole test's time but half a minute, so the one limit is
    # ctest's TIMEOUT, and the watchdog still names the function before ctest kills the test.
    math(EXPR function_ms "(${ARG_TIMEOUT} - 30) * 1000")
    set_tests_properties(${name} PROPERTIES
        LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
        ENVIRONMENT "QT_QPA_PLATFORM=offscreen;OMP_NUM_THREADS=1;OPENBLAS_NUM_THREADS=1;QTEST_FUNCTION_TIMEOUT=${function_ms}")
    foreach(label IN LISTS ARG_LABELS)
        set_property(GLOBAL APPEND PROPERTY LENGEN_TESTS_${label} ${name})
    endforeach()
endfunction()

# lengen_tests_target(<target> <label> [EXTRA targets...])
# A target that builds the executables of every Qt test labelled <label> (and EXTRA): CI's
# sanitizer and PyPI jobs build only what the tests they run need (docs/ci.md).
function(lengen_tests_target target label)
    get_property(tests GLOBAL PROPERTY LENGEN_TESTS_${label})
    add_custom_target(${target})
    add_dependencies(${target} ${tests} ${ARGN})
endfunction()
