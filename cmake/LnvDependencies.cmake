# Every dependency is a Debian 12 package, found the CMake way
# (scripts/install-deps installs what is missing).
find_package(Boost 1.74 REQUIRED)                    # libboost-dev: Boost.Multiprecision
find_package(Eigen3 3.4 REQUIRED NO_MODULE)          # libeigen3-dev
find_package(PkgConfig REQUIRED)
pkg_check_modules(MPFR REQUIRED IMPORTED_TARGET mpfr)  # libmpfr-dev
pkg_check_modules(GMP REQUIRED IMPORTED_TARGET gmp)    # libgmp-dev
find_package(Threads REQUIRED)
if(LNV_BUILD_TESTS)
  find_package(GTest REQUIRED)                       # libgtest-dev
  find_package(rapidcheck REQUIRED)                  # librapidcheck-dev
endif()
if(LNV_BUILD_BENCH)
  find_package(benchmark REQUIRED)                   # libbenchmark-dev
endif()
