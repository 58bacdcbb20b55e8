// Negative control of OracleAndImplsNeverIncludeEachOther: a kernel file
// that includes the oracle, which check_layering.cmake must reject.
#include "oracle/oracle.h"
