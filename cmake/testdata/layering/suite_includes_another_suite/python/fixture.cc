// Negative fixture of cmake/check_layering.cmake: tools do not include each other.
#include "reports/html.h"
