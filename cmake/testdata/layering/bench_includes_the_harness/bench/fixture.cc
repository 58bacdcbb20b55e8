// Negative fixture of cmake/check_layering.cmake: benchmarks measure kernels and the oracle, not
// the judge.
#include "harness/judge.h"
