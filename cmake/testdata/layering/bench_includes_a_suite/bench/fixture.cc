// Negative fixture of cmake/check_layering.cmake: benchmarks do not include the tools.
#include "reports/html.h"
