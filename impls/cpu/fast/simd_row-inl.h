// Per-target building blocks of the fast CPU kernels, written with Highway
// (compiled once per target by the translation units that include it after
// hwy/foreach_target.h): storage conversions, the tree-shaped row sums of
// reduction_shape.h, and the helpers of the rescaled path (row_scaling.h).
//
// Conversions (the warning holds for the Highway in Debian 12,
// libhwy 1.0.3: its DemoteTo to bfloat16 TRUNCATES on every x86 target, and
// its scalar-target DemoteTo to float16 truncates too and mishandles
// overflow; the tests show both). So:
//   * loads: bf16/f16 -> f32 with Highway's PromoteTo on AVX2/AVX-512
//     (exact: a shift, and F16C's vcvtph2ps), Eigen's types on the scalar
//     target;
//   * f16 stores: Highway's DemoteTo on AVX2/AVX-512, i.e. F16C's vcvtps2ph
//     with the immediate rounding mode round-to-nearest-even;
//   * bf16 stores: DemoteToBf16Rne below, the usual integer form of
//     round-to-nearest-even (add 0x7FFF plus the result's lowest bit, keep
//     the high half; NaNs are quieted, never rounded into infinity), since
//     Highway has no rounding bf16 demotion and Eigen's vectorized one cannot
//     be called from Highway's per-target code;
//   * the scalar target converts with Eigen::bfloat16 / Eigen::half (RNE);
//   * kNativeBf16 lines (AVX-512 only, for the AVX512_BF16 entry's
//     backward): vcvtne2ps2bf16, which is RNE except that it flushes fp32
//     subnormals to zero, so a line with a zero result takes the integer
//     form (Bf16LineNative).
// Each path is checked against the oracle's rounding, bit for bit
// (fast_conversions_test.cc), and so are the paired write's own rounding
// (PackBf16Pair, both forms, exposed as TargetKernels::bf16_pairs) and the
// native lines' (TargetKernels::bf16_native_lines); the
// kernels' rounding of whole lines (LineOfHalves) and their paired writes
// are checked through their results: every bf16/f16 output equals the fp32
// kernel's rounded once to nearest even (fast_kernels_test.cc).
#if defined(LNV_IMPLS_CPU_FAST_SIMD_ROW_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LNV_IMPLS_CPU_FAST_SIMD_ROW_INL_H_
#undef LNV_IMPLS_CPU_FAST_SIMD_ROW_INL_H_
#else
#define LNV_IMPLS_CPU_FAST_SIMD_ROW_INL_H_
#endif

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "impls/cpu/fast/driver.h"
#include "impls/cpu/fast/reduction_shape.h"
#include "impls/cpu/fast/row_scaling.h"

HWY_BEFORE_NAMESPACE();
namespace lnv::fast {
namespace HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// Lambdas passed to TreeSums and WriteRow are inlined, always: a call per
// vector would spill the accumulators.
#ifndef LNV_INLINE_LAMBDA
#define LNV_INLINE_LAMBDA __attribute__((always_inline))
#endif

// The widest vector holds 16 floats: sizes of stack buffers for partial
// vectors and for the final lane sums.
inline constexpr std::int64_t kMaxLanes = 16;

template <typename T>
inline constexpr bool kIsF32 = std::is_same_v<T, float>;
template <typename T>
inline constexpr bool kIsBf16 = std::is_same_v<T, hwy::bfloat16_t>;

// ---- Conversions ----

// Scalar target: through Eigen's types (RNE); bit patterns move as uint16.
template <typename T>
using EigenNarrow = std::conditional_t<kIsBf16<T>, Eigen::bfloat16, Eigen::half>;

template <typename T>
HWY_INLINE float NarrowToFloat(const T* p) {
  std::uint16_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  return static_cast<float>(Eigen::numext::bit_cast<EigenNarrow<T>>(bits));
}
template <typename T>
HWY_INLINE void FloatToNarrow(float f, T* p) {
  const auto bits = Eigen::numext::bit_cast<std::uint16_t>(EigenNarrow<T>(f));
  std::memcpy(p, &bits, sizeof(bits));
}

#if HWY_TARGET != HWY_SCALAR
// The bf16 bits of v, rounded to nearest even, in the upper half of each
// 32-bit lane (see the header comment). kMayHoldNaN = false skips the NaN
// fix-up, for callers that know no lane is NaN: for every other f32 value,
// NaN-free rounding is exact RNE, overflow into infinity included.
template <bool kMayHoldNaN = true>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<DF>> Bf16RneInHighHalves(VF v) {
  const hn::RebindToUnsigned<DF> du32;
  const auto bits = hn::BitCast(du32, v);
  const auto lowest_kept = hn::And(hn::ShiftRight<16>(bits), hn::Set(du32, 1u));
  const auto rounded = hn::Add(bits, hn::Add(hn::Set(du32, 0x7FFFu), lowest_kept));
  if constexpr (!kMayHoldNaN) return rounded;
  const auto quiet_nan = hn::Or(bits, hn::Set(du32, 0x00400000u));
  return hn::IfThenElse(hn::RebindMask(du32, hn::IsNaN(v)), quiet_nan, rounded);
}

// Round-to-nearest-even f32 -> bf16, NaNs quieted, never rounded into
// infinity.
HWY_INLINE hn::Vec<hn::Rebind<hwy::bfloat16_t, DF>> DemoteToBf16Rne(DF df, VF v) {
  const hn::RebindToSigned<DF> di32;
  const hn::Rebind<std::uint16_t, DF> du16;
  const hn::Rebind<hwy::bfloat16_t, DF> dbf;
  (void)df;
  return hn::BitCast(
      dbf, hn::DemoteTo(du16, hn::BitCast(di32, hn::ShiftRight<16>(Bf16RneInHighHalves(v)))));
}
#endif

// Lanes(df) elements of T at p, as floats (exact).
template <typename T>
HWY_INLINE VF LoadF32(DF df, const T* HWY_RESTRICT p) {
  if constexpr (kIsF32<T>) {
    return hn::LoadU(df, p);
  } else {
#if HWY_TARGET == HWY_SCALAR
    return hn::Set(df, NarrowToFloat(p));
#else
    return hn::PromoteTo(df, hn::LoadU(hn::Rebind<T, DF>(), p));
#endif
  }
}

// n < Lanes(df) elements, zero beyond them. Never reads past p + n.
template <typename T>
HWY_NOINLINE VF LoadF32Partial(DF df, const T* HWY_RESTRICT p, std::int64_t n) {
  T buf[kMaxLanes] = {};
  std::memcpy(buf, p, sizeof(T) * static_cast<std::size_t>(n));
  return LoadF32(df, buf);
}

// Loads elements [i, i + n) of a row: a whole vector or a zero-padded tail.
template <typename T>
HWY_INLINE VF LoadAt(DF df, const T* HWY_RESTRICT row, std::int64_t i, std::int64_t n) {
  return n == static_cast<std::int64_t>(hn::Lanes(df)) ? LoadF32(df, row + i)
                                                       : LoadF32Partial(df, row + i, n);
}

// Rounds each lane once (RNE) into T and stores Lanes(df) elements at p.
template <typename T>
HWY_INLINE void StoreF32As(DF df, VF v, T* HWY_RESTRICT p) {
  if constexpr (kIsF32<T>) {
    hn::StoreU(v, df, p);
  } else {
#if HWY_TARGET == HWY_SCALAR
    FloatToNarrow(hn::GetLane(v), p);
#else
    const hn::Rebind<T, DF> dt;
    if constexpr (kIsBf16<T>) {
      hn::StoreU(DemoteToBf16Rne(df, v), dt, p);
    } else {
      hn::StoreU(hn::DemoteTo(dt, v), dt, p);
    }
#endif
  }
}

// The first n < Lanes(df) lanes only. Never writes past p + n.
template <typename T>
HWY_NOINLINE void StoreF32AsPartial(DF df, VF v, T* HWY_RESTRICT p, std::int64_t n) {
  T buf[kMaxLanes];
  StoreF32As(df, v, buf);
  std::memcpy(p, buf, sizeof(T) * static_cast<std::size_t>(n));
}

template <typename T>
HWY_INLINE void StoreAt(DF df, VF v, T* HWY_RESTRICT row, std::int64_t i, std::int64_t n) {
  if (n == static_cast<std::int64_t>(hn::Lanes(df))) {
    StoreF32As(df, v, row + i);
  } else {
    StoreF32AsPartial(df, v, row + i, n);
  }
}

// The same with a non-temporal store; p must be aligned to the stored
// vector's size (Lanes(df) * sizeof(T) bytes).
template <typename T>
HWY_INLINE void StreamF32As(DF df, VF v, T* HWY_RESTRICT p) {
#if HWY_TARGET == HWY_SCALAR
  StoreF32As(df, v, p);
#else
  if constexpr (kIsF32<T>) {
    hn::Stream(v, df, p);
  } else {
    const hn::Rebind<T, DF> dt;
    if constexpr (kIsBf16<T>) {
      hn::Stream(DemoteToBf16Rne(df, v), dt, p);
    } else {
      hn::Stream(hn::DemoteTo(dt, v), dt, p);
    }
  }
#endif
}

// kN vectors, one per output row (WriteRows).
template <int kN>
struct RowVecs {
  VF v[kN];
};

// Ordinary stores of out_k[begin, end) = at(i, n).v[k] for the kN rows:
// whole vectors, then a partial one.
template <typename T, int kN, class At>
HWY_INLINE void StoreRanges(DF df, T* const* out, std::int64_t begin, std::int64_t end,
                            const At& at) {
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
  std::int64_t i = begin;
  // Unrolled: with AVX2's 8-lane vectors the loop's count and branch come
  // once a vector. On an AVX2 Zen 3 guest the fp32 forward at d = 768 went
  // from 0.88, 1.27, 0.77 and 0.86x oneDNN to 1.03, 1.01, 0.85 and 0.95x
  // (128 KiB and 1 MiB, one and two threads, one process each;
  // bench/README.md).
#pragma GCC unroll 4
  for (; i + lanes <= end; i += lanes) {
    const RowVecs<kN> r = at(i, lanes);
#pragma GCC unroll 4
    for (int k = 0; k < kN; ++k) StoreF32As(df, r.v[k], out[k] + i);
  }
  if (i < end) {
    const RowVecs<kN> r = at(i, end - i);
    for (int k = 0; k < kN; ++k) StoreF32AsPartial(df, r.v[k], out[k] + i, end - i);
  }
}

// Ordinary stores of out[begin, end) = at(i, n): whole vectors, then a
// partial one.
template <typename T, class At>
HWY_INLINE void StoreRange(DF df, T* HWY_RESTRICT out, std::int64_t begin, std::int64_t end,
                           const At& at) {
  T* const outs[1] = {out};
  StoreRanges<T, 1>(df, outs, begin, end, [&](std::int64_t i, std::int64_t n) LNV_INLINE_LAMBDA {
    return RowVecs<1>{{at(i, n)}};
  });
}

#if HWY_TARGET == HWY_AVX3
// lo's and hi's bf16 (lo's lanes first) by the CPU's vcvtne2ps2bf16, into
// *line; false (and *line unset) when a result is +-0, which the
// instruction also gives for an fp32 subnormal (RNE may not). Every other
// result is RNE with NaNs quieted, as Bf16RneInHighHalves'. Inline assembly,
// not the intrinsic, so that this AVX-512 code needs no AVX512_BF16 target
// attribute; run it only on a CPU with AVX512_BF16.
HWY_INLINE bool Bf16LineNative(VF lo, VF hi, hn::Vec<hn::Repartition<std::uint16_t, DF>>* line) {
  __m512i halves;
  asm("vcvtne2ps2bf16 %2, %1, %0" : "=v"(halves) : "v"(hi.raw), "v"(lo.raw));
  if (_mm512_testn_epi16_mask(halves, _mm512_set1_epi16(0x7FFF)) != 0) return false;
  line->raw = halves;
  return true;
}

// Two vectors of results (2 * 16 lanes) rounded into 16-bit T as one
// 64-byte vector: lo's lanes first. bf16 takes the upper halves of both
// rounded vectors with one two-table permutation (ConcatOdd) rather than a
// shift, a pack and a lane permutation per vector; kNativeBf16 (the CPU has
// AVX512_BF16) converts with one instruction where it gives RNE.
template <typename T, bool kNativeBf16 = false>
HWY_INLINE hn::Vec<hn::Repartition<T, DF>> LineOfHalves(DF df, VF lo, VF hi) {
  const hn::Repartition<T, DF> dline;
  if constexpr (kIsBf16<T>) {
    const hn::Repartition<std::uint16_t, DF> du16;
    if constexpr (kNativeBf16) {
      hn::Vec<decltype(du16)> line;
      if (HWY_LIKELY(Bf16LineNative(lo, hi, &line))) return hn::BitCast(dline, line);
    }
    return hn::BitCast(dline, hn::ConcatOdd(du16, hn::BitCast(du16, Bf16RneInHighHalves(hi)),
                                            hn::BitCast(du16, Bf16RneInHighHalves(lo))));
  } else {
    const hn::Rebind<T, DF> dt;
    (void)df;
    return hn::Combine(dline, hn::DemoteTo(dt, hi), hn::DemoteTo(dt, lo));
  }
}

// LineOfHalves streamed as one whole 64-byte line at p (aligned).
template <typename T, bool kNativeBf16>
HWY_INLINE void StreamLineOfHalves(DF df, VF lo, VF hi, T* HWY_RESTRICT p) {
  hn::Stream(LineOfHalves<T, kNativeBf16>(df, lo, hi), hn::Repartition<T, DF>(), p);
}

// LineOfHalves stored at p (any alignment).
template <typename T, bool kNativeBf16>
HWY_INLINE void StoreLineOfHalves(DF df, VF lo, VF hi, T* HWY_RESTRICT p) {
  hn::StoreU(LineOfHalves<T, kNativeBf16>(df, lo, hi), hn::Repartition<T, DF>(), p);
}
#endif

// Writes out[0, d), out[i .. i + n) = at(i, n) for n <= Lanes, calling at()
// once per position, in order. With `stream`, the whole cache lines of the
// row go out with non-temporal stores (no read-for-ownership of lines nobody
// will read soon) where a line is written by one store: fp32 vectors on
// AVX-512, and two bf16/fp16 vectors combined on AVX-512 (streaming half
// lines, next to the other loads and stores of a row, lets the
// write-combining buffers flush partial lines, which is far slower than not
// streaming at all; so AVX2 and the scalar target never stream). The partial
// lines at either end use ordinary stores, so no line is written both ways.
// Which stores are used never changes a value.
// WriteRows: the same for kN rows at once, at(i, n) giving a RowVecs<kN>
// (row k's vector in v[k]); the rows stream only if they all start at the
// same offset within a cache line. kNativeBf16: bf16 lines rounded by
// LineOfHalves' native form (AVX-512 only; the CPU must have AVX512_BF16);
// whatever is not a whole line of its pass (StoreRanges: the head before
// the first streamed line, the tail) keeps the integer form.
template <typename T, int kN, bool kNativeBf16 = false, class At>
HWY_INLINE void WriteRows(DF df, T* const* out, std::int64_t d, bool stream, const At& at) {
  static_assert(!kNativeBf16 || (HWY_TARGET == HWY_AVX3 && kIsBf16<T>),
                "native bf16 lines: AVX-512 bf16 rows only");
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
  constexpr std::size_t kVectorBytes = sizeof(T) * hn::MaxLanes(DF());
  constexpr bool kWholeLine = kVectorBytes == kCacheLine;
#if HWY_TARGET == HWY_AVX3
  constexpr bool kHalfLine = kVectorBytes * 2 == kCacheLine;
#else
  constexpr bool kHalfLine = false;
#endif
  const auto addr = reinterpret_cast<std::uintptr_t>(out[0]);
  for (int k = 1; k < kN; ++k) {
    stream = stream && (reinterpret_cast<std::uintptr_t>(out[k]) - addr) % kCacheLine == 0;
  }
#if HWY_TARGET == HWY_AVX3
  if constexpr (kHalfLine) {
    if (!stream || addr % sizeof(T) != 0) {
      // 16-bit results two vectors at a time: one 64-byte store for both
      // (measured: 2-10 % faster than a 32-byte store per vector).
      std::int64_t i = 0;
      for (; i + 2 * lanes <= d; i += 2 * lanes) {
        const RowVecs<kN> lo = at(i, lanes);
        const RowVecs<kN> hi = at(i + lanes, lanes);
#pragma GCC unroll 4
        for (int k = 0; k < kN; ++k)
          StoreLineOfHalves<T, kNativeBf16>(df, lo.v[k], hi.v[k], out[k] + i);
      }
      return StoreRanges<T, kN>(df, out, i, d, at);
    }
  }
#endif
  if (!(kWholeLine || kHalfLine) || !stream || addr % sizeof(T) != 0) {
    return StoreRanges<T, kN>(df, out, 0, d, at);
  }
  const auto per_line = static_cast<std::int64_t>(kCacheLine / sizeof(T));
  const std::int64_t head = std::min<std::int64_t>(
      d, static_cast<std::int64_t>((kCacheLine - addr % kCacheLine) % kCacheLine / sizeof(T)));
  const std::int64_t body_end = head + (d - head) / per_line * per_line;
  StoreRanges<T, kN>(df, out, 0, head, at);
  for (std::int64_t i = head; i < body_end; i += per_line) {
    if constexpr (kWholeLine) {
      const RowVecs<kN> r = at(i, lanes);
#pragma GCC unroll 4
      for (int k = 0; k < kN; ++k) StreamF32As(df, r.v[k], out[k] + i);
    } else {
#if HWY_TARGET == HWY_AVX3
      const RowVecs<kN> lo = at(i, lanes);
      const RowVecs<kN> hi = at(i + lanes, lanes);
#pragma GCC unroll 4
      for (int k = 0; k < kN; ++k)
        StreamLineOfHalves<T, kNativeBf16>(df, lo.v[k], hi.v[k], out[k] + i);
#endif
    }
  }
  StoreRanges<T, kN>(df, out, body_end, d, at);
}

template <typename T, class At>
HWY_INLINE void WriteRow(DF df, T* HWY_RESTRICT out, std::int64_t d, bool stream, const At& at) {
  T* const outs[1] = {out};
  WriteRows<T, 1>(df, outs, d, stream, [&](std::int64_t i, std::int64_t n) LNV_INLINE_LAMBDA {
    return RowVecs<1>{{at(i, n)}};
  });
}

// Asks for the line holding p in L2 (the next row, while this one is worked
// on from L1: it keeps the memory busy between the rows' streams).
template <typename T>
HWY_INLINE void PrefetchToL2(const T* p) {
  __builtin_prefetch(p, 0, 2);
}

#if HWY_TARGET != HWY_SCALAR
// bf16 rows, 2 * Lanes elements (a "pair" of vectors) at a time, without
// widening shuffles: a vector of 32-bit lanes holds elements 2j (low half)
// and 2j + 1 (high half), so the even elements widen with one shift, the odd
// ones with one AND; gamma and beta are read as the bf16 they are stored as
// (half the L1 footprint of fp32 copies: at d = 4096, x, gamma, beta and y
// then take 32 KiB of L1 rather than 48). The rounded results go back into
// element order in 32-bit lanes (PackBf16Pair).
using DU = hn::RebindToUnsigned<DF>;
using VU = hn::Vec<DU>;
using DBf = hn::Repartition<hwy::bfloat16_t, DF>;  // 2 * Lanes bf16

HWY_INLINE VU LoadBf16Pair(const hwy::bfloat16_t* HWY_RESTRICT p) {
  return hn::BitCast(DU(), hn::LoadU(DBf(), p));
}
HWY_INLINE VF EvenOf(VU v) { return hn::BitCast(DF(), hn::ShiftLeft<16>(v)); }
HWY_INLINE VF OddOf(VU v) { return hn::BitCast(DF(), hn::And(v, hn::Set(DU(), 0xFFFF0000u))); }

// The bf16 of the even-element results e and the odd-element results o,
// rounded to nearest even, in element order (each 32-bit lane: e's in the
// low half, o's in the high half).
// kMayHoldNaN = false (no lane of e or o is NaN) rounds the packed halves
// with 16-bit integer operations: hi = the truncated halves, lo = the dropped
// ones; hi + 1 exactly when lo + 0x7FFF + (hi & 1) carries out of 16 bits,
// which is when (lo + (0x7FFE | (hi & 1)) + 1) >> 1, the unsigned rounding
// average, reaches 0x8000. That is Bf16RneInHighHalves' add, carried per
// half; hi + 1 never wraps, since only a NaN has hi = 0xFFFF. On AVX-512
// (ternary logic merges each AND with its OR) 8 operations per pair rather
// than 10; 11 either way on AVX2.
template <bool kMayHoldNaN>
HWY_INLINE VU PackBf16Pair(VF e, VF o) {
  const DU du;
  const auto high = hn::Set(du, 0xFFFF0000u);
  if constexpr (kMayHoldNaN) {
    const auto re = Bf16RneInHighHalves<true>(e);
    const auto ro = Bf16RneInHighHalves<true>(o);
    return hn::Or(hn::ShiftRight<16>(re), hn::And(ro, high));
  } else {
    const hn::Repartition<std::uint16_t, DF> dw;
    const auto eb = hn::BitCast(du, e);
    const auto ob = hn::BitCast(du, o);
    const auto hi = hn::BitCast(dw, hn::Or(hn::ShiftRight<16>(eb), hn::And(ob, high)));
    const auto lo = hn::BitCast(dw, hn::Or(hn::ShiftLeft<16>(ob), hn::AndNot(high, eb)));
    const auto bias = hn::Or(hn::And(hi, hn::Set(dw, 1)), hn::Set(dw, 0x7FFE));
    return hn::BitCast(du, hn::Add(hi, hn::ShiftRight<15>(hn::AverageRound(lo, bias))));
  }
}

// A packed pair stored at p (streamed: p is 64-byte aligned, AVX-512).
template <bool kStream>
HWY_INLINE void StoreBf16Pair(VU packed, hwy::bfloat16_t* HWY_RESTRICT p) {
  if constexpr (kStream) {
    hn::Stream(hn::BitCast(DBf(), packed), DBf(), p);
  } else {
    hn::StoreU(hn::BitCast(DBf(), packed), DBf(), p);
  }
}

// The whole pairs of kRows rows (1 or 2; with 1, x1, out1 and f1 are
// unused) of one call: out_k[i] = f_k(x_k[i], g[i], b[i]). Two rows share
// the loads and the widening of gamma and beta. Returns how many elements of
// each row it wrote; the caller writes the rest. With kG/kB false, f ignores
// that argument. Non-temporal stores when `stream` and every output row
// starts on a cache line (AVX-512: a pair is one line). With `ahead` (a
// row to come, at least d elements, or nullptr), each pair at i also asks
// for ahead[i] in L2. Both choices are made outside the loop: a test of
// whether to prefetch in every step cost the native AVX512_BF16 forward's
// like loop 4-7 % at 1 MiB (avx512bf16_layer_norm.cc, Ahead).
template <bool kMayHoldNaN, bool kG, bool kB, int kRows, class F>
HWY_INLINE std::int64_t WriteBf16RowsInPairs(
    DF df, const hwy::bfloat16_t* HWY_RESTRICT x0, const hwy::bfloat16_t* HWY_RESTRICT x1,
    const hwy::bfloat16_t* HWY_RESTRICT g, const hwy::bfloat16_t* HWY_RESTRICT b,
    hwy::bfloat16_t* HWY_RESTRICT out0, hwy::bfloat16_t* HWY_RESTRICT out1, std::int64_t d,
    bool stream, const F& f0, const F& f1, const hwy::bfloat16_t* ahead = nullptr) {
  static_assert(kRows == 1 || kRows == 2, "one or two rows");
  const auto aligned = [](const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % kCacheLine == 0;
  };
  const bool stream_lines =
      stream && 4 * hn::Lanes(df) == kCacheLine && aligned(out0) && (kRows == 1 || aligned(out1));
  const std::int64_t step = 2 * static_cast<std::int64_t>(hn::Lanes(df));
  // Copies: the compiler then knows that the stores do not change them.
  const F fa = f0;
  const F fb = f1;
  // The loop, with the choices of stores and of prefetches made outside it.
  const auto pairs = [&](auto streamed, auto prefetched) LNV_INLINE_LAMBDA {
    constexpr bool kStream = decltype(streamed)::value;
    constexpr bool kAhead = decltype(prefetched)::value;
    std::int64_t i = 0;
    for (; i + step <= d; i += step) {
      if constexpr (kAhead) PrefetchToL2(ahead + i);
      const VU gv = kG ? LoadBf16Pair(g + i) : hn::Zero(DU());
      const VU bv = kB ? LoadBf16Pair(b + i) : hn::Zero(DU());
      const VF ge = EvenOf(gv);
      const VF go = OddOf(gv);
      const VF be = EvenOf(bv);
      const VF bo = OddOf(bv);
      const VU xa = LoadBf16Pair(x0 + i);
      StoreBf16Pair<kStream>(
          PackBf16Pair<kMayHoldNaN>(fa(EvenOf(xa), ge, be), fa(OddOf(xa), go, bo)), out0 + i);
      if constexpr (kRows == 2) {
        const VU xb = LoadBf16Pair(x1 + i);
        StoreBf16Pair<kStream>(
            PackBf16Pair<kMayHoldNaN>(fb(EvenOf(xb), ge, be), fb(OddOf(xb), go, bo)), out1 + i);
      }
    }
    return i;
  };
  if (ahead != nullptr) {
    return stream_lines ? pairs(std::true_type(), std::true_type())
                        : pairs(std::false_type(), std::true_type());
  }
  return stream_lines ? pairs(std::true_type(), std::false_type())
                      : pairs(std::false_type(), std::false_type());
}
#endif

// gamma or beta as fp32, once per call and thread rather than once per row:
// an fp32 array as it is, a bf16/f16 one converted (exactly) into `out`
// (PaddedLength(d) floats); an absent one stays nullptr.
template <typename T>
HWY_INLINE const float* ParamsAsF32(DF df, const T* HWY_RESTRICT p, std::int64_t d,
                                    float* HWY_RESTRICT out) {
  if (p == nullptr) return nullptr;
  if constexpr (kIsF32<T>) {
    (void)df;
    (void)d;
    (void)out;
    return p;
  } else {
    const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
    for (std::int64_t i = 0; i < d; i += lanes) {
      const std::int64_t n = std::min(lanes, d - i);
      StoreAt(df, LoadAt(df, p, i, n), out, i, n);
    }
    return out;
  }
}

// ---- Tree-shaped row sums (reduction_shape.h) ----

static_assert((kAccumulators & (kAccumulators - 1)) == 0, "a balanced merge of the accumulators");

template <std::size_t K>
struct Columns {
  VF v[K][kAccumulators];
};

// The sum of v's lanes by folding halves: lane j + lane j + N/2, and again on
// the N/2 sums, down to one: a balanced tree of depth log2(N)
// (reduction_shape.h).
template <class D>
HWY_INLINE float FoldHalves(D d, hn::Vec<D> v) {
  constexpr std::size_t kN = hn::MaxLanes(D());
#if HWY_TARGET == HWY_SCALAR
  static_assert(kN == 1, "the scalar target has one lane");
  (void)d;
  return hn::GetLane(v);
#else
  if constexpr (kN == 1) {
    return hn::GetLane(v);
  } else if constexpr (kN == 4) {
    v = hn::Add(v, hn::Shuffle1032(v));  // lanes j + j + 2
    v = hn::Add(v, hn::Shuffle2301(v));  // lanes 0 + 1
    (void)d;
    return hn::GetLane(v);
  } else {
    static_assert(kN % 8 == 0, "vectors of 8 or more floats fold to 128 bits");
    const hn::Half<D> dh;
    return FoldHalves(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  }
#endif
}

// One block's columns: elements [begin, end), whole steps of kAccumulators
// vectors, then the block's tail vectors into accumulators 0, 1, ... in turn.
template <std::size_t K, class Term>
HWY_INLINE Columns<K> BlockSums(DF df, std::int64_t begin, std::int64_t end, const Term& term) {
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
  const std::int64_t step = kAccumulators * lanes;
  // Locals, not the returned object: the return slot lives in memory, and
  // accumulating into it would store and reload every vector.
  VF acc[K][kAccumulators];
#pragma GCC unroll 2
  for (std::size_t s = 0; s < K; ++s) {
#pragma GCC unroll 8
    for (std::int64_t a = 0; a < kAccumulators; ++a) acc[s][a] = hn::Zero(df);
  }
  VF t[K];
  std::int64_t i = begin;
  for (; i + step <= end; i += step) {
#pragma GCC unroll 8
    for (std::int64_t a = 0; a < kAccumulators; ++a) {
      term(i + a * lanes, lanes, t);
#pragma GCC unroll 2
      for (std::size_t s = 0; s < K; ++s) acc[s][a] = hn::Add(acc[s][a], t[s]);
    }
  }
  // The block's tail: fewer than kAccumulators vectors, whole ones first
  // (a constant length: the loads need no check), then a partial one.
#pragma GCC unroll 8
  for (std::int64_t a = 0; a < kAccumulators; ++a) {
    if (i + lanes <= end) {
      term(i, lanes, t);
      i += lanes;
    } else if (i < end) {
      term(i, end - i, t);
      i = end;
    } else {
      break;
    }
#pragma GCC unroll 2
    for (std::size_t s = 0; s < K; ++s) acc[s][a] = hn::Add(acc[s][a], t[s]);
  }
  Columns<K> c;
#pragma GCC unroll 2
  for (std::size_t s = 0; s < K; ++s) {
#pragma GCC unroll 8
    for (std::int64_t a = 0; a < kAccumulators; ++a) c.v[s][a] = acc[s][a];
  }
  return c;
}

// a += b, column by column.
template <std::size_t K>
HWY_INLINE void AddColumns(Columns<K>& a, const Columns<K>& b) {
#pragma GCC unroll 2
  for (std::size_t s = 0; s < K; ++s) {
#pragma GCC unroll 8
    for (std::int64_t c = 0; c < kAccumulators; ++c) a.v[s][c] = hn::Add(a.v[s][c], b.v[s][c]);
  }
}

// The most tree levels over blocks: rows of up to 2^48 blocks.
inline constexpr int kMaxBlockLevels = 48;

// Blocks 0 .. blocks - 1 merged as a binary counter does (pairwise
// summation, Higham ASNA §4.1): when block b completes, it is added to the
// pending sums of 1, 2, 4, ... blocks that its count carries into; at the
// end the pending sums are added smallest first. Every merge joins two
// subtrees, and a term sees at most ceil(log2(blocks)) merges: the pending
// sums cover distinct powers of two, so adding them smallest first adds one
// level above the largest (reduction_shape.h).
template <std::size_t K, class Term>
HWY_NOINLINE Columns<K> MergeBlocks(DF df, std::int64_t d, std::int64_t blocks,
                                    const Term& term_in) {
  // A copy: term's captures then stay in registers (stores through the
  // pointers it captures cannot change a local whose address never escapes).
  const Term term = term_in;
  const std::int64_t block =
      kStepsPerBlock * kAccumulators * static_cast<std::int64_t>(hn::Lanes(df));
  Columns<K> pending[kMaxBlockLevels];
  for (std::int64_t b = 0; b < blocks; ++b) {
    Columns<K> c = BlockSums<K>(df, b * block, std::min((b + 1) * block, d), term);
    int level = 0;
    for (std::int64_t done = b; done & 1; done >>= 1, ++level) {
      Columns<K> left = pending[level];
      AddColumns(left, c);
      c = left;
    }
    pending[level] = c;
  }
  Columns<K> total;
  bool first = true;
  // The set bits of `blocks`, lowest first (a loop over all kMaxBlockLevels
  // levels cost 7 % of a bf16 row of 4096).
  for (auto rest = static_cast<std::uint64_t>(blocks); rest != 0; rest &= rest - 1) {
    const int level = __builtin_ctzll(rest);
    if (first) {
      total = pending[level];
      first = false;
    } else {
      Columns<K> left = pending[level];
      AddColumns(left, total);
      total = left;
    }
  }
  return total;
}

// K sums over a row of d elements in the shape of reduction_shape.h.
// term(i, n, t) sets t[s] to the s-th term vector for elements [i, i + n)
// (n <= Lanes; lanes >= n must be zero). It is called exactly once per vector
// position, in row order, so it may have side effects. Term lambdas are
// LNV_INLINE_LAMBDA: the accumulators must stay in registers.
template <std::size_t K, class Term>
HWY_INLINE void TreeSums(DF df, std::int64_t d, const Term& term, float* out) {
  const std::int64_t block =
      kStepsPerBlock * kAccumulators * static_cast<std::int64_t>(hn::Lanes(df));
  const std::int64_t blocks = (d + block - 1) / block;
  // Two blocks (d = 513 to 1024 with AVX2, 1025 to 2048 with AVX-512)
  // inline: MergeBlocks of two blocks is block 0's columns plus block 1's,
  // and out of line its pending sums went through memory; inline, the fp32
  // forward at d = 768 on an AVX2 Zen 3 guest took 0.72-0.85 of the time
  // (its ratios to oneDNN in alternated runs; bench/README.md).
  Columns<K> total;
  if (blocks == 1) {
    total = BlockSums<K>(df, 0, d, term);
  } else if (blocks == 2) {
    total = BlockSums<K>(df, 0, block, term);
    AddColumns(total, BlockSums<K>(df, block, d, term));
  } else {
    total = MergeBlocks<K>(df, d, blocks, term);
  }
  for (std::size_t s = 0; s < K; ++s) {
    VF a[kAccumulators];
#pragma GCC unroll 8
    for (std::int64_t c = 0; c < kAccumulators; ++c) a[c] = total.v[s][c];
      // Pairwise: (a0 + a1), (a2 + a3), ..., then those pairwise, down to a0.
#pragma GCC unroll 8
    for (std::int64_t w = 1; w < kAccumulators; w *= 2) {
#pragma GCC unroll 8
      for (std::int64_t c = 0; c + w < kAccumulators; c += 2 * w) a[c] = hn::Add(a[c], a[c + w]);
    }
    out[s] = FoldHalves(df, a[0]);
  }
}

// Zeroes lanes >= n of a tail term (n == Lanes: unchanged).
HWY_INLINE VF KeepFirst(DF df, VF v, std::int64_t n) {
  return n == static_cast<std::int64_t>(hn::Lanes(df))
             ? v
             : hn::IfThenElseZero(hn::FirstN(df, static_cast<std::size_t>(n)), v);
}

// WriteRow for two rows fused with the first statistics pass of the next
// two: out0[i .. i + n) = at0(i, n) and out1[i .. i + n) = at1(i, n) and,
// in the same loop, the tree-shaped sums of next0[0, d) into sums[0] and of
// next1[0, d) into sums[1] (the same bits as TreeSums over each alone: the
// terms and their order are the same). The next rows are then read from
// memory while these are written, an even mix of reads and writes like a
// copy's, rather than a burst of writes after a burst of reads. Ordinary
// stores only: calls that stream go one row at a time
// (fast_layer_norm.cc, kFusedPairsMinRowBytes).
template <typename T, class At0, class At1>
HWY_INLINE void WriteTwoRowsSummingNext(DF df, T* HWY_RESTRICT out0, T* HWY_RESTRICT out1,
                                        std::int64_t d, const At0& at0, const At1& at1,
                                        const T* HWY_RESTRICT next0, const T* HWY_RESTRICT next1,
                                        float* sums) {
  TreeSums<2>(
      df, d,
      [=](std::int64_t i, std::int64_t m, VF* t) LNV_INLINE_LAMBDA {
        t[0] = LoadAt(df, next0, i, m);
        t[1] = LoadAt(df, next1, i, m);
        StoreAt(df, at0(i, m), out0, i, m);
        StoreAt(df, at1(i, m), out1, i, m);
      },
      sums);
}

// ---- The rescaled path (row_scaling.h) ----

// Sum of the lanes of v, any order (only tested for NaN).
HWY_INLINE float AnyOrderSum(DF df, VF v) {
  HWY_ALIGN float lane_values[kMaxLanes];
  hn::Store(v, df, lane_values);
  float s = 0.f;
  for (std::size_t i = 0; i < hn::Lanes(df); ++i) s += lane_values[i];
  return s;
}

// False when the row holds a NaN or an infinity: x - x is 0 for every finite
// x and NaN otherwise, and a NaN survives any sum.
template <typename T>
HWY_NOINLINE bool RowIsFinite(DF df, const T* HWY_RESTRICT x, std::int64_t d) {
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
  VF acc = hn::Zero(df);
  for (std::int64_t i = 0; i < d; i += lanes) {
    const VF v = LoadAt(df, x, i, std::min(lanes, d - i));
    acc = hn::Add(acc, hn::Sub(v, v));
  }
  return !std::isnan(AnyOrderSum(df, acc));
}

// max_i |x_i| of a finite row.
template <typename T>
HWY_NOINLINE float RowMaxAbs(DF df, const T* HWY_RESTRICT x, std::int64_t d) {
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
  VF acc = hn::Zero(df);
  for (std::int64_t i = 0; i < d; i += lanes) {
    acc = hn::Max(acc, hn::Abs(LoadAt(df, x, i, std::min(lanes, d - i))));
  }
  HWY_ALIGN float lane_values[kMaxLanes];
  hn::Store(acc, df, lane_values);
  return *std::max_element(lane_values, lane_values + lanes);
}

// The power of two a finite row with largest magnitude max_abs is scaled by.
inline float ForwardScale(float max_abs) {
  if (!(max_abs > 0.f)) return 1.f;
  return std::ldexp(1.f, std::min(0, kScaledExponent - std::ilogb(max_abs)));
}

// rstd in scaled units, in double (row_scaling.h).
inline float ScaledRstd(float var_s, float eps, float scale) {
  const double q = static_cast<double>(var_s) + static_cast<double>(eps) *
                                                    static_cast<double>(scale) *
                                                    static_cast<double>(scale);
  return static_cast<float>(1.0 / std::sqrt(q));
}

// The backward's scale for a stored rstd (row_scaling.h); 1 when the row
// needs none or its rstd is not a positive finite number.
inline float BackwardScale(float rstd) {
  if (!(rstd > 0.f) || !(rstd < std::ldexp(1.f, -kBackwardRstdExponent))) return 1.f;
  return std::ldexp(1.f, std::ilogb(rstd) + kBackwardRstdExponent);
}

// Row statistics as the kernels use them: the stored forms and the forms in
// scaled units (equal when scale = 1).
struct RowStats {
  float mean = 0.f;    // stored; 0 for RMSNorm
  float rstd = 0.f;    // stored
  float scale = 1.f;   // power of two x is multiplied by
  float mean_s = 0.f;  // mean * scale
  float rstd_s = 0.f;  // rstd / scale
};

}  // namespace HWY_NAMESPACE
}  // namespace lnv::fast
HWY_AFTER_NAMESPACE();

#endif  // include guard (toggled per target)
