// Negative fixture of cmake/check_layering.cmake: a kernel library never sees the judge.
#include "harness/judge.h"
