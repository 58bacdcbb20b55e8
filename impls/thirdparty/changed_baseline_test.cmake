# Negative control of the baseline comparison: copies a kernel's recorded
# baseline, changes it the ways a real change shows up, and checks that
# ln_check notices each and exits 1, and lets pass what is no change.
#   cmake -DLN_CHECK=<path> -DBASELINES=<dir> -DWORK=<dir> -DKERNEL=<name>
#         -DFILE_STEM=<kernel, file-safe> -P changed_baseline_test.cmake
# Changes: a recorded finding dropped (ln_check must call it NEW), a finding
# added that the kernel does not show (VANISHED), a recorded case swapped for
# another finding's (the replay must say it no longer shows its finding), a
# magnitude's ulp binade recorded two below the run's (MAGNITUDE ... worse)
# and another's bound use binade two above (MAGNITUDE ... better). A third
# magnitude moved by one binade each way must not be reported. Then, over
# single families: the worse magnitude alone fails the run, and the
# one-binade move alone passes it.
cmake_minimum_required(VERSION 3.25)  # policies of the project (IN_LIST, POP_FRONT)

function(copy_baselines dir)
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}")
  file(GLOB _files "${BASELINES}/${FILE_STEM}.baseline" "${BASELINES}/${FILE_STEM}__*.case")
  file(COPY ${_files} DESTINATION "${dir}")
endfunction()

# Runs ln_check on KERNEL with the baselines in dir (and extra arguments);
# sets <prefix>_status and <prefix>_out.
function(run_ln_check prefix dir)
  execute_process(COMMAND "${LN_CHECK}" --impls "${KERNEL}" --baselines "${dir}"
                          --cases-dir "${WORK}/cases" ${ARGN}
                  RESULT_VARIABLE _status OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  message("${_out}${_err}")
  set(${prefix}_status "${_status}" PARENT_SCOPE)
  set(${prefix}_out "${_out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK}")
copy_baselines("${WORK}/baselines")

set(_baseline "${WORK}/baselines/${FILE_STEM}.baseline")
file(STRINGS "${_baseline}" _lines)
set(_findings "")
# Three magnitudes with finite binades, of three families: worse, better, within.
set(_magnitudes "")
set(_magnitude_families "")
foreach(line ${_lines})
  if(line MATCHES "^finding ")
    list(APPEND _findings "${line}")
  endif()
  if(line MATCHES "^magnitude ([^ ]+) ([^ ]+) ulp 2\\^(-?[0-9]+) use 2\\^(-?[0-9]+)$")
    if(NOT CMAKE_MATCH_1 IN_LIST _magnitude_families)
      list(APPEND _magnitude_families "${CMAKE_MATCH_1}")
      list(APPEND _magnitudes "${line}")
    endif()
  endif()
endforeach()
list(LENGTH _magnitudes _m)
if(_m LESS 3)
  message(FATAL_ERROR "${_baseline}: needs finite magnitudes of three families, has ${_m}")
endif()
foreach(which worse better within)
  list(POP_FRONT _magnitudes _line)
  string(REGEX MATCH "^magnitude ([^ ]+) ([^ ]+) ulp 2\\^(-?[0-9]+) use 2\\^(-?[0-9]+)$"
         _ "${_line}")
  set(_${which}_line "${_line}")
  set(_${which}_family "${CMAKE_MATCH_1}")
  set(_${which}_at "${CMAKE_MATCH_1} ${CMAKE_MATCH_2}")
  set(_${which}_ulp "${CMAKE_MATCH_3}")
  set(_${which}_use "${CMAKE_MATCH_4}")
endforeach()
math(EXPR _worse_recorded "${_worse_ulp} - 2")
set(_worse_new "magnitude ${_worse_at} ulp 2^${_worse_recorded} use 2^${_worse_use}")
math(EXPR _better_recorded "${_better_use} + 2")
set(_better_new "magnitude ${_better_at} ulp 2^${_better_ulp} use 2^${_better_recorded}")
math(EXPR _within_ulp_recorded "${_within_ulp} + 1")
math(EXPR _within_use_recorded "${_within_use} - 1")
set(_within_new
    "magnitude ${_within_at} ulp 2^${_within_ulp_recorded} use 2^${_within_use_recorded}")

# Replaces whole lines of a baseline file: pairs of old and new lines.
function(replace_lines file)
  file(READ "${file}" _text)
  set(_args ${ARGN})
  while(_args)
    list(POP_FRONT _args _old _new)
    string(FIND "${_text}" "${_old}\n" _at)
    if(_at EQUAL -1)
      message(FATAL_ERROR "${file}: no line '${_old}'")
    endif()
    string(REPLACE "${_old}\n" "${_new}\n" _text "${_text}")
  endwhile()
  file(WRITE "${file}" "${_text}")
endfunction()
replace_lines("${_baseline}" "${_worse_line}" "${_worse_new}" "${_better_line}" "${_better_new}"
              "${_within_line}" "${_within_new}")
list(LENGTH _findings _n)
if(_n LESS 2)
  message(FATAL_ERROR "${_baseline}: needs two findings for this test, has ${_n}")
endif()
# The first finding is dropped. The swapped one is the last finding of
# another family on an output that none of the dropped family's findings
# has, so that the dropped finding's case cannot show it (standard_normal's
# d = 1 rows, for one, show what d_one's do).
list(GET _findings 0 _dropped)
string(REPLACE " " ";" _parts "${_dropped}")
list(GET _parts 1 _dropped_family)
set(_dropped_outputs "")
foreach(f ${_findings})
  string(REPLACE " " ";" _parts "${f}")
  list(GET _parts 1 _family)
  list(GET _parts 2 _output)
  if(_family STREQUAL _dropped_family)
    list(APPEND _dropped_outputs "${_output}")
  endif()
endforeach()
set(_swapped "")
foreach(f ${_findings})
  string(REPLACE " " ";" _parts "${f}")
  list(GET _parts 1 _family)
  list(GET _parts 2 _output)
  if(NOT _family STREQUAL _dropped_family AND NOT _output IN_LIST _dropped_outputs)
    set(_swapped "${f}")
  endif()
endforeach()
if(_swapped STREQUAL "")
  message(FATAL_ERROR "${_baseline}: no finding that the first finding's case cannot show")
endif()
foreach(which dropped swapped)
  string(REPLACE " " ";" _parts "${_${which}}")
  list(GET _parts 1 _family)
  list(GET _parts 2 _output)
  list(GET _parts 3 _verdict)
  list(GET _parts 4 _${which}_case)
  set(_${which}_text "${_family} ${_output} ${_verdict}")
  set(_${which}_family "${_family}")
endforeach()

file(READ "${_baseline}" _text)
string(REPLACE "${_dropped}\n" "finding standard_normal call crashed -\n" _text "${_text}")
file(WRITE "${_baseline}" "${_text}")
# The swapped finding's case now holds the dropped finding's case.
file(READ "${WORK}/baselines/${_dropped_case}" _other)
string(REGEX REPLACE "\nfamily [^\n]*" "" _other "${_other}")
file(WRITE "${WORK}/baselines/${_swapped_case}" "${_other}")

run_ln_check(_all "${WORK}/baselines")
set(_failed "")
if(NOT _all_status EQUAL 1)
  string(APPEND _failed "every change: exit status ${_all_status}, want 1\n")
endif()
set(_tag "BASELINE ${KERNEL}: ")
foreach(want "${_tag}NEW finding ${_dropped_text}"
             "${_tag}VANISHED finding standard_normal call crashed"
             "${_tag}recorded case no longer shows ${_swapped_text}"
             "${_tag}MAGNITUDE ${_worse_at}: ulp 2^${_worse_recorded} -> 2^${_worse_ulp} (worse)"
             "${_tag}MAGNITUDE ${_better_at}: use 2^${_better_recorded} -> 2^${_better_use} (better)")
  string(FIND "${_all_out}" "${want}" _at)
  if(_at EQUAL -1)
    string(APPEND _failed "missing: ${want}\n")
  endif()
endforeach()
string(FIND "${_all_out}" "${_tag}MAGNITUDE ${_within_at}:" _at)
if(NOT _at EQUAL -1)
  string(APPEND _failed "reported, though within one binade: ${_within_at}\n")
endif()

# Each magnitude change alone, over its own family (a fraction of the run).
copy_baselines("${WORK}/alone")
replace_lines("${WORK}/alone/${FILE_STEM}.baseline" "${_worse_line}" "${_worse_new}"
              "${_within_line}" "${_within_new}")
run_ln_check(_worse "${WORK}/alone" --families "${_worse_family}")
if(NOT _worse_status EQUAL 1)
  string(APPEND _failed "the worse magnitude alone: exit status ${_worse_status}, want 1\n")
endif()
run_ln_check(_within "${WORK}/alone" --families "${_within_family}")
if(NOT _within_status EQUAL 0)
  string(APPEND _failed "a magnitude within one binade alone: exit status ${_within_status}, "
                        "want 0\n")
endif()
if(_failed)
  message(FATAL_ERROR "${_failed}")
endif()
