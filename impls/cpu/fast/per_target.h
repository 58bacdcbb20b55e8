// LNV_FAST_FILL_FOR_TARGET(target, fn, out): calls N_<target>::fn(out) for the
// Highway target `target` when this build compiled it (AVX-512, AVX2 or the
// scalar fallback: HWY_DISABLED_TARGETS in CMakeLists.txt), else nothing. For
// the HWY_ONCE part of a foreach_target source that defines fn per target.
#ifndef LNV_IMPLS_CPU_FAST_PER_TARGET_H_
#define LNV_IMPLS_CPU_FAST_PER_TARGET_H_

#include <hwy/highway.h>

#if HWY_TARGETS & HWY_AVX3
#define LNV_FAST_CASE_AVX3(fn, out) \
  case HWY_AVX3:                    \
    N_AVX3::fn(out);                \
    return;
#else
#define LNV_FAST_CASE_AVX3(fn, out)
#endif
#if HWY_TARGETS & HWY_AVX2
#define LNV_FAST_CASE_AVX2(fn, out) \
  case HWY_AVX2:                    \
    N_AVX2::fn(out);                \
    return;
#else
#define LNV_FAST_CASE_AVX2(fn, out)
#endif
#if HWY_TARGETS & HWY_SCALAR
#define LNV_FAST_CASE_SCALAR(fn, out) \
  case HWY_SCALAR:                    \
    N_SCALAR::fn(out);                \
    return;
#else
#define LNV_FAST_CASE_SCALAR(fn, out)
#endif

#define LNV_FAST_FILL_FOR_TARGET(target, fn, out) \
  switch (target) {                               \
    LNV_FAST_CASE_AVX3(fn, out)                   \
    LNV_FAST_CASE_AVX2(fn, out)                   \
    LNV_FAST_CASE_SCALAR(fn, out)                 \
    default:                                      \
      return;                                     \
  }

#endif  // LNV_IMPLS_CPU_FAST_PER_TARGET_H_
