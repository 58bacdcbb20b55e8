// Negative fixture of cmake/check_layering.cmake: an include in angle brackets is an edge too.
#include <oracle/oracle.h>
