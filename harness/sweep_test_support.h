// Shared by the sweep, errors.json and reports/ tests: registry kernels by name and a small plan
// that exercises every chart role in a fraction of a second.
#ifndef LNV_HARNESS_SWEEP_TEST_SUPPORT_H_
#define LNV_HARNESS_SWEEP_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/sweep.h"
#include "impls/registry.h"

namespace lnv {

inline const ImplInfo& Kernel(const std::string& name) {
  if (const ImplInfo* i = FindImpl(name)) return *i;
  ADD_FAILURE() << "no kernel " << name;
  return AllImpls().front();
}

inline std::vector<PlannedRun> SmallPlan() {
  return {{"large_mean", 16, 8, 0, 0, 0, true, kRoleKappa},
          {"tiny_magnitude", 8, 4, 0, 0, 0, true, kRoleMagnitude},
          {"huge_magnitude", 8, 4, 0, 0, 0, true, kRoleMagnitude},
          {"standard_normal", 1, 4, 0, 0, 0, true, kRoleDSweep},
          {"standard_normal", 8, 4, 0, 0, 0, true, kRoleDSweep | kRoleMagnitude},
          {"standard_normal", 33, 2, 0, 0, 0, true, kRoleDSweep},
          {"nan_inf_rows", 8, 5, 0, 0, 0, true, kRoleNone}};
}

// Two-pass (claims its bound), one-pass (the negative control) and an fp16
// Welford kernel (another dtype group), over the small plan.
inline SweepResult SmallSweep(int jobs = 1) {
  SweepOptions o;
  o.jobs = jobs;
  o.plan = SmallPlan();
  o.impls = {Kernel("f32/two_pass/cpu-scalar"), Kernel("f32/one_pass/cpu-scalar"),
             Kernel("f16/welford/cpu-scalar")};
  return RunSweep(o);
}

}  // namespace lnv

#endif  // LNV_HARNESS_SWEEP_TEST_SUPPORT_H_
