# The Python module lnverify (python/, tests in tests/python). LNV_PYTHON=AUTO
# builds it when Debian's python3 with numpy and pybind11 are found, ON
# requires them, OFF skips it (the asan and fuzz presets: a sanitized module
# would need an ASan-preloaded interpreter). Debian's interpreter is used even
# when another python3 comes first on PATH: that one may lack the packages.
# Sets LNV_PYTHON_ENABLED, and builds everything position-independent then,
# since the module links the static libraries.
set(LNV_PYTHON AUTO CACHE STRING "Build the Python module lnverify: AUTO, ON or OFF")
set_property(CACHE LNV_PYTHON PROPERTY STRINGS AUTO ON OFF)
set(LNV_PYTHON_ENABLED OFF)
if(NOT LNV_PYTHON STREQUAL "OFF")
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "The interpreter of the Python module")
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module NumPy)
  set(PYBIND11_FINDPYTHON ON)
  find_package(pybind11 CONFIG QUIET)
  if(Python3_FOUND AND Python3_NumPy_FOUND AND pybind11_FOUND)
    set(LNV_PYTHON_ENABLED ON)
    set(CMAKE_POSITION_INDEPENDENT_CODE ON)
    message(STATUS "Python module lnverify: built for ${Python3_EXECUTABLE} "
                   "(Python ${Python3_VERSION}, numpy ${Python3_NumPy_VERSION}, "
                   "pybind11 ${pybind11_VERSION})")
  elseif(LNV_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "LNV_PYTHON=ON, but python3-dev, python3-numpy or pybind11-dev is "
                        "missing (scripts/install-deps installs them)")
  else()
    message(STATUS "Python module lnverify: not built (python3-dev, python3-numpy or "
                   "pybind11-dev missing; scripts/install-deps installs them)")
  endif()
endif()
