# CUDA for the real kernels of impls/cuda/ (their host emulations are plain
# C++ and always build). Sets LNV_CUDA_ENABLED.
#
#   LNV_CUDA=AUTO (default)  enable CUDA when nvcc is found (PATH, CUDACXX,
#                            CUDA_PATH or /usr/local/cuda/bin)
#   LNV_CUDA=ON              require it: configuring fails without nvcc
#   LNV_CUDA=OFF             never
#
# Compile options for every CUDA source are fixed here, because the kernels
# must equal their host emulation bit for bit: no FMA contraction (-fmad=false;
# a kernel that wants an FMA writes fmaf), IEEE division and square root
# (--prec-div=true --prec-sqrt=true), subnormals kept (-ftz=false), never
# --use_fast_math. CMAKE_CUDA_ARCHITECTURES defaults to "90;80" (H100/H200
# and A100); "native" is refused: it fails on machines without a GPU, which is
# where CI compiles.
set(LNV_CUDA AUTO CACHE STRING "Build the CUDA kernels: AUTO (when nvcc is found), ON or OFF")
set_property(CACHE LNV_CUDA PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${LNV_CUDA}" _lnv_cuda)
if(NOT _lnv_cuda MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "LNV_CUDA must be AUTO, ON or OFF (got '${LNV_CUDA}')")
endif()

set(LNV_CUDA_ENABLED OFF)
if(_lnv_cuda STREQUAL "OFF")
  message(STATUS "lnverify: LNV_CUDA=OFF: CUDA kernels not built (host emulations are)")
else()
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(LNV_NVCC nvcc HINTS ENV CUDA_PATH PATH_SUFFIXES bin PATHS /usr/local/cuda/bin)
    if(LNV_NVCC)
      set(CMAKE_CUDA_COMPILER "${LNV_NVCC}" CACHE FILEPATH "CUDA compiler" FORCE)
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
      set(CMAKE_CUDA_ARCHITECTURES "90;80" CACHE STRING "GPU architectures of the CUDA kernels")
    endif()
    if(CMAKE_CUDA_ARCHITECTURES MATCHES "native|all")
      message(FATAL_ERROR "CMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES}: name the "
                          "architectures (default 90;80); 'native' fails without a GPU")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 cannot ask nvcc for C++20; the .cu needs 17
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(LNV_CUDA_ENABLED ON)
    message(STATUS "lnverify: CUDA kernels enabled (${CMAKE_CUDA_COMPILER}, "
                   "architectures ${CMAKE_CUDA_ARCHITECTURES})")
  elseif(_lnv_cuda STREQUAL "ON")
    message(FATAL_ERROR "LNV_CUDA=ON but no CUDA compiler (nvcc) was found; set "
                        "CMAKE_CUDA_COMPILER or CUDACXX, or use LNV_CUDA=AUTO/OFF")
  else()
    message(STATUS "lnverify: no nvcc found: CUDA kernels not built (host emulations are)")
  endif()
endif()

# lnv_cuda_options(TARGET): the bit-exactness options above, for a target's
# CUDA sources.
function(lnv_cuda_options target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-fmad=false --prec-div=true --prec-sqrt=true -ftz=false>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-ffp-contract=off>)
endfunction()
