// Negative fixture of cmake/check_layering.cmake: kernel tests reach the oracle through the
// harness.
#include "oracle/oracle.h"
