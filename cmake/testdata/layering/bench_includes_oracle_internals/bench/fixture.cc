// Negative fixture of cmake/check_layering.cmake: bench_oracle measures the oracle's API.
#include "oracle/backends.h"
