// CPU detection for the oracle's dispatched loops (isa.h).
#include "oracle/isa.h"

namespace lnv::oracle_internal {
namespace {

Isa Detect() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl")) {
    return Isa::kAvx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
#endif
  return Isa::kBaseline;
}

}  // namespace

Isa CurrentIsa() {
  static const Isa isa = Detect();
  return isa;
}

}  // namespace lnv::oracle_internal
