# The layering rule (docs/DESIGN.md §8): which directory may include which.
#   cmake -DROOT=<source dir> -P check_layering.cmake
# Checks every "dir/..." (or <dir/...>) include of every C, C++ and CUDA file under ROOT
# (build trees, .git and cmake/testdata excepted) against the table below, and
# fails naming each include that no row of its file's layer allows. Includes
# of a header in the file's own directory ("x.h") and of other libraries are
# not project edges. Each forbidden edge has a negative fixture under
# cmake/testdata/layering/ that this check must reject (CMakeLists.txt).
if(NOT ROOT)
  message(FATAL_ERROR "check_layering: set ROOT")
endif()

# The impls/ headers the rest of the tree may use: the plugin ABI, its C++
# view, the registry, storage conversions and the plugin loader.
set(impls_api "impls/(api|registry|dtype|aligned_vector)\\.h|impls/plugin/(loader|lnv_plugin)\\.h")
# The directories whose includes are project edges.
set(project_dirs "oracle|impls|harness|properties|fuzz|reports|bench|python")

# Layer -> regex of the includes it may have (besides its own directory).
set(allow_oracle "^$")                              # a leaf
set(allow_impls "^$")                               # a leaf
set(allow_impls_test "^harness/")                   # kernel tests judge kernels
set(allow_harness "^(oracle/oracle\\.h|${impls_api})$")
set(allow_suite "^(harness/|(${impls_api})$)")      # properties, fuzz, reports, python
set(allow_bench "^(oracle/oracle\\.h|impls/)")      # what it measures, internals included

# The layer of a file (relative path): its top directory, impls tests apart.
function(layer_of rel out)
  string(REGEX MATCH "^[^/]+" top "${rel}")
  if(top STREQUAL "impls" AND rel MATCHES "(_test\\.cc|/testdata/.*)$")
    set(${out} impls_test PARENT_SCOPE)
  elseif(top MATCHES "^(properties|fuzz|reports|python)$")
    set(${out} suite PARENT_SCOPE)
  elseif(top MATCHES "^(oracle|impls|harness|bench)$")
    set(${out} ${top} PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)  # cmake/, scripts/, tests/: not a layer
  endif()
endfunction()

set(bad "")
set(checked 0)
file(GLOB_RECURSE files RELATIVE "${ROOT}" "${ROOT}/*.h" "${ROOT}/*.cc" "${ROOT}/*.cu"
     "${ROOT}/*.cuh" "${ROOT}/*.c")
foreach(rel ${files})
  if(rel MATCHES "^(build|\\.git|cmake/testdata)/")
    continue()
  endif()
  layer_of("${rel}" layer)
  if(NOT layer)
    continue()
  endif()
  string(REGEX MATCH "^[^/]+" top "${rel}")
  file(STRINGS "${ROOT}/${rel}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<](${project_dirs})/")
  foreach(l ${lines})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]+)[\">].*$" "\\1" inc "${l}")
    math(EXPR checked "${checked} + 1")
    if(inc MATCHES "^${top}/" OR inc MATCHES "${allow_${layer}}")
      continue()
    endif()
    string(APPEND bad "  ${rel} (${layer}): #include \"${inc}\"\n")
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "includes that the layering rule (docs/DESIGN.md §8) forbids:\n${bad}")
endif()
message(STATUS "layering: ${checked} project includes, each allowed by docs/DESIGN.md §8")
