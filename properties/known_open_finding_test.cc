// The one known open finding the property suite records instead of failing
// on (property.h, IsUnresolvedXhatTimesInfiniteGamma) is exactly that
// finding: an infinite gamma times an xhat the kernel cannot resolve, and not
// the same NaN where the kernel's xhat is well away from 0.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "properties/property.h"

namespace lnv::props {
namespace {

Case OneRow(std::vector<double> x) {
  Case c;
  c.norm = Norm::kLayerNorm;
  c.dtype = c.param_dtype = DType::kF32;
  c.d = static_cast<std::int64_t>(x.size());
  c.rows = 1;
  c.eps = 0x1.4f8b58p-17;
  c.x = std::move(x);
  c.gamma.assign(static_cast<std::size_t>(c.d), 1.0);
  c.gamma[0] = std::numeric_limits<double>::infinity();
  return c;
}

// fuzz/regressions/known-inf-gamma-times-unresolved-xhat.case: the exact
// xhat_0 is -2^-25 r, the kernel's mean rounds to x_0 so its xhat_0 is 0,
// and inf * 0 = NaN where the oracle says -inf.
TEST(KnownOpenFinding, IsAnInfiniteGammaTimesAnXhatTheKernelCannotResolve) {
  const ImplInfo* k = FindImpl("f32/two_pass/cpu-scalar");
  ASSERT_NE(k, nullptr);
  const Case c = OneRow({1, 1, 1, 1 + 0x1p-23});
  const Reference ref = ComputeReference(c);
  JudgeOptions opt;
  opt.keep_elements = true;
  const Judgement j = JudgeWithReference(*k, c, ref, opt);
  ASSERT_TRUE(IsFailure(j.verdict)) << Summarize(j);
  const ElementResult& e = j[Output::kY].elements[0];
  EXPECT_EQ(e.exact.rounded, -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(e.kernel));
  EXPECT_TRUE(IsUnresolvedXhatTimesInfiniteGamma(*k, c, ref, e));
}

// The negative control: the same NaN for a resolvable xhat_0 (about -1.34).
TEST(KnownOpenFinding, IsNotANanWhereTheKernelsXhatIsWellAwayFromZero) {
  const ImplInfo* k = FindImpl("f32/two_pass/cpu-scalar");
  ASSERT_NE(k, nullptr);
  const Case c = OneRow({1, 2, 3, 4});
  const Reference ref = ComputeReference(c);
  ElementResult e;
  e.index = 0;
  e.exact = ref.forward.y[0];
  e.kernel = std::numeric_limits<double>::quiet_NaN();
  ASSERT_EQ(e.exact.rounded, -std::numeric_limits<double>::infinity());
  EXPECT_FALSE(IsUnresolvedXhatTimesInfiniteGamma(*k, c, ref, e));
  e.kernel = std::numeric_limits<double>::infinity();  // the other infinity
  EXPECT_FALSE(IsUnresolvedXhatTimesInfiniteGamma(*k, c, ref, e));
}

}  // namespace
}  // namespace lnv::props
