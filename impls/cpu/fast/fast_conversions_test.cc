// Every storage conversion the fast kernels run, on every SIMD target this
// CPU supports, against the oracle's round-to-nearest-even (oracle/,
// RoundToFormat: rounding from the exact value, never via another format),
// the paired bf16 write's own rounding (both forms), and on a CPU with
// AVX512_BF16 the native rounding of whole lines. Negative controls:
// a truncating bf16 demotion, and the one Highway 1.0.3 itself provides,
// fail the same check.
#include <gtest/gtest.h>
#include <hwy/base.h>

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "harness/formats.h"
#include "impls/cpu/fast/avx512bf16_layer_norm.h"
#include "impls/cpu/fast/targets.h"

namespace lnv::fast {
namespace {

float FromBits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}
std::uint32_t BitsOf(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}

// The narrow bit pattern of a double that is exactly representable in the
// narrow format (it is exactly a float, and Eigen's cast of an exact value
// is exact).
std::uint16_t NarrowBits(double v, DType t) {
  const float f = static_cast<float>(v);
  if (t == DType::kBF16) return Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(f));
  return Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(f));
}

bool NarrowIsNan(std::uint16_t b, DType t) {
  return t == DType::kBF16 ? (b & 0x7F80) == 0x7F80 && (b & 0x7F) != 0
                           : (b & 0x7C00) == 0x7C00 && (b & 0x3FF) != 0;
}

// Demotes `values` with `demote` and counts the results that differ from the
// oracle's RNE rounding (a NaN must stay a NaN of the same sign).
template <typename Demote>
std::int64_t RneMismatches(const std::vector<float>& values, DType t, const Demote& demote,
                           std::string* first) {
  const FloatFormat f = t == DType::kBF16 ? kBfloat16 : kBinary16;
  std::vector<std::uint16_t> got(values.size());
  demote(values.data(), got.data(), static_cast<std::int64_t>(values.size()));
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float v = values[i];
    bool ok;
    std::uint16_t want = 0;
    if (std::isnan(v)) {
      ok = NarrowIsNan(got[i], t) && (got[i] >> 15) == (BitsOf(v) >> 31);
    } else {
      want = NarrowBits(RoundToFormat(static_cast<double>(v), f), t);
      ok = got[i] == want;
    }
    if (!ok && bad++ == 0 && first != nullptr) {
      char buf[128];
      std::snprintf(buf, sizeof(buf), "%a (0x%08x) -> 0x%04x, want 0x%04x", v, BitsOf(v), got[i],
                    want);
      *first = buf;
    }
  }
  return bad;
}

// Every bf16 rounding decision: every upper half (sign, exponent, kept
// mantissa, so every carry) with lower halves below, at, and above the tie,
// plus random ones. The length is odd, so the partial-vector path runs too.
std::vector<float> Bf16Probes() {
  std::vector<float> v;
  std::mt19937 rng(1);
  for (std::uint32_t hi = 0; hi < 0x10000; ++hi) {
    const std::uint32_t random_low = rng() & 0xFFFFu;
    for (const std::uint32_t lo :
         {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu, random_low}) {
      v.push_back(FromBits(hi << 16 | lo));
    }
  }
  v.push_back(1.f);
  return v;
}

// Every fp16 value, the midpoints between neighbours (ties) and a float ulp
// either side, the overflow threshold, the underflow to zero, every float
// binade, infinities and NaNs.
std::vector<float> F16Probes() {
  std::vector<float> v;
  for (std::uint32_t b = 0; b < 0x7C00; ++b) {
    const float lo = static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(std::uint16_t(b)));
    const float hi =
        b + 1 < 0x7C00
            ? static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(std::uint16_t(b + 1)))
            : 65536.f;                     // the next step above the largest finite value
    const float mid = lo + (hi - lo) / 2;  // exact: a float with one more bit
    for (const float x : {lo, mid, std::nextafter(mid, 0.f), std::nextafter(mid, 1e30f)}) {
      v.push_back(x);
      v.push_back(-x);
    }
  }
  std::mt19937 rng(2);
  for (std::uint32_t e = 0; e < 256; ++e) {
    for (int k = 0; k < 8; ++k) v.push_back(FromBits(e << 23 | (rng() & 0x807FFFFFu)));
  }
  for (const float x :
       {65504.f, 65519.f, 65520.f, 65521.f, 1e30f, std::ldexp(1.f, -25),
        std::nextafter(std::ldexp(1.f, -25), 1.f), std::ldexp(3.f, -26),
        std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
        std::numeric_limits<float>::signaling_NaN()}) {
    v.push_back(x);
    v.push_back(-x);
  }
  return v;
}

TEST(FastConversions, EveryTargetsBf16StoreRoundsToNearestEvenLikeTheOracle) {
  const std::vector<float> probes = Bf16Probes();
  for (const TargetKernels& t : AvailableTargets()) {
    std::string first;
    const auto demote = [&](const float* src, std::uint16_t* dst, std::int64_t n) {
      t.from_float(DType::kBF16, src, dst, n);
    };
    EXPECT_EQ(RneMismatches(probes, DType::kBF16, demote, &first), 0) << t.backend << ": " << first;
  }
}

// The paired write's rounding (PackBf16Pair): the general one on every
// probe; the NaN-free one, which the kernels use only on rows that give no
// NaN, on every probe that is not NaN (ties of both parities, every carry,
// rounding up into infinity, subnormals, zeros of both signs). Each list
// runs twice, the second time one place later, so that every probe is
// rounded both as an even and as an odd element of a pair.
TEST(FastConversions, EveryTargetsPairedBf16RoundingRoundsToNearestEvenLikeTheOracle) {
  const std::vector<float> probes = Bf16Probes();
  std::vector<float> no_nan;
  for (const float v : probes) {
    if (!std::isnan(v)) no_nan.push_back(v);
  }
  ASSERT_GT(no_nan.size(), 400000u);
  int targets_with_pairs = 0;
  for (const TargetKernels& t : AvailableTargets()) {
    if (t.bf16_pairs[0] == nullptr) continue;  // the scalar target has no pairs
    ++targets_with_pairs;
    for (int nan_free = 0; nan_free < 2; ++nan_free) {
      for (int shift = 0; shift < 2; ++shift) {
        std::vector<float> list = nan_free ? no_nan : probes;
        if (shift == 1) list.insert(list.begin(), 1.f);
        std::string first;
        const auto demote = [&](const float* src, std::uint16_t* dst, std::int64_t n) {
          t.bf16_pairs[static_cast<std::size_t>(nan_free)](DType::kBF16, src, dst, n);
        };
        EXPECT_EQ(RneMismatches(list, DType::kBF16, demote, &first), 0)
            << t.backend << (nan_free ? " (NaN-free)" : "") << " shift " << shift << ": " << first;
      }
    }
  }
  EXPECT_GT(targets_with_pairs, 0);
}

// The native rounding of whole lines (vcvtne2ps2bf16, which the AVX512_BF16
// entry's backward stores dx with; simd_row-inl.h, Bf16LineNative): every
// probe as the oracle rounds it, at two offsets (so each probe shares a
// line with different neighbours); lines of normal values all rounded by
// the instruction itself (not vacuous); a line holding the largest fp32
// subnormal, which the instruction flushes to zero, by the integer form.
TEST(FastConversions, NativeBf16LinesRoundToNearestEvenLikeTheOracle) {
  if (!HaveAvx512Bf16LayerNorm()) GTEST_SKIP() << "no AVX512_BF16";
  const TargetKernels& t = AvailableTargets().front();
  ASSERT_NE(t.bf16_native_lines, nullptr);
  const auto demote = [&](const float* src, std::uint16_t* dst, std::int64_t n) {
    t.bf16_native_lines(src, dst, n);
  };
  const std::vector<float> probes = Bf16Probes();
  for (int shift = 0; shift < 2; ++shift) {
    std::vector<float> list = probes;
    if (shift == 1) list.insert(list.begin(), 1.f);
    std::string first;
    EXPECT_EQ(RneMismatches(list, DType::kBF16, demote, &first), 0)
        << "shift " << shift << ": " << first;
  }
  std::vector<float> normal;
  for (const float v : probes) {
    if (std::isnormal(v)) normal.push_back(v);
  }
  normal.resize(normal.size() / 32 * 32);
  ASSERT_GT(normal.size(), 100000u);
  std::vector<std::uint16_t> out(normal.size());
  EXPECT_EQ(
      t.bf16_native_lines(normal.data(), out.data(), static_cast<std::int64_t>(normal.size())),
      static_cast<std::int64_t>(normal.size() / 32));
  std::vector<float> line(32, 1.5f);
  line[7] = FromBits(0x007FFFFFu);  // RNE: 0x0080, the smallest normal bf16
  std::uint16_t bits[32];
  EXPECT_EQ(t.bf16_native_lines(line.data(), bits, 32), 0);
  EXPECT_EQ(bits[7], 0x0080);
  EXPECT_EQ(bits[8], 0x3FC0);
}

TEST(FastConversions, EveryTargetsF16StoreRoundsToNearestEvenLikeTheOracle) {
  const std::vector<float> probes = F16Probes();
  for (const TargetKernels& t : AvailableTargets()) {
    std::string first;
    const auto demote = [&](const float* src, std::uint16_t* dst, std::int64_t n) {
      t.from_float(DType::kF16, src, dst, n);
    };
    EXPECT_EQ(RneMismatches(probes, DType::kF16, demote, &first), 0) << t.backend << ": " << first;
  }
}

TEST(FastConversions, EveryTargetsLoadsAreExactForEveryBf16AndF16Pattern) {
  std::vector<std::uint16_t> all(0x10000);
  for (std::uint32_t b = 0; b < 0x10000; ++b) all[b] = static_cast<std::uint16_t>(b);
  for (const TargetKernels& t : AvailableTargets()) {
    for (const DType dtype : {DType::kBF16, DType::kF16}) {
      std::vector<float> got(all.size());
      t.to_float(dtype, all.data(), got.data(), static_cast<std::int64_t>(all.size()) - 3);
      std::int64_t bad = 0;
      for (std::size_t b = 0; b + 3 < all.size(); ++b) {
        const float want =
            dtype == DType::kBF16
                ? FromBits(static_cast<std::uint32_t>(b) << 16)  // bf16 is fp32's upper half
                : static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(all[b]));
        const bool ok = std::isnan(want) ? std::isnan(got[b]) : BitsOf(got[b]) == BitsOf(want);
        bad += !ok;
      }
      EXPECT_EQ(bad, 0) << t.backend << " " << DTypeName(dtype);
    }
  }
}

TEST(FastConversions, Fp32RowsPassThroughUnchangedIncludingTheirTails) {
  std::mt19937 rng(3);
  std::vector<float> x(1000);
  for (float& v : x) v = FromBits(rng());
  for (const TargetKernels& t : AvailableTargets()) {
    for (const std::int64_t n : {1, 15, 17, 999}) {
      std::vector<float> a(n, 0.f), b(n, 0.f);
      t.to_float(DType::kF32, x.data(), a.data(), n);
      t.from_float(DType::kF32, x.data(), b.data(), n);
      EXPECT_EQ(std::memcmp(a.data(), x.data(), n * sizeof(float)), 0) << t.backend << " " << n;
      EXPECT_EQ(std::memcmp(b.data(), x.data(), n * sizeof(float)), 0) << t.backend << " " << n;
    }
  }
}

TEST(FastConversions, PartialStoresNeverWritePastTheirLength) {
  for (const TargetKernels& t : AvailableTargets()) {
    for (const DType dtype : {DType::kBF16, DType::kF16}) {
      for (std::int64_t n = 1; n < 40; ++n) {
        std::vector<float> src(n, 1.5f);
        std::vector<std::uint16_t> dst(n + 20, 0xABCD);
        t.from_float(dtype, src.data(), dst.data(), n);
        for (std::int64_t i = n; i < n + 20; ++i) {
          EXPECT_EQ(dst[i], 0xABCD) << t.backend << " n=" << n;
        }
      }
    }
  }
}

// Negative controls: the check is not vacuous.
TEST(FastConversions, ATruncatingBf16DemotionFailsTheSameCheck) {
  const auto truncate = [](const float* src, std::uint16_t* dst, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<std::uint16_t>(BitsOf(src[i]) >> 16);
  };
  EXPECT_GT(RneMismatches(Bf16Probes(), DType::kBF16, truncate, nullptr), 100000);
}

// Why simd_row-inl.h writes its own bf16 rounding: Highway 1.0.3's bf16
// conversion truncates (here its scalar helper, which its x86 DemoteTo
// matches: a shift by 16).
TEST(FastConversions, HighwaysOwnBf16ConversionTruncatesSoTheKernelsDoNotUseIt) {
  const auto hwy_demote = [](const float* src, std::uint16_t* dst, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) dst[i] = hwy::BF16FromF32(src[i]).bits;
  };
  std::string first;
  EXPECT_GT(RneMismatches(Bf16Probes(), DType::kBF16, hwy_demote, &first), 0);
  EXPECT_EQ(hwy::BF16FromF32(FromBits(0x3F80C000u)).bits, 0x3F80);  // RNE gives 0x3F81
}

}  // namespace
}  // namespace lnv::fast
