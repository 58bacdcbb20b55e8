// Negative fixture of cmake/check_layering.cmake: the oracle is a leaf.
#include "fuzz/target.h"
