// Every negative control is caught, by a named property, within the default
// budget (the configured max_success), by that property's OWN checks: the
// control runs with the judge's verdicts ignored (ControlTargets), so a
// property whose checks were vacuous would let it through and this test
// would fail. Each catch prints the property, the number of passing cases
// before it, the message, and the case file, which `ln_check --replay`
// reproduces for registry kernels (checked here too).
//
// Registry controls are listed below with the properties built to catch
// them; a control added to the registry without an entry must still be
// caught by some property (tried in AllProperties() order).
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/check.h"
#include "properties/properties.h"
#include "properties/test_kernels.h"

namespace lnv::props {
namespace {

// A property built to catch a control, and the words of the check inside
// it that must fire (so that each named check is shown able to fail).
struct Catch {
  const char* property;
  const char* check;
};
struct Catcher {
  const char* kernel_glob;
  std::vector<Catch> catches;
};

// Which property catches which registry control (each kernel header says so too).
const std::vector<Catcher>& Catchers() {
  static const std::vector<Catcher> catchers = {
      {"*/one_pass/*", {{"ShiftingARowLeavesItsOutputUnchanged", "K(x + c) against K(x)"}}},
      {"f32/unbiased_variance/cpu-broken",
       {{"NormalizedRowsHaveZeroMeanAndEpsAdjustedVariance", "sum y^2"}}},
      {"f32/eps_outside_sqrt/cpu-broken",
       {{"NearConstantRowsStayFiniteUnderTheEpsFloor", "> 1/sqrt(eps)"},
        {"ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged", "against K(x"}}},
      {"f32/dx_without_xhat_term/cpu-broken",
       {{"InputGradientsSumToZeroAndMeetXhatOnlyThroughEps", "sum xhat dx"}}},
      {"f32/batch_statistics/cpu-broken", {{"EachRowDependsOnThatRowAlone", "the row alone"}}},
      {"f16/eps_in_half/cpu-broken",
       {{"NearConstantRowsStayFiniteUnderTheEpsFloor", "from finite inputs"}}},
      {"f32/rms_skips_infinities/cpu-broken",
       {{"SpecialValuesStayInTheirRowAndFiniteRowsStayFinite",
         "at a finite element: not +-0 or NaN"}}},
  };
  return catchers;
}

// A catch through another check of the same property still counts as
// caught; the named check is then sought with the next seeds, at most this
// many more runs of the same budget.
constexpr int kRetriesForTheNamedCheck = 4;

constexpr const char* kAnyProperty = "";

struct ControlCase {
  const ImplInfo* kernel;
  std::string property;  // kAnyProperty: any one of AllProperties()
  std::string check;     // words the catching message must contain ("" = any)
  bool in_registry;
};

// How gtest shows a case (ctest -N lists it).
void PrintTo(const ControlCase& c, std::ostream* os) {
  *os << c.kernel->name << " by " << (c.property.empty() ? "any property" : c.property);
}

std::vector<ControlCase> ControlCases() {
  std::vector<ControlCase> cases;
  for (const ImplInfo& k : LoadedKernels()) {
    if (k.status != ImplStatus::kNegativeControl) continue;
    bool listed = false;
    for (const Catcher& c : Catchers()) {
      if (!GlobMatch(c.kernel_glob, k.name)) continue;
      listed = true;
      for (const Catch& p : c.catches) cases.push_back({&k, p.property, p.check, true});
    }
    if (!listed) cases.push_back({&k, kAnyProperty, "", true});
  }
  for (const DoctoredKernel& d : DoctoredKernels()) {
    cases.push_back({&d.info, d.property, d.check, false});
  }
  return cases;
}

std::string Sanitize(const std::string& s) {
  std::string out;
  for (char ch : s) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return out;
}

int Budget() { return rc::detail::configuration().testParams.maxSuccess; }

class NegativeControl : public ::testing::TestWithParam<ControlCase> {};

TEST_P(NegativeControl, IsCaughtByANamedPropertyWithinTheDefaultBudget) {
  const ControlCase& cc = GetParam();
  std::vector<const PropertyDef*> tried;
  if (cc.property == kAnyProperty) {
    for (const PropertyDef& p : AllProperties()) tried.push_back(&p);
  } else {
    tried.push_back(FindProperty(cc.property));
    ASSERT_NE(tried.back(), nullptr) << "no property named " << cc.property;
  }
  const Targets targets = ControlTargets(*cc.kernel);
  for (const PropertyDef* p : tried) {
    const QuietRun run = RunQuietly(*p, targets, Budget());
    if (!run.failed) continue;
    std::cout << "caught: " << cc.kernel->name << " by " << p->name << " after " << run.cases
              << " passing case(s) of " << Budget() << ":\n"
              << run.message << "\n";
    if (run.message.find(cc.check) == std::string::npos) {
      bool named_check_fired = false;
      for (int k = 1; k <= kRetriesForTheNamedCheck && !named_check_fired; ++k) {
        const QuietRun again = RunQuietly(*p, targets, Budget(), k);
        named_check_fired = again.failed && again.message.find(cc.check) != std::string::npos;
        if (named_check_fired) {
          std::cout << "  its check '" << cc.check << "' fired with seed + " << k << " after "
                    << again.cases << " passing case(s)\n";
        }
      }
      EXPECT_TRUE(named_check_fired)
          << cc.kernel->name << " was caught by " << p->name << ", but never by its check '"
          << cc.check << "' (" << kRetriesForTheNamedCheck
          << " more seeds): that check may be vacuous";
    }
    if (cc.in_registry) {
      // The case file the catch wrote replays: ln_check --replay says "as expected".
      const std::string path = PropertyCase(p->name, targets).CasePath(cc.kernel->name);
      ASSERT_TRUE(std::filesystem::exists(path)) << path;
      std::ostringstream out, err;
      EXPECT_EQ(ReplayCase(path, LoadedKernels(), out, err), 0)
          << "ln_check --replay " << path << " does not reproduce the catch:\n"
          << out.str() << err.str();
    }
    return;
  }
  ADD_FAILURE() << cc.kernel->name << " was NOT caught by "
                << (cc.property == kAnyProperty ? "any property" : cc.property) << " in "
                << Budget() << " cases: the check is vacuous or the generator misses the bug";
}

INSTANTIATE_TEST_SUITE_P(Controls, NegativeControl, ::testing::ValuesIn(ControlCases()),
                         [](const ::testing::TestParamInfo<ControlCase>& info) {
                           return Sanitize(info.param.kernel->name) + "__" +
                                  (info.param.property.empty() ? std::string("AnyProperty")
                                                               : info.param.property);
                         });

TEST(NegativeControls, TheRegistryHasTheOnePassAndTheBrokenKernels) {
  int one_pass = 0, broken = 0;
  for (const ImplInfo& k : LoadedKernels()) {
    if (k.status != ImplStatus::kNegativeControl) continue;
    one_pass += k.algorithm == Algorithm::kOnePass;
    broken += k.name.ends_with("/cpu-broken");
  }
  EXPECT_GE(one_pass, 4);  // one per dtype
  EXPECT_GE(broken, 5);
}

}  // namespace
}  // namespace lnv::props
