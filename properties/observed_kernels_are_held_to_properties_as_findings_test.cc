// An observed (third-party) kernel is held to the properties inside its
// claimed range, but what it gets wrong is a recorded finding (coverage
// summary, case file), not a test failure: its baseline lives with the
// adapters. No registry kernel is observed yet, so a doctored kernel stands
// in: one that breaks permutation equivariance, marked observed.
#include <gtest/gtest.h>

#include <iostream>

#include "properties/coverage.h"
#include "properties/properties.h"
#include "properties/test_kernels.h"

namespace lnv::props {
namespace {

TEST(ObservedKernels, ABrokenPropertyIsARecordedFindingNotATestFailure) {
  ImplInfo observed;
  for (const DoctoredKernel& d : DoctoredKernels()) {
    if (d.info.name == "f32/gamma_reversed/test-fake") observed = d.info;
  }
  ASSERT_NE(observed.forward, nullptr);
  observed.name = "f32/gamma_reversed/observed-test-fake";
  observed.status = ImplStatus::kObserved;
  Targets targets;
  targets.kernels = {&observed};
  targets.cases_subdir = "observed";
  Coverage::Current().Reset("observed");
  const QuietRun run = RunQuietly(*FindProperty("PermutingFeaturesPermutesTheOutputs"), targets,
                                  rc::detail::configuration().testParams.maxSuccess);
  EXPECT_FALSE(run.failed) << run.message;
  ASSERT_EQ(Coverage::Current().findings().count(observed.name), 1u);
  const std::string& finding = Coverage::Current().findings().at(observed.name);
  EXPECT_NE(finding.find(".case)"), std::string::npos) << finding;  // with its case file
  std::cout << Coverage::Current().Summary();
}

}  // namespace
}  // namespace lnv::props
