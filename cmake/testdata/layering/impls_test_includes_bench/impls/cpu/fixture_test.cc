// Negative fixture of cmake/check_layering.cmake: kernel tests use the judge, not the benchmarks.
#include "bench/kernels.h"
