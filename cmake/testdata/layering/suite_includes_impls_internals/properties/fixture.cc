// Negative fixture of cmake/check_layering.cmake: suites use the registry API only.
#include "impls/cpu/valid_range.h"
