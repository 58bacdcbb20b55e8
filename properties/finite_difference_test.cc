#include "properties/finite_difference.h"

#include <gtest/gtest.h>

#include "harness/families.h"
#include "harness/judge.h"

namespace lnv::props {
namespace {

Case OneRow(Norm norm) {
  FamilyParams p;
  p.norm = norm;
  p.d = 9;
  p.rows = 1;
  p.seed = 5;
  return GenerateCase(*FindFamily("standard_normal"), p);
}

TEST(FiniteDifferences, AgreeWithTheOraclesGradientForBothNorms) {
  for (Norm norm : {Norm::kLayerNorm, Norm::kRmsNorm}) {
    const FiniteDifferenceResult r = CheckAgainstFiniteDifferences(OneRow(norm), nullptr);
    EXPECT_TRUE(r.checked) << r.message;
    EXPECT_EQ(r.message, "") << NormName(norm);
  }
}

// The negative control: the gradient without the xhat * b term is caught.
TEST(FiniteDifferences, RejectAGradientWithoutTheXhatTerm) {
  const Case c = OneRow(Norm::kLayerNorm);
  Case wide = c;
  wide.dtype = wide.param_dtype = DType::kF64;
  const Reference ref = ComputeReference(wide);
  const double r = ref.forward.stats[0].rstd;
  double mean_g = 0;
  for (std::int64_t i = 0; i < c.d; ++i) mean_g += c.dy[i] * c.gamma[i] / c.d;
  std::vector<Approx> wrong;
  for (std::int64_t i = 0; i < c.d; ++i)
    wrong.push_back(Rounded(r * (c.dy[i] * c.gamma[i] - mean_g)));
  const FiniteDifferenceResult result = CheckAgainstFiniteDifferences(c, &wrong);
  EXPECT_TRUE(result.checked);
  EXPECT_NE(result.message.find("dx["), std::string::npos) << result.message;
}

TEST(FiniteDifferences, DeclineAConstantRow) {
  Case c = OneRow(Norm::kLayerNorm);
  for (double& v : c.x) v = 1.0;
  c.eps = 0;
  EXPECT_FALSE(CheckAgainstFiniteDifferences(c, nullptr).checked);
}

}  // namespace
}  // namespace lnv::props
