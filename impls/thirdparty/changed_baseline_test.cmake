# Negative control of the baseline comparison: copies a kernel's recorded
# baseline, changes it the three ways a real change shows up, and checks that
# ln_check notices each and exits 1.
#   cmake -DLN_CHECK=<path> -DBASELINES=<dir> -DWORK=<dir> -DKERNEL=<name>
#         -DFILE_STEM=<kernel, file-safe> -P changed_baseline_test.cmake
# Changes: a recorded finding dropped (ln_check must call it NEW), a finding
# added that the kernel does not show (VANISHED), and a recorded case swapped
# for another finding's (the replay must say it no longer shows its finding).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/baselines")
file(GLOB _files "${BASELINES}/${FILE_STEM}.baseline" "${BASELINES}/${FILE_STEM}__*.case")
file(COPY ${_files} DESTINATION "${WORK}/baselines")

set(_baseline "${WORK}/baselines/${FILE_STEM}.baseline")
file(STRINGS "${_baseline}" _lines)
set(_findings "")
foreach(line ${_lines})
  if(line MATCHES "^finding ")
    list(APPEND _findings "${line}")
  endif()
endforeach()
list(LENGTH _findings _n)
if(_n LESS 2)
  message(FATAL_ERROR "${_baseline}: needs two findings for this test, has ${_n}")
endif()
# The first and the last finding: of different families, so that one's case
# cannot show the other.
list(GET _findings 0 _dropped)
list(GET _findings -1 _swapped)
foreach(which dropped swapped)
  string(REPLACE " " ";" _parts "${_${which}}")
  list(GET _parts 1 _family)
  list(GET _parts 2 _output)
  list(GET _parts 3 _verdict)
  list(GET _parts 4 _${which}_case)
  set(_${which}_text "${_family} ${_output} ${_verdict}")
  set(_${which}_family "${_family}")
endforeach()
if(_dropped_family STREQUAL _swapped_family)
  message(FATAL_ERROR "${_baseline}: first and last finding share a family")
endif()

file(READ "${_baseline}" _text)
string(REPLACE "${_dropped}\n" "finding standard_normal call crashed -\n" _text "${_text}")
file(WRITE "${_baseline}" "${_text}")
# The swapped finding's case now holds the dropped finding's case.
file(READ "${WORK}/baselines/${_dropped_case}" _other)
string(REGEX REPLACE "\nfamily [^\n]*" "" _other "${_other}")
file(WRITE "${WORK}/baselines/${_swapped_case}" "${_other}")

execute_process(COMMAND "${LN_CHECK}" --impls "${KERNEL}" --baselines "${WORK}/baselines"
                        --cases-dir "${WORK}/cases"
                RESULT_VARIABLE _status OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
message("${_out}${_err}")
set(_failed "")
if(NOT _status EQUAL 1)
  string(APPEND _failed "exit status ${_status}, want 1\n")
endif()
foreach(want "BASELINE ${KERNEL}: NEW finding ${_dropped_text}"
             "BASELINE ${KERNEL}: VANISHED finding standard_normal call crashed"
             "BASELINE ${KERNEL}: recorded case no longer shows ${_swapped_text}")
  string(FIND "${_out}" "${want}" _at)
  if(_at EQUAL -1)
    string(APPEND _failed "missing: ${want}\n")
  endif()
endforeach()
if(_failed)
  message(FATAL_ERROR "${_failed}")
endif()
