// Negative fixture of cmake/check_layering.cmake: kernel tests use the judge, not the tools.
#include "properties/property.h"
