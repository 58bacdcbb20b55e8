// Negative fixture of cmake/check_layering.cmake: the oracle's internals stay inside it.
#include "oracle/rat.h"
