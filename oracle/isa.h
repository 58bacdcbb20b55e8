// The instruction sets the oracle's hot loops are compiled for, and the one
// this CPU runs (detected once). A loop is written once, as an always-inline
// body, and LNV_ISA_VERSIONS defines a function per instruction set around
// it; LNV_ISA_CALL calls this CPU's. Every version does the same IEEE
// operations (the project builds with -ffp-contract=off), so they return the
// same bits; only their speed differs. Internal to oracle/.
#ifndef LNV_ORACLE_ISA_H_
#define LNV_ORACLE_ISA_H_

namespace lnv::oracle_internal {

enum class Isa { kBaseline, kAvx2, kAvx512 };

Isa CurrentIsa();

}  // namespace lnv::oracle_internal

#if defined(__x86_64__)
#define LNV_ISA_AVX2 __attribute__((target("avx2,fma")))
#define LNV_ISA_AVX512 \
  __attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma,prefer-vector-width=512")))
#else
#define LNV_ISA_AVX2
#define LNV_ISA_AVX512
#endif

// ret name##Baseline/Avx2/Avx512 params { return body_call; }
#define LNV_ISA_VERSIONS(ret, name, params, body_call)     \
  ret name##Baseline params { return body_call; }          \
  LNV_ISA_AVX2 ret name##Avx2 params { return body_call; } \
  LNV_ISA_AVX512 ret name##Avx512 params { return body_call; }

#define LNV_ISA_CALL(name, ...)                                                 \
  (::lnv::oracle_internal::CurrentIsa() == ::lnv::oracle_internal::Isa::kAvx512 \
       ? name##Avx512(__VA_ARGS__)                                              \
   : ::lnv::oracle_internal::CurrentIsa() == ::lnv::oracle_internal::Isa::kAvx2 \
       ? name##Avx2(__VA_ARGS__)                                                \
       : name##Baseline(__VA_ARGS__))

#endif  // LNV_ORACLE_ISA_H_
