// Negative fixture of cmake/check_layering.cmake: the harness is below the tools.
#include "reports/html.h"
