#include "fuzz/feedback.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "harness/families.h"
#include "impls/registry.h"

namespace lnv::fuzz {
namespace {

const ImplInfo& Kernel(const std::string& name) {
  if (const ImplInfo* i = FindImpl(name)) return *i;
  ADD_FAILURE() << "no kernel " << name;
  return AllImpls().front();
}

TEST(Feedback, ValueClassesSeparateEveryKindOfValue) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(ClassOf(0.0, kBinary32), ValueClass::kZero);
  EXPECT_EQ(ClassOf(-0.0, kBinary32), ValueClass::kZero);
  EXPECT_EQ(ClassOf(0x1p-149, kBinary32), ValueClass::kSubnormal);
  EXPECT_EQ(ClassOf(0x1p-126, kBinary32), ValueClass::kSmall);
  EXPECT_EQ(ClassOf(1.5, kBinary32), ValueClass::kUnit);
  EXPECT_EQ(ClassOf(0x1p40, kBinary32), ValueClass::kLarge);
  EXPECT_EQ(ClassOf(0x1p127, kBinary32), ValueClass::kTopBinade);
  EXPECT_EQ(ClassOf(65504.0, kBinary16), ValueClass::kTopBinade);
  EXPECT_EQ(ClassOf(-HUGE_VAL, kBinary16), ValueClass::kInf);
  EXPECT_EQ(ClassOf(nan, kBfloat16), ValueClass::kNaN);
}

TEST(Feedback, UlpBucketsSeparateExactCorrectlyRoundedOneUlpAndLargeErrors) {
  EXPECT_EQ(UlpBucket(0), 0);
  EXPECT_EQ(UlpBucket(0.3), 1);
  EXPECT_EQ(UlpBucket(0.5), 1);
  EXPECT_EQ(UlpBucket(0.7), 2);
  EXPECT_EQ(UlpBucket(1), 2);
  EXPECT_EQ(UlpBucket(1.5), 3);
  EXPECT_EQ(UlpBucket(3), 4);
  // Four binades a bucket above 4 ulps: (4, 2^6], (2^6, 2^10], ...
  EXPECT_EQ(UlpBucket(5), 5);
  EXPECT_EQ(UlpBucket(64), 5);
  EXPECT_EQ(UlpBucket(65), 6);
  EXPECT_EQ(UlpBucket(0x1p34), 12);
  EXPECT_EQ(UlpBucket(0x1p34 * 1.01), 13);
  EXPECT_EQ(UlpBucket(1e30), 13);
  EXPECT_EQ(UlpBucket(HUGE_VAL), 14);
  EXPECT_EQ(UlpBucket(NAN), 14);
  int last = 0;
  for (double ulps = 0.25; ulps < 1e40; ulps *= 2) {
    const int b = UlpBucket(ulps);
    EXPECT_GE(b, last) << ulps;
    EXPECT_LT(b, kUlpBuckets) << ulps;
    last = b;
  }
}

TEST(Feedback, BoundUseBucketsGrowWithTheErrorToBoundRatio) {
  EXPECT_EQ(BoundUseBucket(0), 0);
  EXPECT_EQ(BoundUseBucket(NAN), 0);
  EXPECT_EQ(BoundUseBucket(0x1p-80), 1);
  EXPECT_EQ(BoundUseBucket(0x1p-33), 1);
  EXPECT_EQ(BoundUseBucket(0x1p-32), 2);
  EXPECT_EQ(BoundUseBucket(0x1p-9), 7);
  int last = 0;
  for (double use = 0x1p-59; use < 0.99; use *= 2) {
    const int b = BoundUseBucket(use);
    // Never down as the use grows; one bucket a binade from 2^-8 on.
    if (use >= 0x1p-8) {
      EXPECT_EQ(b, last + 1) << use;
    } else {
      EXPECT_GE(b, last) << use;
    }
    last = b;
  }
  EXPECT_EQ(BoundUseBucket(0.999), 15);
  // A broken bound lands above every bucket of a bound that holds.
  EXPECT_GT(BoundUseBucket(1.0), BoundUseBucket(0.999));
  EXPECT_GT(BoundUseBucket(3.0), BoundUseBucket(1.0));
  EXPECT_EQ(BoundUseBucket(1e9), BoundUseBucket(3.0));
  EXPECT_EQ(BoundUseBucket(HUGE_VAL), kBoundUseBuckets - 1);
}

TEST(Feedback, KappaBucketsFollowTheMeanToSpreadRatio) {
  RowStats s;
  s.mean = 0;
  s.var = 1;
  EXPECT_EQ(KappaBucket(s), 0);
  s.mean = 1000;  // kappa^2 ~ 1e6 ~ 2^20
  EXPECT_EQ(KappaBucket(s), 19);
  s.var = 0;
  EXPECT_EQ(KappaBucket(s), 61);
}

TEST(Feedback, AKernelNearItsBoundGivesFeaturesThatOneFarFromItDoesNot) {
  FamilyParams p;
  p.d = 64;
  p.rows = 8;
  const Case normal = GenerateCase(*FindFamily("standard_normal"), p);
  const Case large_mean = GenerateCase(*FindFamily("large_mean"), p);
  const ImplInfo& one_pass = Kernel("f32/one_pass/cpu-scalar");
  FeatureSet a, b, a_again;
  AddJudgementFeatures(0, Judge(one_pass, normal), &a);
  AddJudgementFeatures(0, Judge(one_pass, large_mean), &b);
  AddJudgementFeatures(0, Judge(one_pass, normal), &a_again);
  EXPECT_EQ(a.ids(), a_again.ids()) << "deterministic";
  int new_in_b = 0;
  for (std::uint32_t id : b.ids()) {
    new_in_b += std::find(a.ids().begin(), a.ids().end(), id) == a.ids().end();
  }
  EXPECT_GT(new_in_b, 0) << "a broken bound must be new coverage";
}

// Feature ids are dense (feedback.cc): every verdict, ULP bucket and
// bound-use bucket of every output of the first kFeatureSlots kernel slots,
// and every oracle bucket, has a counter of its own. (Hashed into the space,
// as the ids once were, tuples this many shared counters.)
TEST(Feedback, DistinctJudgementAndOracleTuplesNeverShareACounter) {
  const std::vector<double> ulps = {
      0,      0.5,    1,      2,      4,
      0x1p6,  0x1p10, 0x1p14, 0x1p18, 0x1p22,
      0x1p26, 0x1p30, 0x1p34, 0x1p40, std::numeric_limits<double>::infinity()};
  const std::vector<double> uses = {0,       0x1p-40, 0x1p-30, 0x1p-26, 0x1p-22, 0x1p-18,
                                    0x1p-14, 0x1p-10, 0x1p-8,  0x1p-7,  0x1p-6,  0x1p-5,
                                    0x1p-4,  0x1p-3,  0x1p-2,  0.5,     1,       4};
  std::set<std::tuple<std::size_t, int, int, int>> tuples;  // slot, output, kind, value
  std::set<std::uint32_t> ids;
  for (std::size_t slot = 0; slot < kFeatureSlots; ++slot) {
    FeatureSet f;
    for (int k = 0; k < 18; ++k) {
      Judgement j;
      j.verdict = static_cast<Verdict>(k % 11);
      tuples.insert({slot, 6, 0, k % 11});
      for (const Output o : kAllOutputs) {
        const int oi = static_cast<int>(o);
        OutputResult& r = j[o];
        r.output = o;
        r.present = true;
        r.verdict = static_cast<Verdict>((k + oi) % 11);
        r.max_ulp = ulps[(k + oi) % ulps.size()];
        r.max_bound_use = uses[(k + 2 * oi) % uses.size()];
        tuples.insert({slot, oi, 0, (k + oi) % 11});
        tuples.insert({slot, oi, 1, UlpBucket(r.max_ulp)});
        tuples.insert({slot, oi, 2, BoundUseBucket(r.max_bound_use)});
      }
      AddJudgementFeatures(slot, j, &f);
    }
    ids.insert(f.ids().begin(), f.ids().end());
  }
  FeatureSet oracle;
  for (int e = -1; e <= 20; ++e) {
    AddOracleFeatures(e < 0 ? 0 : std::int64_t{1} << e, e < 0 ? 1 : 0, &oracle);
  }
  ids.insert(oracle.ids().begin(), oracle.ids().end());
  EXPECT_EQ(oracle.ids().size(), 24u);  // 22 exact-path buckets, undecided or not
  EXPECT_EQ(ids.size(), tuples.size() + 24);
  EXPECT_EQ(tuples.size(), kFeatureSlots * (6 * (11 + kUlpBuckets + kBoundUseBuckets) + 11));
  EXPECT_LT(*ids.rbegin(), kFeatureSpace);
}

TEST(Feedback, InputFeaturesSeeSpecialsThatFiniteRowsLack) {
  FamilyParams p;
  p.d = 16;
  p.rows = 4;
  const Case finite = GenerateCase(*FindFamily("standard_normal"), p);
  const Case special = GenerateCase(*FindFamily("nan_inf_rows"), p);
  FeatureSet a, b;
  const Reference ra = ComputeReference(finite), rb = ComputeReference(special);
  AddInputFeatures(finite, ra.forward.stats, &a);
  AddInputFeatures(special, rb.forward.stats, &b);
  EXPECT_NE(a.ids(), b.ids());
  for (std::uint32_t id : b.ids()) EXPECT_LT(id, kFeatureSpace);
}

}  // namespace
}  // namespace lnv::fuzz
