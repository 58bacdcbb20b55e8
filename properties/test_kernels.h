// Doctored kernels for the property checks' own negative controls. They are
// not in the registry (ln_check and the fuzzer never see them): each is the
// correct f32 two-pass reference with one defect that only a particular
// property's check is built to see, so that check is proven able to fail.
// (The registry's realistic controls are in impls/broken/ and impls/cpu/one_pass.h.)
#ifndef LNV_PROPERTIES_TEST_KERNELS_H_
#define LNV_PROPERTIES_TEST_KERNELS_H_

#include <string>
#include <vector>

#include "impls/registry.h"

namespace lnv::props {

struct DoctoredKernel {
  ImplInfo info;         // status negative_control, name "f32/<defect>/test-fake"
  std::string property;  // the property built to catch it
  std::string check;     // words of the check that must fire ("" = any of the property's)
};

// gamma_reversed (reads gamma[d-1-i]) -> PermutingFeaturesPermutesTheOutputs;
// beta_before_gamma (y = gamma (xhat + beta)) -> TheOutputIsGammaTimesXhatPlusBeta;
// nan_rows_zeroed (non-finite inputs read as 0) -> SpecialValuesStayInTheirRow...;
// nondeterministic_dgamma (every other call sums the rows backwards, as
// atomics would) -> EachRowDependsOnThatRowAlone (run to run; within bound).
// The exact relations' controls, each within its bound everywhere (another
// summation order), so that only a bit-for-bit check can see them:
// magnitude_threshold (rows with max|x| >= 2^20 sum in the other order, a
// hidden magnitude threshold) -> ScalingARowByAPowerOfTwo..., bit for bit;
// batch_size_dependent_order (batches of two or more rows sum in the other
// order) -> EachRowDependsOnThatRowAlone, bit for bit.
const std::vector<DoctoredKernel>& DoctoredKernels();

}  // namespace lnv::props

#endif  // LNV_PROPERTIES_TEST_KERNELS_H_
