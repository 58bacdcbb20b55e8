# The optional third-party libraries whose layer norms are judged as they are
# (impls/thirdparty) and benchmarked next to ours (bench/): oneDNN (Debian
# libdnnl-dev) and PyTorch's libtorch (libtorch-dev). Found once, here, for the
# whole tree. Sets LNV_HAVE_ONEDNN and LNV_HAVE_TORCH, and prints one line per
# library: found, or skipped and why.
#
# A missing optional library never fails the configure step. A package config
# that cannot find what it needs raises a hard error from inside itself, which
# QUIET does not silence, so each prerequisite of those configs is asked for
# first, and a missing one skips the library:
# - Debian's dnnl-config.cmake calls find_package(OpenCL REQUIRED) (its GPU
#   runtime is OpenCL), and ocl-icd-opencl-dev is only a Recommends of
#   libdnnl-dev;
# - Debian's Caffe2Config.cmake (read by TorchConfig.cmake) stops with
#   FATAL_ERROR without gflags, glog or protobuf.
# To build without one on purpose: -DCMAKE_DISABLE_FIND_PACKAGE_dnnl=ON or
# -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON (or _OpenCL=ON, which skips oneDNN).

set(LNV_HAVE_ONEDNN OFF)
set(LNV_HAVE_TORCH OFF)

find_package(OpenCL QUIET)
if(NOT OpenCL_FOUND)
  message(STATUS "lnverify: skipping oneDNN's kernels: OpenCL not found "
                 "(ocl-icd-opencl-dev), which Debian's dnnl config requires")
else()
  find_package(dnnl CONFIG QUIET)
  if(dnnl_FOUND)
    set(LNV_HAVE_ONEDNN ON)
    message(STATUS "lnverify: oneDNN ${dnnl_VERSION} found: its kernels are judged")
  else()
    message(STATUS "lnverify: skipping oneDNN's kernels: not found (libdnnl-dev)")
  endif()
endif()

set(_lnv_torch_missing "")
find_package(gflags QUIET)
if(NOT gflags_FOUND)
  list(APPEND _lnv_torch_missing "gflags (libgflags-dev)")
endif()
find_package(glog QUIET)
if(NOT glog_FOUND)
  list(APPEND _lnv_torch_missing "glog (libgoogle-glog-dev)")
endif()
find_package(Protobuf QUIET)
if(NOT Protobuf_FOUND)
  list(APPEND _lnv_torch_missing "protobuf (libprotobuf-dev)")
endif()
if(_lnv_torch_missing)
  list(JOIN _lnv_torch_missing ", " _lnv_missing)
  message(STATUS "lnverify: skipping PyTorch ATen's kernels: ${_lnv_missing} not "
                 "found, which Debian's Caffe2 config requires")
else()
  find_package(Torch QUIET)
  if(Torch_FOUND)
    set(LNV_HAVE_TORCH ON)
    message(STATUS "lnverify: PyTorch ATen ${Torch_VERSION} found: its kernels are judged")
  else()
    message(STATUS "lnverify: skipping PyTorch ATen's kernels: not found (libtorch-dev)")
  endif()
endif()
