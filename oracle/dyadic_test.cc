// The fixed-width dyadics (dyadic.h) against cpp_int rationals (rat.h):
// products, sums and roundings must be the same numbers bit for bit, ties
// and the edges of every format included, and what does not fit must be
// reported, never wrapped.
#include "oracle/dyadic.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>

#include "oracle/backends.h"
#include "oracle/rat.h"

namespace lnv::oracle_internal {
namespace {

using Int = BoostBackend::Int;
using R = Rat<Int>;

constexpr FloatFormat kFormats[] = {kBinary64, kBinary32, kBfloat16, kBinary16};

// a as 3m / 3 2^exp: not dyadic as written, so rat.h rounds it by its
// division path, independently of the bit tests under test.
R ToRat(const Dyadic& a) {
  Int m(0);
  for (int i = a.used - 1; i >= 0; --i) m = (m << 64) + Int(a.mag[i]);
  return R{Int(3 * (a.negative ? Int(-m) : m)), Int(3), a.exp};
}

bool SameValue(const R& a, const R& b) { return Compare(a, b) == 0; }

std::uint64_t Bits(double v) { return std::bit_cast<std::uint64_t>(v); }

// A random magnitude of `limbs` limbs whose low bits are often a run of
// zeros after a one: the patterns of exact values and ties.
Dyadic RandomDyadic(std::mt19937_64& rng, int limbs, std::int64_t exp) {
  Dyadic d;
  for (int i = 0; i < limbs; ++i) d.mag[i] = rng();
  if (rng() % 2 && limbs > 0) {
    const int zeros = static_cast<int>(rng() % (64 * limbs));
    for (int b = 0; b < zeros; ++b) d.mag[b / 64] &= ~(std::uint64_t{1} << (b % 64));
    d.mag[zeros / 64] |= std::uint64_t{1} << (zeros % 64);
  }
  d.used = limbs;
  d.negative = rng() % 2;
  d.exp = exp;
  Trim(&d);
  return d;
}

TEST(Dyadic, RoundingIsRoundRatOnRandomValuesTiesAndEveryFormatsEdges) {
  std::mt19937_64 rng(5);
  for (FloatFormat f : kFormats) {
    for (int i = 0; i < 40000; ++i) {
      const int limbs = 1 + static_cast<int>(rng() % 5);
      // Exponents from deep underflow to past overflow of f.
      const std::int64_t top =
          f.emin - f.precision - 8 +
          static_cast<std::int64_t>(rng() % (f.emax - f.emin + f.precision + 20));
      const std::int64_t exp = top - 64 * limbs + 1;
      const Dyadic d = RandomDyadic(rng, limbs, exp);
      const Rounded got = RoundRat(d, f);
      const Rounded want = RoundRat(ToRat(d), f);
      ASSERT_EQ(Bits(got.value), Bits(want.value)) << "format p=" << f.precision << " i=" << i;
      ASSERT_EQ(got.exact, want.exact);
    }
  }
}

Dyadic OneLimb(std::uint64_t m, std::int64_t exp) {
  Dyadic d;
  d.mag[0] = m;
  d.used = 1;
  d.exp = exp;
  return d;
}

TEST(Dyadic, ExactTiesRoundToEvenAndAStickyBitFarDownBreaksThem) {
  // 1 + 2^-24 (a binary32 tie) rounds down to 1; 1 + 3 2^-24 up to 1 + 2^-22.
  EXPECT_EQ(RoundRat(OneLimb((1u << 24) + 1, -24), kBinary32).value, 1.0);
  EXPECT_EQ(RoundRat(OneLimb((1u << 24) + 3, -24), kBinary32).value, 1.0 + 0x1p-22);
  EXPECT_FALSE(RoundRat(OneLimb((1u << 24) + 3, -24), kBinary32).exact);
  // Subnormal ties: 2^-150 to +0, 3 2^-150 to 2^-148 (even).
  EXPECT_EQ(Bits(RoundRat(OneLimb(1, -150), kBinary32).value), Bits(0.0));
  EXPECT_EQ(RoundRat(OneLimb(3, -150), kBinary32).value, 0x1p-148);
  // The overflow threshold (2^24 - 1/2) 2^104 rounds to inf, just below it to FLT_MAX.
  EXPECT_EQ(RoundRat(OneLimb((1u << 25) - 1, 103), kBinary32).value, HUGE_VAL);
  // 2^-4 + 2^-28 (a binary32 tie, even neighbour 2^-4) plus 2^-324: one
  // sticky bit 296 bits under the half bit, five limbs down.
  Dyadic sticky;
  sticky.mag[5] = 1;                       // 2^(320 - 324)
  sticky.mag[4] = std::uint64_t{1} << 40;  // 2^(296 - 324)
  sticky.mag[0] = 1;                       // 2^-324
  sticky.used = 6;
  sticky.exp = -324;
  EXPECT_EQ(RoundRat(sticky, kBinary32).value, 0x1p-4 + 0x1p-27);
  sticky.mag[0] = 0;  // the tie alone: to even
  EXPECT_EQ(RoundRat(sticky, kBinary32).value, 0x1p-4);
}

TEST(Dyadic, ProductsSumsAndDoubleWordsAreExact) {
  std::mt19937_64 rng(6);
  for (int i = 0; i < 20000; ++i) {
    const int la = 1 + static_cast<int>(rng() % 3), lb = 1 + static_cast<int>(rng() % 3);
    const Dyadic a = RandomDyadic(rng, la, static_cast<std::int64_t>(rng() % 200) - 100);
    const Dyadic b = RandomDyadic(rng, lb, static_cast<std::int64_t>(rng() % 200) - 100);
    Dyadic p, s;
    ASSERT_TRUE(MulDyadic(a, b, &p));
    EXPECT_TRUE(SameValue(ToRat(p), Mul(ToRat(a), ToRat(b))));
    if (AddDyadic(a, b, &s)) {
      EXPECT_TRUE(SameValue(ToRat(s), Add(ToRat(a), ToRat(b))));
    } else {  // only when the aligned sum needs all six limbs
      EXPECT_GE(std::max(MsbOf(a) + a.exp, MsbOf(b) + b.exp) - std::min(a.exp, b.exp) + 2,
                64 * (kDyadicLimbs - 1));
    }
    if (!FitsDoubleDouble(p)) continue;
    const auto dd = ToDoubleDouble(p);
    const auto want = ToDoubleDouble(ToRat(p));
    EXPECT_EQ(Bits(dd.first), Bits(want.first));
    EXPECT_EQ(Bits(dd.second), Bits(want.second));
  }
}

// The remainder taken from the dropped bits (RoundingRemainder) against
// rat.h's a - hi, over binary64's whole range: subnormal results, ties
// (RandomDyadic's runs of zeros), values rounded up and down, a hi that
// overflows to inf, and deep underflow, where 2^s - L may not fit.
TEST(Dyadic, ToDoubleDoubleIsRatsOverTheWholeRange) {
  std::mt19937_64 rng(7);
  int rounded_up = 0, rounded_down = 0;
  for (int i = 0; i < 60000; ++i) {
    const int limbs = 1 + static_cast<int>(rng() % 5);
    const std::int64_t top = -1200 + static_cast<std::int64_t>(rng() % 2230);
    const Dyadic d = RandomDyadic(rng, limbs, top - 64 * limbs + 1);
    if (!FitsDoubleDouble(d)) continue;
    const auto got = ToDoubleDouble(d);
    const auto want = ToDoubleDouble(ToRat(d));
    ASSERT_EQ(Bits(got.first), Bits(want.first)) << i;
    ASSERT_EQ(Bits(got.second), Bits(want.second)) << i;
    if (got.second != 0 && std::isfinite(got.first))
      ((got.second < 0) == (got.first > 0) ? rounded_up : rounded_down)++;
  }
  EXPECT_GT(rounded_up, 1000);
  EXPECT_GT(rounded_down, 1000);
}

TEST(Dyadic, ToDoubleDoubleWithoutRoomSaysSoRatherThanReturningNan) {
  // 2^383 - 2^320 + 1 (times 2^-300) rounds up to 2^84, whose alignment to
  // the value's exponent needs a 385th bit.
  Dyadic a;
  a.mag = {1, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull};
  a.used = 6;
  a.exp = -300;
  EXPECT_FALSE(FitsDoubleDouble(a));
  EXPECT_THROW(ToDoubleDouble(a), std::logic_error);
}

// Past binary64's overflow threshold hi is +-inf and lo = a -+ 2^1024, as
// the rationals give it (rat.h); a value whose exponent puts 2^1024 below
// its last bit has no such room, and says so (the caller takes the rational
// path), where it used to throw from inside the fuzzer.
TEST(Dyadic, ToDoubleDoublePastBinary64GivesWhatIsLeftBeyond2To1024) {
  for (const bool negative : {false, true}) {
    // (2^64 - 1) 2^960: 2^1024 - 2^960, past the threshold 2^1024 - 2^970.
    Dyadic a;
    a.mag[0] = ~0ull;
    a.used = 1;
    a.exp = 960;
    a.negative = negative;
    ASSERT_TRUE(FitsDoubleDouble(a));
    const auto dd = ToDoubleDouble(a);
    const auto want = ToDoubleDouble(ToRat(a));
    EXPECT_EQ(dd.first, negative ? -HUGE_VAL : HUGE_VAL);
    EXPECT_EQ(dd.second, negative ? 0x1p960 : -0x1p960);
    EXPECT_EQ(Bits(dd.first), Bits(want.first));
    EXPECT_EQ(Bits(dd.second), Bits(want.second));
  }
  Dyadic far;  // 2^2000: 2^1024 aligned to its exponent needs a negative shift
  far.mag[0] = 1;
  far.used = 1;
  far.exp = 2000;
  EXPECT_FALSE(FitsDoubleDouble(far));
  EXPECT_EQ(ToDoubleDouble(ToRat(far)).second, HUGE_VAL);
}

// DyadicQuotient (backends.h) on each backend's enclosures of r = q^(-1/2):
// the dyadic ends must enclose [lo, hi] / den, at most 2^-F outside it.
template <class Backend>
void CheckDyadicQuotient(std::uint64_t seed) {
  using I = typename Backend::Int;
  using Q = Rat<I>;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 300; ++i) {
    PositiveRat<I> q{I(rng() | 1), I((rng() >> 3) | 1),
                     2 * static_cast<std::int64_t>(rng() % 40) - 40};
    const I dens[] = {I(1), I(768), I(rng() | 1) * I(rng() | 1) * I(rng())};
    for (int bits : {88, 176, 352}) {
      const Enclosure<I> e = Backend::RecipSqrt(q, bits);
      for (const I& den : dens) {
        if (den.is_zero()) continue;
        const Enclosure<I> s = DyadicQuotient(e, den, bits);
        const Q lo{e.lo.num, I(e.lo.den * den), e.lo.exp};
        const Q hi{e.hi.num, I(e.hi.den * den), e.hi.exp};
        ASSERT_LE(Compare(s.lo, lo), 0);
        ASSERT_GE(Compare(s.hi, hi), 0);
        // Each end moves by less than 2^-F = 2^(floor(log2 lo) - bits - 8).
        const Q slack{I(1), I(1), FloorLog2(lo) - bits - 8};
        ASSERT_LT(Compare(Sub(lo, s.lo), slack), 0);
        ASSERT_LT(Compare(Sub(s.hi, hi), slack), 0);
      }
    }
  }
}

TEST(Dyadic, DyadicQuotientEnclosesTheQuotientOnBothBackends) {
  CheckDyadicQuotient<BoostBackend>(9);
  CheckDyadicQuotient<MpfrBackend>(10);
}

TEST(Dyadic, CancellationAndZero) {
  std::mt19937_64 rng(7);
  const Dyadic a = RandomDyadic(rng, 3, -40);
  Dyadic minus_a = a, s;
  minus_a.negative = !a.negative;
  ASSERT_TRUE(AddDyadic(a, minus_a, &s));
  EXPECT_EQ(s.used, 0);
  EXPECT_EQ(RoundRat(s, kBinary32).value, 0.0);
  EXPECT_FALSE(std::signbit(RoundRat(s, kBinary32).value));  // an exact zero is +0
}

TEST(Dyadic, WhatDoesNotFitIsReportedNotWrapped) {
  std::mt19937_64 rng(8);
  const Dyadic big = RandomDyadic(rng, 4, 0);
  Dyadic out;
  EXPECT_FALSE(MulDyadic(big, big, &out));  // 8 limbs
  Dyadic one;
  one.mag[0] = 1;
  one.used = 1;
  one.exp = 400;  // aligned to big's exponent 0: 401 bits
  EXPECT_FALSE(AddDyadic(big, one, &out));
  Int wide = Int(1) << 400;
  EXPECT_FALSE(DyadicFromInt(wide, 0, &out));
  ASSERT_TRUE(DyadicFromInt(Int(-12345), 3, &out));
  EXPECT_TRUE(SameValue(ToRat(out), R{Int(-12345), Int(1), 3}));
}

}  // namespace
}  // namespace lnv::oracle_internal
