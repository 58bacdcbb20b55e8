// Negative fixture of cmake/check_layering.cmake: suites use the harness and the registry API only.
#include "oracle/oracle.h"
