// The native AVX512_BF16 LayerNorm forward; the claim is in
// avx512bf16_layer_norm.h.
#include "impls/cpu/fast/avx512bf16_layer_norm.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "impls/cpu/fast/driver.h"
#include "impls/cpu/fast/fast_layer_norm.h"
#include "impls/cpu/fast/reduction_shape.h"
#include "impls/cpu/fast/targets.h"

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

struct Acc {
  __m512 v[kAccumulators];
};

LNV_BF16_INLINE __mmask16 FirstN16(std::int64_t n) {
  return static_cast<__mmask16>((1u << n) - 1u);
}

// n (1 to 16) bf16 values from p, widened exactly to fp32; lanes >= n are 0.
LNV_BF16_INLINE __m512 LoadBf16(const std::uint16_t* p, std::int64_t n) {
  const __m256i bits = n == kLanes ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))
                                   : _mm256_maskz_loadu_epi16(FirstN16(n), p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}

// One block's columns (reduction_shape.h): element i of [begin, end) goes to
// accumulator ((i - begin) / 16) mod 8, added serially from zero.
template <class Term>
LNV_BF16_INLINE Acc BlockSum(std::int64_t begin, std::int64_t end, const Term& term) {
  __m512 acc[kAccumulators];
  for (std::int64_t a = 0; a < kAccumulators; ++a) acc[a] = _mm512_setzero_ps();
  std::int64_t i = begin;
  for (; i + kColumns <= end; i += kColumns) {
#pragma GCC unroll 8
    for (std::int64_t a = 0; a < kAccumulators; ++a) {
      acc[a] = _mm512_add_ps(acc[a], term(i + a * kLanes, kLanes));
    }
  }
  for (std::int64_t a = 0; a < kAccumulators && i < end; ++a) {
    const std::int64_t n = std::min(kLanes, end - i);
    acc[a] = _mm512_add_ps(acc[a], term(i, n));
    i += n;
  }
  Acc out;
  for (std::int64_t a = 0; a < kAccumulators; ++a) out.v[a] = acc[a];
  return out;
}

// Blocks [b0, b1) merged as the Highway kernels' binary counter does: the
// first 2^k blocks (2^k the largest power of two below the count) as a
// balanced tree, plus the rest merged the same way.
template <class Term>
LNV_BF16_TARGET Acc RangeSum(std::int64_t b0, std::int64_t b1, std::int64_t d, const Term& term) {
  const std::int64_t n = b1 - b0;
  if (n == 1) return BlockSum(b0 * kBlock, std::min(b1 * kBlock, d), term);
  std::int64_t half = 1;
  while (2 * half < n) half *= 2;
  Acc left = RangeSum(b0, b0 + half, d, term);
  const Acc right = RangeSum(b0 + half, b1, d, term);
  for (std::int64_t a = 0; a < kAccumulators; ++a) left.v[a] = _mm512_add_ps(left.v[a], right.v[a]);
  return left;
}

// Accumulators pairwise, then the lanes by folding halves.
LNV_BF16_INLINE float Reduce(Acc t) {
  for (std::int64_t w = 1; w < kAccumulators; w *= 2) {
    for (std::int64_t a = 0; a + w < kAccumulators; a += 2 * w) {
      t.v[a] = _mm512_add_ps(t.v[a], t.v[a + w]);
    }
  }
  const __m512 v = t.v[0];
  const __m256 h8 = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  const __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
  const __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
  const __m128 h1 = _mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1));
  return _mm_cvtss_f32(h1);
}

template <class Term>
LNV_BF16_INLINE float TreeSum(std::int64_t d, const Term& term) {
  const std::int64_t blocks = (d + kBlock - 1) / kBlock;
  return Reduce(blocks == 1 ? BlockSum(0, d, term) : RangeSum(0, blocks, d, term));
}

// f32 -> bf16, round to nearest even, NaN quieted: for the pairs the
// instruction would flush.
std::uint16_t RneBf16(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  if (std::isnan(f)) return static_cast<std::uint16_t>((b | 0x00400000u) >> 16);
  return static_cast<std::uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

// 32 values of y (lo: elements 0-15, hi: 16-31) in bf16, RNE.
LNV_BF16_INLINE __m512i PackRne(__m512 lo, __m512 hi) {
  const __m512i packed = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));
  constexpr int kSubnormal = 0x20;
  if (__builtin_expect(
          (_mm512_fpclass_ps_mask(lo, kSubnormal) | _mm512_fpclass_ps_mask(hi, kSubnormal)) == 0,
          1)) {
    return packed;
  }
  alignas(64) float y[32];
  alignas(64) std::uint16_t bits[32];
  _mm512_store_ps(y, lo);
  _mm512_store_ps(y + 16, hi);
  for (int j = 0; j < 32; ++j) bits[j] = RneBf16(y[j]);
  return _mm512_load_si512(bits);
}

LNV_BF16_INLINE __m512 Lo(__m512i v) {
  return _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(v)), 16));
}
LNV_BF16_INLINE __m512 Hi(__m512i v) {
  return _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(v, 1)), 16));
}

// n (1 to 32) bf16 values from p; lanes >= n are 0.
LNV_BF16_INLINE __m512i Load32(const std::uint16_t* p, std::int64_t n) {
  return n == 32 ? _mm512_loadu_si512(p)
                 : _mm512_maskz_loadu_epi16(static_cast<__mmask32>((std::uint64_t{1} << n) - 1), p);
}

// y = gamma * ((x - mean) * rstd) + beta over the row, 32 elements a step.
template <bool kGamma, bool kBeta>
LNV_BF16_TARGET void WriteRow(const std::uint16_t* x, const std::uint16_t* gamma,
                              const std::uint16_t* beta, std::int64_t d, float mean, float rstd,
                              std::uint16_t* y) {
  const __m512 vmean = _mm512_set1_ps(mean);
  const __m512 vrstd = _mm512_set1_ps(rstd);
  const auto f = [&](__m512 xs, __m512 g, __m512 b) LNV_BF16_LAMBDA {
    const __m512 xhat = _mm512_mul_ps(_mm512_sub_ps(xs, vmean), vrstd);
    if constexpr (kGamma && kBeta) return _mm512_fmadd_ps(g, xhat, b);
    if constexpr (kGamma) return _mm512_mul_ps(g, xhat);
    if constexpr (kBeta) return _mm512_add_ps(xhat, b);
    return xhat;
  };
  for (std::int64_t i = 0; i < d; i += 32) {
    const std::int64_t n = std::min<std::int64_t>(32, d - i);
    const __m512i xv = Load32(x + i, n);
    const __m512i gv = kGamma ? Load32(gamma + i, n) : _mm512_setzero_si512();
    const __m512i bv = kBeta ? Load32(beta + i, n) : _mm512_setzero_si512();
    const __m512i out = PackRne(f(Lo(xv), Lo(gv), Lo(bv)), f(Hi(xv), Hi(gv), Hi(bv)));
    if (n == 32) {
      _mm512_storeu_si512(y + i, out);
    } else {
      _mm512_mask_storeu_epi16(y + i, static_cast<__mmask32>((std::uint64_t{1} << n) - 1), out);
    }
  }
}

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

LNV_BF16_TARGET void Row(const ForwardArgs& a, std::int64_t r) {
  const std::int64_t d = a.d;
  const auto* x = static_cast<const std::uint16_t*>(a.x) + r * d;
  const float n = static_cast<float>(d);
  const float mean = TreeSum(d, [x](std::int64_t i, std::int64_t m)
                                    LNV_BF16_LAMBDA { return LoadBf16(x + i, m); }) /
                     n;
  const __m512 vmean = _mm512_set1_ps(mean);
  const float m2 = TreeSum(d, [x, vmean](std::int64_t i, std::int64_t m) LNV_BF16_LAMBDA {
    const __m512 dev = _mm512_sub_ps(LoadBf16(x + i, m), vmean);
    return _mm512_maskz_mul_ps(FirstN16(m), dev, dev);
  });
  const float q = m2 / n + a.eps;
  if (!std::isfinite(q)) return FallbackRow(a, r);
  const float rstd = 1.f / std::sqrt(q);
  if (a.mean != nullptr) a.mean[r] = mean;
  if (a.rstd != nullptr) a.rstd[r] = rstd;
  const auto* g = static_cast<const std::uint16_t*>(a.gamma);
  const auto* b = static_cast<const std::uint16_t*>(a.beta);
  auto* y = static_cast<std::uint16_t*>(a.y) + r * d;
  if (g != nullptr && b != nullptr) return WriteRow<true, true>(x, g, b, d, mean, rstd, y);
  if (g != nullptr) return WriteRow<true, false>(x, g, b, d, mean, rstd, y);
  if (b != nullptr) return WriteRow<false, true>(x, g, b, d, mean, rstd, y);
  WriteRow<false, false>(x, g, b, d, mean, rstd, y);
}

void Rows(const ForwardArgs& a, WorkQueue& queue, float* /*scratch*/) {
  WorkItem item;
  while (queue.Next(&item)) {
    for (std::int64_t r = item.row_begin; r < item.row_end; ++r) Row(a, r);
  }
}

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

int Avx512Bf16LayerNormForward(const ForwardArgs* args) {
  return RunForward(args, Norm::kLayerNorm, &Rows);
}

ImplInfo Avx512Bf16LayerNormImpl() {
  const TargetKernels& avx512 = AvailableTargets().front();
  ImplInfo info = FastLayerNormImpl(avx512, DType::kBF16);
  info.name = "bf16/two_pass_tree/cpu-fast-avx512bf16";
  info.forward = &Avx512Bf16LayerNormForward;
  info.source = "impls/cpu/fast/avx512bf16_layer_norm.h";
  return info;
}

}  // namespace lnv::fast
