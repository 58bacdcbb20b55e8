#include "fuzz/finding_class.h"

#include <gtest/gtest.h>

#include <limits>

#include "harness/families.h"

namespace lnv::fuzz {
namespace {

Case Normal(std::int64_t d, std::int64_t rows) {
  FamilyParams p;
  p.d = d;
  p.rows = rows;
  return GenerateCase(*FindFamily("standard_normal"), p);
}

TEST(FindingClass, NamesATypicalRow) {
  const Case c = Normal(16, 2);
  const Reference ref = ComputeReference(c);
  EXPECT_EQ(FindingClass(c, ref, Output::kY, 0, kBinary32),
            "layer_norm/f32/x:finite/params:finite/kappa:moderate/eps:small");
  EXPECT_EQ(FindingClass(c, ref, Output::kDx, 1, kBinary32),
            "layer_norm/f32/x:finite/params:finite/dy:finite/g:ok/kappa:moderate/eps:small");
}

TEST(FindingClass, SeesHugeGradientsThatTheForwardClassDoesNot) {
  Case c = Normal(16, 2);
  c.dy[16 + 3] = 0x1.fep127;  // row 1
  c.dy[16 + 4] = 0x1.fep127;
  const Reference ref = ComputeReference(c);
  EXPECT_NE(FindingClass(c, ref, Output::kDx, 1, kBinary32).find("/g:huge/"), std::string::npos);
  EXPECT_NE(FindingClass(c, ref, Output::kDx, 0, kBinary32).find("/g:ok/"), std::string::npos);
  EXPECT_NE(FindingClass(c, ref, Output::kDgamma, std::nullopt, kBinary32).find("/g:huge/"),
            std::string::npos);
  // Far inside binary64's range, the same gradients are ordinary.
  EXPECT_NE(FindingClass(c, ref, Output::kDx, 1, kBinary64).find("/g:ok/"), std::string::npos);
}

TEST(FindingClass, NamesNonFiniteParamsSpecialRowsAndLargeKappa) {
  Case c = Normal(8, 3);
  c.gamma[2] = std::numeric_limits<double>::infinity();
  c.x[8 + 1] = std::numeric_limits<double>::quiet_NaN();               // row 1
  for (int i = 0; i < 8; ++i) c.x[16 + i] = 4096 + (i % 2) * 0x1p-10;  // row 2: kappa ~ 2^23
  const Reference ref = ComputeReference(c);
  EXPECT_NE(FindingClass(c, ref, Output::kY, 0, kBinary32).find("/params:nonfinite"),
            std::string::npos);
  EXPECT_NE(FindingClass(c, ref, Output::kY, 1, kBinary32).find("/x:nan/"), std::string::npos);
  EXPECT_NE(FindingClass(c, ref, Output::kY, 2, kBinary32).find("/kappa:large"), std::string::npos);
  // A column output takes the worst row.
  EXPECT_NE(FindingClass(c, ref, Output::kDgamma, std::nullopt, kBinary32).find("/x:nan/"),
            std::string::npos);
}

}  // namespace
}  // namespace lnv::fuzz
