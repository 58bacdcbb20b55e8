// The native AVX512_BF16 LayerNorm forward and the entry (whose backward is
// the Highway one with native dx stores, fast_layer_norm.cc); the claim is
// in avx512bf16_layer_norm.h.
#include "impls/cpu/fast/avx512bf16_layer_norm.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "impls/cpu/fast/driver.h"
#include "impls/cpu/fast/fast_layer_norm.h"
#include "impls/cpu/fast/reduction_shape.h"
#include "impls/cpu/fast/targets.h"

// GCC 12's AVX-512 intrinsics make their "undefined" vectors as
// `__m512i __Y = __Y;`, which -Wuninitialized flags at every inlined use
// here (a false positive: those lanes are never read).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define LNV_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16")))
#define LNV_BF16_INLINE LNV_BF16_TARGET inline __attribute__((always_inline))
// Lambdas carry the target themselves (they do not inherit the caller's).
#define LNV_BF16_LAMBDA \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16"), always_inline))

namespace lnv::fast {
namespace {

constexpr std::int64_t kLanes = 16;
constexpr std::int64_t kColumns = kAccumulators * kLanes;
constexpr std::int64_t kBlock = kStepsPerBlock * kColumns;

// The columns of K rows' sums.
template <int K>
struct Acc {
  __m512 v[K][kAccumulators];
};

LNV_BF16_INLINE __mmask16 FirstN16(std::int64_t n) {
  return static_cast<__mmask16>((1u << n) - 1u);
}

// The even and odd elements of 32 bf16 values, exactly in fp32.
LNV_BF16_INLINE __m512 Even(__m512i v) { return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16)); }
LNV_BF16_INLINE __m512 Odd(__m512i v) {
  return _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32(-65536)));
}

LNV_BF16_INLINE __mmask32 FirstN32(std::int64_t n) {
  return static_cast<__mmask32>((std::uint64_t{1} << n) - 1);
}

// n (1 to 32) bf16 values from p; lanes >= n are 0.
LNV_BF16_INLINE __m512i Load32(const std::uint16_t* p, std::int64_t n) {
  return n == 32 ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi16(FirstN32(n), p);
}

// One block's columns (reduction_shape.h) for K rows at once (independent
// chains, the same shape each): element i of [begin, end) goes to lane
// (i - begin) mod 16 of accumulator ((i - begin) / 16) mod 8, added serially
// from zero. The terms come 32 elements at a time, as their even and odd
// elements (widened from bf16 with a shift and a mask, no word
// permutation): term(i, n, e, o) sets e[k] and o[k], row k's terms for the
// even and odd elements of [i, i + n) (n from 1 to 32), +0 in the lanes past
// n. E[p] and O[p] then hold accumulators 2p and 2p + 1 with their lanes
// in another order: lane j of E[p] is element 2j of the 32 (lane 2j of
// accumulator 2p for j < 8, lane 2j - 16 of 2p + 1 for j >= 8), and O[p]
// the odd ones. Every lane gets the same terms in the same order as in the
// plain shape, so the sums have the same bits; the lanes are put back in
// place once per block (Unpair). The one difference: a last step of at
// most 16 elements adds +0 to the lanes of accumulator 2p + 1, which the
// plain shape leaves alone. That changes no value: a sum that starts from
// +0 is never -0 (x + y is -0 in round-to-nearest only when both are -0, and
// a nonzero exact sum never rounds to zero), and s + (+0) = s for every
// other s, NaN payloads included.
template <int K, class Term>
LNV_BF16_INLINE Acc<K> BlockSum(std::int64_t begin, std::int64_t end, const Term& term) {
  constexpr std::int64_t kPairs = kAccumulators / 2;
  constexpr std::int64_t kPair = 2 * kLanes;
  __m512 ev[K][kPairs], od[K][kPairs];
#pragma GCC unroll 2
  for (int k = 0; k < K; ++k) {
#pragma GCC unroll 4
    for (std::int64_t p = 0; p < kPairs; ++p) ev[k][p] = od[k][p] = _mm512_setzero_ps();
  }
  // A local copy of the term, as the kernel was measured. Its first reason
  // (a term that stored vectors) went with that term; two alternated rounds
  // calling `term` directly gave bf16 at d = 4096, 1 MiB, 1.05 and 1.02 of
  // oneDNN against 1.17 and 1.19: too few to settle, so the copy stays.
  const Term local = term;
  __m512 e[K], o[K];
  std::int64_t i = begin;
  for (; i + kColumns <= end; i += kColumns) {
#pragma GCC unroll 4
    for (std::int64_t p = 0; p < kPairs; ++p) {
      local(i + p * kPair, kPair, e, o);
#pragma GCC unroll 2
      for (int k = 0; k < K; ++k) {
        ev[k][p] = _mm512_add_ps(ev[k][p], e[k]);
        od[k][p] = _mm512_add_ps(od[k][p], o[k]);
      }
    }
  }
  // The tail: fewer than 4 steps, the last maybe partial (unrolled, so
  // that the accumulators stay in registers).
#pragma GCC unroll 4
  for (std::int64_t p = 0; p < kPairs; ++p) {
    if (i >= end) break;
    const std::int64_t n = std::min(kPair, end - i);
    local(i, n, e, o);
#pragma GCC unroll 2
    for (int k = 0; k < K; ++k) {
      ev[k][p] = _mm512_add_ps(ev[k][p], e[k]);
      od[k][p] = _mm512_add_ps(od[k][p], o[k]);
    }
    i += n;
  }
  // Unpair: accumulator 2p's lane 2j is lane j of E[p], its lane 2j + 1
  // lane j of O[p] (j < 8); accumulator 2p + 1 the same from lanes j + 8.
  const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i hi = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
  Acc<K> out;
#pragma GCC unroll 2
  for (int k = 0; k < K; ++k) {
#pragma GCC unroll 4
    for (std::int64_t p = 0; p < kPairs; ++p) {
      out.v[k][2 * p] = _mm512_permutex2var_ps(ev[k][p], lo, od[k][p]);
      out.v[k][2 * p + 1] = _mm512_permutex2var_ps(ev[k][p], hi, od[k][p]);
    }
  }
  return out;
}

// Blocks [b0, b1) merged as the Highway kernels' binary counter does: the
// first 2^k blocks (2^k the largest power of two below the count) as a
// balanced tree, plus the rest merged the same way.
template <int K, class Term>
LNV_BF16_TARGET Acc<K> RangeSum(std::int64_t b0, std::int64_t b1, std::int64_t d,
                                const Term& term) {
  const std::int64_t n = b1 - b0;
  if (n == 1) return BlockSum<K>(b0 * kBlock, std::min(b1 * kBlock, d), term);
  std::int64_t half = 1;
  while (2 * half < n) half *= 2;
  Acc<K> left = RangeSum<K>(b0, b0 + half, d, term);
  const Acc<K> right = RangeSum<K>(b0 + half, b1, d, term);
#pragma GCC unroll 2
  for (int k = 0; k < K; ++k) {
#pragma GCC unroll 8
    for (std::int64_t a = 0; a < kAccumulators; ++a) {
      left.v[k][a] = _mm512_add_ps(left.v[k][a], right.v[k][a]);
    }
  }
  return left;
}

// Accumulators pairwise ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)),
// then the lanes by folding halves. Written out: a loop here kept the
// accumulators in memory.
static_assert(kAccumulators == 8, "Reduce adds eight accumulators");
LNV_BF16_INLINE float Reduce(const __m512 (&a)[kAccumulators]) {
  const __m512 v =
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3])),
                    _mm512_add_ps(_mm512_add_ps(a[4], a[5]), _mm512_add_ps(a[6], a[7])));
  const __m256 h8 = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  const __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
  const __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
  const __m128 h1 = _mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1));
  return _mm_cvtss_f32(h1);
}

// K rows' sums, each in the tree shape; out[k] is row k's.
template <int K, class Term>
LNV_BF16_INLINE void TreeSums(std::int64_t d, const Term& term, float* out) {
  const std::int64_t blocks = (d + kBlock - 1) / kBlock;
  const Acc<K> total = blocks == 1 ? BlockSum<K>(0, d, term) : RangeSum<K>(0, blocks, d, term);
#pragma GCC unroll 2
  for (int k = 0; k < K; ++k) out[k] = Reduce(total.v[k]);
}

// f32 -> bf16, round to nearest even, NaN quieted: for the pairs the
// instruction would flush.
std::uint16_t RneBf16(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  if (std::isnan(f)) return static_cast<std::uint16_t>((b | 0x00400000u) >> 16);
  return static_cast<std::uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

// bf16 bits, RNE, of 32 consecutive values of y given as their even
// (elements 0, 2, ..., 30) and odd elements: the instruction, then the
// words interleaved; pairs holding a subnormal are rounded in integers.
// The instruction gives a normal, infinite or NaN bf16 for every fp32 that
// is not zero or subnormal, so only a pair with a zero result is checked
// for subnormals (one test of the results rather than a classification of
// both inputs).
LNV_BF16_INLINE __m512i PackRne(__m512 even, __m512 odd) {
  const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
                                       23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i halves = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(odd, even));
  const __mmask32 zero = _mm512_testn_epi16_mask(halves, _mm512_set1_epi16(0x7FFF));
  if (__builtin_expect(zero == 0, 1)) return _mm512_permutexvar_epi16(idx, halves);
  constexpr int kSubnormal = 0x20;
  const __mmask16 sub =
      _mm512_fpclass_ps_mask(even, kSubnormal) | _mm512_fpclass_ps_mask(odd, kSubnormal);
  if (sub == 0) return _mm512_permutexvar_epi16(idx, halves);
  alignas(64) float e[16], o[16];
  alignas(64) std::uint16_t bits[32];
  _mm512_store_ps(e, even);
  _mm512_store_ps(o, odd);
  for (int j = 0; j < 16; ++j) {
    bits[2 * j] = RneBf16(e[j]);
    bits[2 * j + 1] = RneBf16(o[j]);
  }
  return _mm512_load_si512(bits);
}

// One row's statistics, as the harness reads them.
struct Stats {
  float mean = 0;
  float rstd = 0;
  bool finite = false;  // var + eps finite; otherwise the row is the fallback's
};

// Elements [i, i + n) (n from 1 to 32) of y = gamma * ((x - mean) * rstd) +
// beta for K rows, gamma and beta widened once for all of them. The
// arithmetic is elementwise, so computing on even and odd elements changes
// no bit. kStream (n = 32, y[k] + i on a 64-byte line): one non-temporal
// store of a whole line per row.
template <int K, bool kGamma, bool kBeta, bool kStream>
LNV_BF16_INLINE void WriteStep(const std::uint16_t* const* x, const std::uint16_t* gamma,
                               const std::uint16_t* beta, const __m512* vmean, const __m512* vrstd,
                               std::uint16_t* const* y, std::int64_t i, std::int64_t n) {
  const __m512i gv = kGamma ? Load32(gamma + i, n) : _mm512_setzero_si512();
  const __m512i bv = kBeta ? Load32(beta + i, n) : _mm512_setzero_si512();
  const __m512 g[2] = {Even(gv), Odd(gv)};
  const __m512 b[2] = {Even(bv), Odd(bv)};
#pragma GCC unroll 2
  for (int k = 0; k < K; ++k) {
    const __m512i xv = Load32(x[k] + i, n);
    __m512 out[2] = {Even(xv), Odd(xv)};
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m512 xhat = _mm512_mul_ps(_mm512_sub_ps(out[h], vmean[k]), vrstd[k]);
      if constexpr (kGamma && kBeta) {
        out[h] = _mm512_fmadd_ps(g[h], xhat, b[h]);
      } else if constexpr (kGamma) {
        out[h] = _mm512_mul_ps(g[h], xhat);
      } else if constexpr (kBeta) {
        out[h] = _mm512_add_ps(xhat, b[h]);
      } else {
        out[h] = xhat;
      }
    }
    const __m512i packed = PackRne(out[0], out[1]);
    if constexpr (kStream) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(y[k] + i), packed);
    } else if (n == 32) {
      _mm512_storeu_si512(y[k] + i, packed);
    } else {
      _mm512_mask_storeu_epi16(y[k] + i, FirstN32(n), packed);
    }
  }
}

// The line of p into L1 (kL1) or L2.
template <bool kL1>
LNV_BF16_INLINE void PrefetchLine(const std::uint16_t* p) {
  if constexpr (kL1) {
    _mm_prefetch(p, _MM_HINT_T0);
  } else {
    _mm_prefetch(p, _MM_HINT_T1);
  }
}

// What a write pass over rows of d elements prefetches of the rows after
// them at each step i, chosen at compile time (a test in the write loop
// measured slower, bench/README.md): nothing; kYForWriting, the line holding
// element i of each of y's rows in lines[0, len), for writing (PREFETCHW);
// or kXToL2, the line holding lines[i] (x, one row) into L2 while i < len.
enum class Ahead { kNothing, kYForWriting, kXToL2 };

struct WriteAhead {
  const std::uint16_t* lines = nullptr;
  std::int64_t len = 0;
};

template <Ahead kAhead>
LNV_BF16_INLINE void PrefetchAhead(const WriteAhead& ahead, std::int64_t d, std::int64_t i) {
  if constexpr (kAhead == Ahead::kYForWriting) {
    for (std::int64_t j = i; j < ahead.len; j += d) PrefetchForWriting(ahead.lines + j);
  } else if constexpr (kAhead == Ahead::kXToL2) {
    if (i < ahead.len) PrefetchLine<false>(ahead.lines + i);
  }
}

// y for K rows in one pass, 32 elements a step. With `stream` (the call's
// choice, driver.h), and when the K rows start at the same offset within a
// 64-byte line, the row's whole lines go out with non-temporal stores after
// an aligning head; the partial lines at either end use ordinary stores, so
// no line is written both ways. Which stores are used never changes a value.
// Each step i (the head and the partial last one too) also prefetches the
// lines of `ahead` at element i (WriteAhead).
// Returns how many rows streamed (K or 0).
template <int K, bool kGamma, bool kBeta, Ahead kAhead>
LNV_BF16_TARGET int WriteRows(const std::uint16_t* const* rows_x, const std::uint16_t* gamma,
                              const std::uint16_t* beta, std::int64_t d, const Stats* st,
                              std::uint16_t* const* rows_y, bool stream, const WriteAhead& ahead) {
  // The row pointers as locals: read through the caller's arrays, each
  // step reloaded them after every store to y (which might alias them).
  const std::uint16_t* x[K];
  std::uint16_t* y[K];
  __m512 vmean[K], vrstd[K];
#pragma GCC unroll 2
  for (int k = 0; k < K; ++k) {
    x[k] = rows_x[k];
    y[k] = rows_y[k];
    vmean[k] = _mm512_set1_ps(st[k].mean);
    vrstd[k] = _mm512_set1_ps(st[k].rstd);
  }
  const auto addr = reinterpret_cast<std::uintptr_t>(y[0]);
  stream = stream && addr % sizeof(std::uint16_t) == 0;
#pragma GCC unroll 2
  for (int k = 1; k < K; ++k) {
    stream = stream && (reinterpret_cast<std::uintptr_t>(y[k]) - addr) % kCacheLine == 0;
  }
  std::int64_t i = 0;
  if (stream) {
    const std::int64_t head = std::min<std::int64_t>(
        d, static_cast<std::int64_t>((kCacheLine - addr % kCacheLine) % kCacheLine / 2));
    if (head > 0) {
      PrefetchAhead<kAhead>(ahead, d, 0);
      WriteStep<K, kGamma, kBeta, false>(x, gamma, beta, vmean, vrstd, y, 0, head);
    }
    for (i = head; i + 32 <= d; i += 32) {
      PrefetchAhead<kAhead>(ahead, d, i);
      WriteStep<K, kGamma, kBeta, true>(x, gamma, beta, vmean, vrstd, y, i, 32);
    }
  }
  for (; i + 32 <= d; i += 32) {
    PrefetchAhead<kAhead>(ahead, d, i);
    WriteStep<K, kGamma, kBeta, false>(x, gamma, beta, vmean, vrstd, y, i, 32);
  }
  if (i < d) {
    PrefetchAhead<kAhead>(ahead, d, i);
    WriteStep<K, kGamma, kBeta, false>(x, gamma, beta, vmean, vrstd, y, i, d - i);
  }
  return stream ? K : 0;
}

template <int K, Ahead kAhead = Ahead::kNothing>
LNV_BF16_TARGET int WriteRows(const ForwardArgs& a, const std::uint16_t* const* x, const Stats* st,
                              std::uint16_t* const* y, bool stream,
                              const WriteAhead& ahead = WriteAhead()) {
  const auto* g = static_cast<const std::uint16_t*>(a.gamma);
  const auto* b = static_cast<const std::uint16_t*>(a.beta);
  const std::int64_t d = a.d;
  if (g != nullptr && b != nullptr) {
    return WriteRows<K, true, true, kAhead>(x, g, b, d, st, y, stream, ahead);
  }
  if (g != nullptr) return WriteRows<K, true, false, kAhead>(x, g, b, d, st, y, stream, ahead);
  if (b != nullptr) return WriteRows<K, false, true, kAhead>(x, g, b, d, st, y, stream, ahead);
  return WriteRows<K, false, false, kAhead>(x, g, b, d, st, y, stream, ahead);
}

// Which writes of a call stream (driver.h; the Highway bf16 forward's
// rule): two rows written together from half the footprint of one row at a
// time. Neither, where the call prefetches y for writing
// (Avx512Bf16PrefetchesOutputs).
struct StreamChoice {
  bool one = false;  // a row written alone
  bool two = false;  // two rows written in one pass
};

// What a pass over rows prefetches of the rows after them (within the
// thread's item for y; x anywhere in the call):
//   kXToL2: x into L2 (calls that fit in a core's L2, and long rows): the
//     next rows' first row while these rows' deviations are summed, their
//     second (where these are two) while these are written. Spread so,
//     rather than both next rows during the deviations, bf16 at d = 4096,
//     1024 MiB, two threads on the Zen 5 guest moved 35.5-37.0 GB/s against
//     28.9-32.3 (medians of sets of three processes alternated with the
//     build before, bench/README.md); at 1 MiB the same, once the write
//     loop's prefetch was chosen at compile time (Ahead);
//   kXToL1AndY: x into L1 a row at a time, its first row while these rows
//     are summed and its second while their deviations are, and y for
//     writing (PREFETCHW) while they are written (calls past a core's L2
//     with short rows, Avx512Bf16PrefetchesOutputs, which never stream).
//     Taking x into L1 a pass earlier took the kernel, bf16 at d = 768,
//     64 MiB, two threads on the Zen 5 guest, y streamed then, from
//     0.89-0.97 to 1.02-1.04 of oneDNN (alternated rounds, bench/README.md);
//     done at every size it cost 11-27 % at 1 MiB, which keeps kXToL2.
//     Spreading the lines so, rather than the pair's x all while these
//     rows are summed and its y all while their deviations are, took the
//     medians of two sets of alternated rounds there (five and eight) from
//     1.15 and 1.04 of oneDNN to 1.26 and 1.13, and on one thread from 0.96
//     and 1.01 to 0.95 and 1.00 (bench/README.md).
enum class Prefetch { kXToL2, kXToL1AndY };

// Row r by the Highway AVX-512 kernel (non-finite var + eps).
void FallbackRow(const ForwardArgs& a, std::int64_t r) {
  ForwardArgs one = a;
  one.rows = 1;
  one.x = static_cast<const std::uint16_t*>(a.x) + r * a.d;
  one.y = static_cast<std::uint16_t*>(a.y) + r * a.d;
  one.mean = a.mean != nullptr ? a.mean + r : nullptr;
  one.rstd = a.rstd != nullptr ? a.rstd + r : nullptr;
  AvailableTargets().front().layer_norm.forward[FastDTypeIndex(DType::kBF16)](&one);
}

// The next rows' lines that the passes over K rows prefetch: x[0, x_len),
// and y[0, y_len) for writing (PREFETCHW).
struct NextRows {
  const std::uint16_t* x = nullptr;
  std::int64_t x_len = 0;
  std::uint16_t* y = nullptr;
  std::int64_t y_len = 0;
};

// The prefetch of x in step i (32 elements: a line where the rows start on
// one) of a pass: the line holding element i of the next rows' row j, into
// L1 (kL1) or L2; none where the next rows are fewer than j + 1 (x_len ends
// before that row).
template <bool kL1>
LNV_BF16_INLINE void PrefetchNextXRow(const NextRows& n, std::int64_t d, int j, std::int64_t i) {
  if (j * d + i < n.x_len) PrefetchLine<kL1>(n.x + j * d + i);
}

// Rows r, r + 1, ..., r + K - 1 of an item that ends at row_end: where
// they are, and which lines of the rows after them their passes prefetch
// (x anywhere in the call; y only within this thread's item, as another
// thread may be writing the rows after it).
template <int K>
struct Group {
  std::int64_t r = 0;
  const std::uint16_t* x[K];
  std::uint16_t* y[K];
  NextRows next;
};

template <int K>
LNV_BF16_INLINE Group<K> GroupAt(const ForwardArgs& a, std::int64_t r, std::int64_t row_end) {
  const std::int64_t d = a.d;
  Group<K> g;
  g.r = r;
#pragma GCC unroll 2
  for (int k = 0; k < K; ++k) {
    g.x[k] = static_cast<const std::uint16_t*>(a.x) + (r + k) * d;
    g.y[k] = static_cast<std::uint16_t*>(a.y) + (r + k) * d;
  }
  g.next.x = g.x[K - 1] + d;
  g.next.x_len = std::min<std::int64_t>(K, a.rows - r - K) * d;
  g.next.y = g.y[K - 1] + d;
  g.next.y_len = std::min<std::int64_t>(K, row_end - r - K) * d;  // row_end >= r + K
  return g;
}

// The first pass: the K rows' sums, in K independent chains.
// kPlan: what the passes prefetch of the next rows (a template argument, so
// that each plan runs a loop of its own).
template <int K, Prefetch kPlan>
LNV_BF16_INLINE void SumPass(const Group<K>& g, std::int64_t d, float* sum) {
  const std::uint16_t* const* x = g.x;
  const NextRows& next = g.next;
  TreeSums<K>(
      d,
      [x, next, d](std::int64_t i, std::int64_t m, __m512* e, __m512* o) LNV_BF16_LAMBDA {
        (void)next;  // unused by some plans
        (void)d;
        if constexpr (kPlan == Prefetch::kXToL1AndY) PrefetchNextXRow<true>(next, d, 0, i);
#pragma GCC unroll 2
        for (int k = 0; k < K; ++k) {
          const __m512i v = Load32(x[k] + i, m);
          e[k] = Even(v);
          o[k] = Odd(v);
        }
      },
      sum);
}

// The second pass: from the sums, the K rows' means, deviations and rstd.
template <int K, Prefetch kPlan>
LNV_BF16_INLINE void DeviationPass(const Group<K>& g, std::int64_t d, float eps, const float* sum,
                                   Stats* st) {
  const float n = static_cast<float>(d);
  const std::uint16_t* const* x = g.x;
  const NextRows& next = g.next;
  __m512 vmean[K];
#pragma GCC unroll 2
  for (int k = 0; k < K; ++k) {
    st[k].mean = sum[k] / n;
    vmean[k] = _mm512_set1_ps(st[k].mean);
  }
  float m2[K];
  TreeSums<K>(
      d,
      [x, vmean, next, d](std::int64_t i, std::int64_t m, __m512* e, __m512* o) LNV_BF16_LAMBDA {
        (void)d;  // unused by some plans
        if constexpr (kPlan == Prefetch::kXToL2) {
          // The next rows' row 0: a pair's write pass takes their row 1;
          // a row taken alone prefetches only one (its x_len <= d).
          PrefetchNextXRow<false>(next, d, 0, i);
        } else if constexpr (kPlan == Prefetch::kXToL1AndY) {
          PrefetchNextXRow<true>(next, d, 1, i);
        }
        const __mmask16 even = FirstN16((m + 1) / 2);  // the lanes of elements < m
        const __mmask16 odd = FirstN16(m / 2);
#pragma GCC unroll 2
        for (int k = 0; k < K; ++k) {
          const __m512i v = Load32(x[k] + i, m);
          const __m512 de = _mm512_sub_ps(Even(v), vmean[k]);
          const __m512 dod = _mm512_sub_ps(Odd(v), vmean[k]);
          e[k] = _mm512_maskz_mul_ps(even, de, de);
          o[k] = _mm512_maskz_mul_ps(odd, dod, dod);
        }
      },
      m2);
#pragma GCC unroll 2
  for (int k = 0; k < K; ++k) {
    const float q = m2[k] / n + eps;
    st[k].finite = std::isfinite(q);
    st[k].rstd = 1.f / std::sqrt(q);
  }
}

// The last pass: the K rows' statistics stored and y written, in one pass
// when every row is finite; a row that is not goes to the fallback, and the
// others are then written one by one. The one pass also prefetches, under
// kPlan kXToL1AndY, the next rows' y for writing (Prefetch; a row taken
// alone is its item's last, and its y_len is 0), and under kXToL2 the
// second of the next two rows' x into L2; rows written one by one do not.
// Returns how many rows streamed.
template <int K, Prefetch kPlan>
LNV_BF16_INLINE int WritePass(const ForwardArgs& a, const Group<K>& g, const Stats* st,
                              const StreamChoice& stream) {
  bool all_finite = true;
#pragma GCC unroll 2
  for (int k = 0; k < K; ++k) all_finite = all_finite && st[k].finite;
  int streamed = 0;
#pragma GCC unroll 2
  for (int k = 0; k < K; ++k) {
    if (!st[k].finite) {
      FallbackRow(a, g.r + k);
      continue;
    }
    if (a.mean != nullptr) a.mean[g.r + k] = st[k].mean;
    if (a.rstd != nullptr) a.rstd[g.r + k] = st[k].rstd;
    if (!all_finite) streamed += WriteRows<1>(a, &g.x[k], &st[k], &g.y[k], stream.one);
  }
  if (!all_finite) return streamed;
  const bool stream_rows = K == 1 ? stream.one : stream.two;
  WriteAhead ahead;
  if constexpr (kPlan == Prefetch::kXToL1AndY) {
    ahead.lines = g.next.y;
    ahead.len = g.next.y_len;
    return WriteRows<K, Ahead::kYForWriting>(a, g.x, st, g.y, stream_rows, ahead);
  } else if constexpr (K == 2) {
    if (g.next.x_len > a.d) {
      ahead.lines = g.next.x + a.d;
      ahead.len = a.d;
    }
    return WriteRows<K, Ahead::kXToL2>(a, g.x, st, g.y, stream_rows, ahead);
  }
  return WriteRows<K>(a, g.x, st, g.y, stream_rows);
}

// The rows of `item`, two at a time: each pass sums or writes both rows of
// a pair in independent chains (one row's final reductions overlap the
// other's); a last row without a partner goes alone. With `interleave`, a
// pair's passes are interleaved with the next pair's sums: deviations of
// pair p, sums of pair p + 1, writes of pair p. Those sums need nothing of
// pair p, so they run while its last reduction and square root finish, and
// its writes while they are reduced in turn. Without it, each pair's three
// passes run in turn. Each row's arithmetic is the same either way, so are
// its bits. Returns how many rows streamed.
template <Prefetch kPlan>
LNV_BF16_TARGET std::int64_t ItemRows(const ForwardArgs& a, const WorkItem& item,
                                      const StreamChoice& stream, bool interleave) {
  std::int64_t streamed = 0;
  std::int64_t r = item.row_begin;
  if (r + 2 <= item.row_end) {
    Group<2> g = GroupAt<2>(a, r, item.row_end);
    float sum[2];
    SumPass<2, kPlan>(g, a.d, sum);
    for (;;) {
      Stats st[2];
      DeviationPass<2, kPlan>(g, a.d, a.eps, sum, st);
      const Group<2> pair = g;
      r += 2;
      const bool more = r + 2 <= item.row_end;
      if (more) g = GroupAt<2>(a, r, item.row_end);
      if (more && interleave) SumPass<2, kPlan>(g, a.d, sum);
      streamed += WritePass<2, kPlan>(a, pair, st, stream);
      if (!more) break;
      if (!interleave) SumPass<2, kPlan>(g, a.d, sum);
    }
  }
  if (r < item.row_end) {
    const Group<1> g = GroupAt<1>(a, r, item.row_end);
    float sum[1];
    Stats st[1];
    SumPass<1, kPlan>(g, a.d, sum);
    DeviationPass<1, kPlan>(g, a.d, a.eps, sum, st);
    streamed += WritePass<1, kPlan>(a, g, st, stream);
  }
  return streamed;
}

std::atomic<std::int64_t> g_streamed_rows{0};

}  // namespace

// PREFETCHW brings a line into L1: only rows of which eight (x and y of the
// pair being written and of the pair prefetched) fit in it. Rows of 8 KiB
// (d = 4096) lost 6 to 15 % with it at 8 MiB (bench/README.md). Such calls
// store the ordinary way even past the streaming footprint, where the
// streamed write pass waited on the write-combining buffers: on the Zen 5 guest
// (bench/README.md, bf16 at d = 768, alternated builds, fast/oneDNN, two
// threads) the medians of four sets of rounds at 64 MiB went from 0.90-0.96
// streamed to 1.02-1.13, and the kernel was faster at 16, 32, 256 and 1024
// MiB too; on one thread two sets of three favoured it, one did not.
bool Avx512Bf16PrefetchesOutputs(std::int64_t footprint_bytes, std::int64_t row_bytes) {
  return PrefetchOutputsForWriting(footprint_bytes, false) && StoresShortRowsInPlace(row_bytes);
}

namespace {

// Whether a call interleaves each pair's writes with the next pair's sums
// (ItemRows): where its rows (x and y) fit in a core's L2, and the rows an
// interleaved pass holds (two pairs' x, one pair's y) fit in half its L1d.
// The gain is in the per-pair latency it hides, which matters most for short
// rows. Past L2 the next pair's sums would start a whole write pass sooner
// than in turn, with less time for their lines to arrive. Measured
// (bench/README.md, an AMD Zen 5 guest, 48 KiB of L1d and 1 MiB of L2 a
// core): bench_kernels, bf16 at 1 MiB, fast/fast_hwy in one process, five
// rounds, d = 768: 1.21-1.29 in turn, 1.25-1.48 interleaved (one thread),
// 1.26-1.35 and 1.29-1.43 (two); d = 4096 (8 KiB rows, past the L1d limit
// here) within the scatter. The kernel timed alone, interleaved against in
// turn: within 3 % at 4 and 8 MiB, 3-7 % slower at 64 MiB (two threads),
// 8-18 % slower there on one.
bool InterleavesNextSums(std::int64_t footprint_bytes, std::int64_t row_bytes) {
  return footprint_bytes <= CoreL2Bytes() && 6 * row_bytes <= CoreL1dBytes() / 2;
}

void Rows(const ForwardArgs& a, WorkQueue& queue, float* /*scratch*/) {
  const std::int64_t row_bytes = a.d * static_cast<std::int64_t>(sizeof(std::uint16_t));
  const std::int64_t footprint = 2 * a.rows * row_bytes;  // x and y
  // Past a core's L2 with short rows (Prefetch): x into L1 and y for
  // writing, and no streaming.
  const bool prefetch_outputs = Avx512Bf16PrefetchesOutputs(footprint, row_bytes);
  const Prefetch plan = prefetch_outputs ? Prefetch::kXToL1AndY : Prefetch::kXToL2;
  StreamChoice stream;  // `one` implies `two`
  stream.one = !prefetch_outputs && UseStreamingStores(footprint, row_bytes);
  stream.two = !prefetch_outputs && UseStreamingStoresForSpreadWrites(footprint, row_bytes);
  const bool interleave = InterleavesNextSums(footprint, row_bytes);
  std::int64_t streamed = 0;
  WorkItem item;
  while (queue.Next(&item)) {
    switch (plan) {
      case Prefetch::kXToL2:
        streamed += ItemRows<Prefetch::kXToL2>(a, item, stream, interleave);
        break;
      case Prefetch::kXToL1AndY:
        streamed += ItemRows<Prefetch::kXToL1AndY>(a, item, stream, interleave);
        break;
    }
  }
  if (streamed > 0) {
    _mm_sfence();  // this thread's non-temporal stores, ordered before the call returns
    g_streamed_rows.fetch_add(streamed, std::memory_order_relaxed);
  }
}

// cpuid's flags; the Highway target check adds that the OS saves the
// AVX-512 state (xgetbv), which __builtin_cpu_supports does not look at.
bool Detect() {
  __builtin_cpu_init();
  const std::vector<TargetKernels>& targets = AvailableTargets();
  return __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
         targets.front().backend == "cpu-fast-avx512";
}

}  // namespace

bool HaveAvx512Bf16LayerNorm() {
  static const bool have = Detect();
  return have;
}

std::int64_t Avx512Bf16StreamedRowsForTest() {
  return g_streamed_rows.load(std::memory_order_relaxed);
}

int Avx512Bf16LayerNormForward(const ForwardArgs* args) {
  return RunForward(args, Norm::kLayerNorm, &Rows);
}

ImplInfo Avx512Bf16LayerNormImpl() {
  const TargetKernels& avx512 = AvailableTargets().front();
  ImplInfo info = FastLayerNormImpl(avx512, DType::kBF16);
  info.name = "bf16/two_pass_tree/cpu-fast-avx512bf16";
  info.forward = &Avx512Bf16LayerNormForward;
  info.backward = avx512.layer_norm_bf16_native_backward;
  info.source = "impls/cpu/fast/avx512bf16_layer_norm.h";
  return info;
}

}  // namespace lnv::fast
