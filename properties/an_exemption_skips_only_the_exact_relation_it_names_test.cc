// A kernel's registry exemption (ImplInfo::exact_relation_exemptions) skips
// the bit-for-bit check of the one relation it names, by name, and nothing
// else: the kernel is still held to that relation within its bounds, and to
// the other relation bit for bit. The two exact relations' negative controls
// stand in for kernels with a documented threshold: each breaks its relation
// only in bits (its other summation order stays within the bound), so with
// the exemption it passes, and with an exemption naming the other relation it
// is still caught.
#include <gtest/gtest.h>

#include <string>

#include "properties/coverage.h"
#include "properties/properties.h"
#include "properties/test_kernels.h"

namespace lnv::props {
namespace {

const ImplInfo& Control(const std::string& name) {
  for (const DoctoredKernel& d : DoctoredKernels()) {
    if (d.info.name == name) return d.info;
  }
  ADD_FAILURE() << "no doctored kernel " << name;
  return DoctoredKernels().front().info;
}

int Budget() { return rc::detail::configuration().testParams.maxSuccess; }

// Runs `property` on `kernel` with `exemption` as its only one.
QuietRun RunExempt(const ImplInfo& kernel, const std::string& exemption,
                   const std::string& property) {
  ImplInfo exempt = kernel;
  exempt.exact_relation_exemptions = {exemption};
  Coverage::Current().Reset(property);
  return RunQuietly(*FindProperty(property), ControlTargets(exempt), Budget());
}

TEST(ExactRelationExemptions, AreFoundByTheRelationsNameOnly) {
  ImplInfo k;
  k.exact_relation_exemptions = {"scalingish: a.h:1 not this one", "rows: a.h:2 this one"};
  EXPECT_EQ(ExemptionFrom(k, kRowsRelation), "rows: a.h:2 this one");
  EXPECT_EQ(ExemptionFrom(k, kScalingRelation), "");
}

TEST(ExactRelationExemptions, AScalingExemptionHoldsTheKernelWithinItsBoundsOnly) {
  const ImplInfo& k = Control("f32/magnitude_threshold/test-fake");
  const std::string property = "ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged";
  const QuietRun exempt =
      RunExempt(k, "scaling: properties/test_kernels.cc kHiddenThreshold", property);
  EXPECT_FALSE(exempt.failed) << exempt.message;
  EXPECT_NE(Coverage::Current().Summary().find("exempt from bit-for-bit scaling:"),
            std::string::npos)
      << Coverage::Current().Summary();
  const QuietRun other =
      RunExempt(k, "rows: properties/test_kernels.cc (not this relation)", property);
  EXPECT_TRUE(other.failed) << "an exemption from rows let a scaling break through";
  EXPECT_NE(other.message.find(", bit for bit: "), std::string::npos) << other.message;
}

TEST(ExactRelationExemptions, ARowsExemptionHoldsTheKernelWithinItsBoundsOnly) {
  const ImplInfo& k = Control("f32/batch_size_dependent_order/test-fake");
  const std::string property = "EachRowDependsOnThatRowAlone";
  const QuietRun exempt =
      RunExempt(k, "rows: properties/test_kernels.cc BatchSizeDependentForward", property);
  EXPECT_FALSE(exempt.failed) << exempt.message;
  EXPECT_NE(Coverage::Current().Summary().find("exempt from bit-for-bit rows:"), std::string::npos)
      << Coverage::Current().Summary();
  const QuietRun other =
      RunExempt(k, "scaling: properties/test_kernels.cc (not this relation)", property);
  EXPECT_TRUE(other.failed) << "an exemption from scaling let a batch dependence through";
  EXPECT_NE(other.message.find("changed the bits of row"), std::string::npos) << other.message;
}

}  // namespace
}  // namespace lnv::props
