// Named, seeded input families (docs/DESIGN.md §4), shared by ln_check, the
// property suites, fuzz seeds and the reports. A family turns (norm, dtypes,
// shape, seed) into a Case deterministically: std::mt19937_64 seeded from the
// seed and the family's name, values drawn in double and rounded once into
// the dtype (lnv::RoundToFormat), so every value is exactly representable.
#ifndef LNV_HARNESS_FAMILIES_H_
#define LNV_HARNESS_FAMILIES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "harness/case_file.h"
#include "impls/api.h"

namespace lnv {

struct FamilyParams {
  Norm norm = Norm::kLayerNorm;
  DType dtype = DType::kF32;
  DType param_dtype = DType::kF32;
  std::int64_t d = 64;  // families about d (d_one, odd_d, ...) derive theirs from it
  std::int64_t rows = 8;
  std::uint64_t seed = 1;
  double eps = static_cast<double>(1e-5f);  // the float the kernel adds
  bool with_dy = true;                      // draw dy too (backward)
  bool affine = true;                       // draw gamma and (LayerNorm) beta; else both absent
  std::int64_t large_d = 65536 + 17;        // d of the large_d family
  std::int64_t many_rows = 65536;           // rows of the many_rows family
};

// What a planned case feeds besides its verdicts (a bit set): ln_report's
// charts.
enum PlanRole : unsigned {
  kRoleNone = 0,
  kRoleKappa = 1,      // error vs kappa (large_mean sweeps kappa over its rows)
  kRoleMagnitude = 2,  // error vs magnitude (tiny/huge_magnitude sweep the row scale)
  kRoleDSweep = 4,     // max bound use vs d
};

// One shape a family runs at: the parameters of its case, past the norm,
// dtypes and the user's seed.
struct FamilyShape {
  std::int64_t d = 64;  // passed to the family (odd_d, ragged_d, d_one derive theirs)
  std::int64_t rows = 8;
  std::uint64_t seed_offset = 0;  // added to the user's seed
  std::int64_t large_d = 0;       // 0: FamilyParams' default
  std::int64_t many_rows = 0;     // 0: FamilyParams' default
  bool with_dy = true;            // judge the backward too
  unsigned roles = kRoleNone;     // PlanRole bits
};

// A family is one row of AllFamilies(): everything a tool needs to run it.
struct Family {
  std::string_view name;
  std::string_view why;  // why it matters: goes into a failing case's provenance
  Case (*generate)(const FamilyParams& p);
  // Random data, typical of real activations (IsRandomDataFamily), and
  // whether its rounding errors behave as Higham & Mary's model assumes
  // (HoldsTheTypicalModel).
  bool random_data = false;
  bool typical_model = false;
  // Its shapes under each budget (harness/driver.h, BudgetPlan), chosen by
  // where the family's bugs show; the full budget runs its shapes once per
  // seed offset 0 and 1 (added to each shape's own).
  std::vector<FamilyShape> quick;
  std::vector<FamilyShape> full;
};

// Every family, in a fixed order.
const std::vector<Family>& AllFamilies();

// nullptr when no family has that name.
const Family* FindFamily(std::string_view name);

// The family's case for p; provenance.family/seed/why are filled in.
Case GenerateCase(const Family& family, const FamilyParams& p);

// Families of random data, whose rows are typical of real activations rather
// than built to be adversarial: standard_normal, heavy_tails, large_d,
// many_rows, two_halves and rows_differ. Not large_mean (its narrow-dtype
// rows collapse into near-constant ones), nor ramp, sorted_rows and
// one_outlier, built to expose dropped or reordered elements. A
// claims_bound kernel must hold a claim on (nearly) every element there
// (kMaxUnclaimedFraction, harness/bounds.h).
bool IsRandomDataFamily(std::string_view name);

// The random-data families whose rounding errors behave as Higham & Mary's
// model assumes (independent, mean zero), where the statistical tier applies
// (TypicalModel, TypicalTierFor): every one but heavy_tails. Its outliers,
// like one_outlier's, make a serial sum stagnate: the later terms are added
// to a partial sum so large that those below half its ulp are lost, all
// with one sign, so the errors grow like k u, not sqrt(k) u. So do the
// monotone rows of ramp and sorted_rows. Correct kernels exceeded the
// typical bound there: rstd on ramp at d = 147459 (seed 6), on one_outlier
// at d = 65553, and bf16/two_pass/cpu-scalar's rstd on heavy_tails at
// d = 4097 (0.24 of its worst-case bound, found by the property suite).
bool HoldsTheTypicalModel(std::string_view name);

// The seed a family actually draws from: the user's seed mixed with the
// family's name (splitmix64), so families are independent streams.
std::uint64_t FamilySeed(std::uint64_t seed, std::string_view family);

}  // namespace lnv

#endif  // LNV_HARNESS_FAMILIES_H_
