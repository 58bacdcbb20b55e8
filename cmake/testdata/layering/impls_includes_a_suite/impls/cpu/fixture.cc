// Negative fixture of cmake/check_layering.cmake: a kernel library is a leaf.
#include "reports/html.h"
