// Negative fixture of cmake/check_layering.cmake: a kernel never sees exact values.
#include "oracle/oracle.h"
