# Project-wide compile options. Kernels must not have their float expressions
# contracted into FMAs behind their backs: the bound models count roundings.
# C++ only: nvcc takes host-compiler options through -Xcompiler (LnvCuda.cmake).
add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wall> $<$<COMPILE_LANGUAGE:CXX>:-Wextra>
                    $<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off>)

# lnv_add_test(NAME LABEL SOURCES... LIBS ...): a gtest binary beside what it
# tests, registered with ctest under LABEL (unit, property, fuzz-regression, gpu).
function(lnv_add_test name label)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  gtest_discover_tests(${name}
    PROPERTIES LABELS ${label}
    DISCOVERY_TIMEOUT 60)
endfunction()
