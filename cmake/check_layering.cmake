# The layering rule: oracle/ and impls/ never include each other (the judge, in
# harness/, is the only place where exact values meet kernel outputs).
#   cmake -DROOT=<source dir> -P check_layering.cmake
# Fails, naming each offending line, when a file under ROOT/impls includes
# "oracle/..." or a file under ROOT/oracle includes "impls/...".
if(NOT ROOT)
  message(FATAL_ERROR "check_layering: set ROOT")
endif()
set(bad "")
foreach(pair "impls;oracle" "oracle;impls")
  list(GET pair 0 from)
  list(GET pair 1 to)
  file(GLOB_RECURSE files "${ROOT}/${from}/*.h" "${ROOT}/${from}/*.cc" "${ROOT}/${from}/*.cu"
       "${ROOT}/${from}/*.c")
  foreach(f ${files})
    file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"${to}/")
    foreach(l ${lines})
      file(RELATIVE_PATH rel "${ROOT}" "${f}")
      string(APPEND bad "  ${rel}: ${l}\n")
    endforeach()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "oracle/ and impls/ include each other:\n${bad}")
endif()
message(STATUS "layering: oracle/ and impls/ do not include each other")
