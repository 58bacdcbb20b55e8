// Negative fixture of cmake/check_layering.cmake: the harness uses the registry API only.
#include "impls/cpu/fast/targets.h"
