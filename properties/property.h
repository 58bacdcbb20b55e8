// What every property shares: the kernels it runs on, one judged run of a
// kernel, the element-wise comparisons that follow from the judge's bounds,
// and what happens on a failure (a case file that `ln_check --replay`
// replays, then RC_FAIL so that RapidCheck shrinks and prints the
// RC_PARAMS="reproduce=..." line).
//
// A property is a function of the Targets it checks. The suite runs each one
// under RC_GTEST_PROP on every claims_bound and observed kernel (built-ins and
// LNV_PLUGINS); the negative-control test runs the same function on one
// control kernel and requires a failure.
//
// Kernel statuses (docs/DESIGN.md §3):
//   claims_bound      a failure fails the property.
//   observed          judged only inside its claimed range (max_row_sumsq; the
//                     judge marks other rows out_of_range); a failure there is a
//                     recorded finding (printed, case file written), not a test
//                     failure: third-party kernels are held to a recorded
//                     baseline elsewhere.
//   negative_control  not in the suite's targets; the control test runs the
//                     property on it alone, with the judge's verdicts ignored,
//                     so that only the property's own checks can catch it.
#ifndef LNV_PROPERTIES_PROPERTY_H_
#define LNV_PROPERTIES_PROPERTY_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/judge.h"
#include "impls/registry.h"
#include "properties/approx.h"
#include "properties/generators.h"

namespace lnv::props {

class Coverage;  // properties/coverage.h

// ---- Budget: LNV_PROPERTY_BUDGET = default | long ----

enum class Budget { kDefault, kLong };
// Parses the variable's value (nullptr or "" = default); false on anything else.
bool ParseBudget(const char* value, Budget* out);
// The budget of this process (set once by the test main).
Budget CurrentBudget();
void SetCurrentBudget(Budget b);
const char* BudgetName(Budget b);

// Shape limits of the drawn inputs under the current budget.
struct Limits {
  std::int64_t max_d;       // row length of the general inputs
  std::int64_t max_rows;    // rows of the general inputs
  std::int64_t max_long_d;  // row length of the single-row metamorphic forms
};
Limits CurrentLimits();

// ---- Kernels ----

// The registry plus LNV_PLUGINS, loaded once per process.
const std::vector<ImplInfo>& LoadedKernels();
const std::vector<std::string>& PluginLoadErrors();

struct Targets {
  std::vector<const ImplInfo*> kernels;
  // false: the judge's verdicts do not fail a kernel; only the property's own
  // checks do (negative controls, to prove those checks can fail).
  bool judge_verdicts = true;
  std::string cases_subdir = "suite";  // under lnv-cases/properties/
};
// Every claims_bound and observed kernel of LoadedKernels().
Targets SuiteTargets();
// One kernel alone, judged by the property's own checks only.
Targets ControlTargets(const ImplInfo& kernel);

// ---- Properties ----

using PropertyBody = void (*)(const Targets& targets);
// Whether a property can judge a kernel at all (its norm, its outputs).
using PropertyAppliesFn = bool (*)(const ImplInfo& kernel);
struct PropertyDef {
  std::string_view name;  // the sentence, as the gtest name
  PropertyBody body;
  PropertyAppliesFn applies = nullptr;  // nullptr: every kernel with a forward
};
// THE list of properties (properties.cc), one line each.
const std::vector<PropertyDef>& AllProperties();
const PropertyDef* FindProperty(std::string_view name);

// Whether `p` applies to `k`: a forward, and p.applies if it has one.
bool PropertyApplies(const PropertyDef& p, const ImplInfo& k);
// The kernels of `targets` that `p` applies to but that `coverage` never
// judged: a run of `p` that passes must leave this empty, or it passed
// without judging them (properties_main.cc fails the run).
std::vector<std::string> NeverJudged(const PropertyDef& p, const Targets& targets,
                                     const Coverage& coverage);

// ---- One judged kernel run ----

struct Judged {
  const ImplInfo* impl = nullptr;
  Judgement j;  // with every element kept

  bool Has(Output o) const { return j[o].present; }
  std::int64_t Count(Output o) const { return j[o].count; }
  const ElementResult& At(Output o, std::int64_t i) const {
    return j[o].elements[static_cast<std::size_t>(i)];
  }
  double Value(Output o, std::int64_t i) const { return At(o, i).kernel; }
  FloatFormat Format(Output o) const { return j[o].format; }
  // The element carries a claim: in the kernel's range, decided by the
  // oracle, a finite exact value and a finite bound.
  bool Claimed(Output o, std::int64_t i) const;
  Approx ExactOf(Output o, std::int64_t i) const { return FromOracle(At(o, i).exact, Format(o)); }
};

// "" when |(Ka - Kb) - (Ea - Eb)| <= Ba + Bb for element ia of `a` and ib of
// `b` (K kernel, E exact, B the judge's bound): what the judge's bounds imply
// for any two runs, by the triangle inequality. Elements without a claim on
// either side are skipped; a non-finite kernel value where the exact value
// is finite is a mismatch.
// With scales: |(sa Ka - sb Kb) - (sa Ea - sb Eb)| <= |sa| Ba + |sb| Bb
// (sa, sb powers of two, so the scaled kernel values are exact).
std::string CompareElements(Output o, const Judged& a, std::int64_t ia, const Judged& b,
                            std::int64_t ib, double sa = 1.0, double sb = 1.0);

// The first CompareElements mismatch over every element of `outputs`, the
// same index on both sides ("" if none).
std::string CompareSameIndex(const Judged& a, const Judged& b,
                             std::initializer_list<Output> outputs);

// Every output of both runs bit for bit (NaN = NaN): run-to-run determinism.
std::string BitwiseMismatch(const Judged& a, const Judged& b);

// The oracle's values of one output (nullptr when the reference lacks it).
const std::vector<ExactValue>* ExactValues(const Reference& r, Output o);

// The first CompareExactBits mismatch over `outputs`, the same index on both sides.
std::string ExactBitsMismatch(const Reference& a, const Reference& b,
                              std::initializer_list<Output> outputs);

// The kernel's value is finite wherever the exact rounded value is and the
// element carries a claim (in range, finite bound): "" or a message.
std::string NonFiniteWhereExactIsFinite(const Judged& r, std::initializer_list<Output> outputs);

// ---- Infinite gamma or beta (one case of 16 draws one) ----
//
// y_i = gamma_i xhat_i + beta_i in IEEE arithmetic (oracle.h): an infinite
// gamma_i or beta_i makes y_i +-inf or NaN on a finite row, and an infinite
// g_i = dy_i gamma_i makes the row's dx NaN. A finite-only relation is stated
// on the other elements and rows; these get the IEEE-exact result instead.

// Whether gamma_i and beta_i (absent: 1 and 0) are both finite.
bool AffineIsFinite(const Case& c, std::int64_t i);
// Whether g = dy gamma is finite over row r (the backward's finite-g rows).
bool RowGIsFinite(const Case& c, std::int64_t r);
// The oracle on c with gamma and beta absent: its y is xhat, whose hi states
// the sign of xhat and whether it is 0 exactly (oracle.h: hi + lo to 2p bits).
Reference PlainReference(const Case& c);
// fuzz/known_findings.txt, entry 1 (open): gamma_i = +-inf times an xhat_i
// the kernel cannot resolve. The exact xhat_i is nonzero, so the oracle's y_i
// is +-inf; the kernel's xhat_i, within its bound of the exact one, may be 0
// or of the other sign, and it writes NaN or the other infinity. True when
// e, an element of y judged for kernel k on c, is that: an infinite gamma_i,
// an infinite exact value, a non-finite kernel value, and |xhat_i| within the
// kernel's bound on xhat (its y bound with gamma = 1, beta = 0, which holds
// the xhat error). PropertyCase::Run records a judgement failing on such
// elements alone as a finding, as fuzz_ln does, instead of failing.
bool IsUnresolvedXhatTimesInfiniteGamma(const ImplInfo& k, const Case& c, const Reference& ref,
                                        const ElementResult& e);

// y at idx (row r, column idx % d) in IEEE arithmetic on the signs, rounded
// into c's dtype: gamma_i xhat_i + beta_i with xhat from `plain`. Exact
// wherever gamma_i or beta_i is infinite, where only xhat's sign or being 0
// can matter (inf * 0 = NaN, inf - inf = NaN).
double IeeeAffineY(const Case& c, const Reference& plain, std::int64_t idx);

// %.9g: how messages print a value.
std::string Num(double v);

// The oracle's rounded values of two results, compared bit for bit (NaN = NaN).
std::string CompareExactBits(const char* what, const std::vector<ExactValue>& a, std::int64_t ia,
                             const std::vector<ExactValue>& b, std::int64_t ib);

// Discards the case (RC_PRE) when eps = 0 and a finite row has sigma^2
// (LayerNorm) or mean(x^2) (RMSNorm) below kEpsZeroFloor of its dtype's
// accumulation: nothing then keeps q = sigma^2 + eps above the accumulation
// type's underflow, so a kernel's q can underflow to 0 (inf rstd, NaN
// outputs) and the exact rstd can exceed the ABI's float rstd. The scalar
// kernels' claim excludes gradual underflow when eps is tiny
// (impls/cpu/valid_range.h), but the registry's range (max_row_sumsq) cannot
// state a lower limit. Counted in the coverage as a skip.
void RequireEpsOrNoUnderflow(const Case& c, const Reference& ref);

// ---- Exact relations: bit for bit, no oracle, no bound ----
//
// Two relations hold bit for bit for any deterministic IEEE kernel, so they
// give a verdict of their own where every comparison within two judge bounds
// only restates the judge (the triangle inequality):
//   "scaling"  2^k x with 4^k eps gives y, dgamma, dbeta with the same bits,
//              mean 2^k, rstd and dx 2^-k, exactly, while nothing under- or
//              overflows (ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged);
//   "rows"     a row's y, mean, rstd and dx have the same bits alone and in
//              any batch (EachRowDependsOnThatRowAlone).
inline constexpr std::string_view kScalingRelation = "scaling";
inline constexpr std::string_view kRowsRelation = "rows";

// The kernel's registry exemption from `relation` ("<relation>: file:line
// why", ImplInfo::exact_relation_exemptions), or "" when it has none.
std::string ExemptionFrom(const ImplInfo& k, std::string_view relation);

// Whether a property holds k to `relation` bit for bit: every built-in kernel
// (claims_bound, observed, negative control) that no exemption of its own
// names; not plugins, which ABI v1 gives no way to state the relation (a real
// kernel may pick its algorithm by batch size or magnitude). The others are
// held to the relation within their bounds. Counts the exemption as a skip in
// the coverage summary.
bool HeldToExactRelation(const ImplInfo& k, std::string_view relation);

// Element ia of run a times 2^shift against element ib of run b, bit for bit
// (NaN = NaN; the product is exact in binary64): "" or a message. Elements
// outside either kernel's claimed range are skipped. With shift != 0 so are
// those where gradual underflow or overflow explains a difference: a value
// of either run, or its counterpart scaled to the other run, is nonzero and
// outside the normal range of the output's format (there the rounding itself
// depends on the scale).
std::string CompareBits(Output o, const Judged& a, std::int64_t ia, const Judged& b,
                        std::int64_t ib, int shift = 0);

// Whether the rounding into f may itself depend on the scale, for a value a
// at one scale and b at 2^shift times it (shift != 0): a or b, or its
// counterpart scaled to the other run, is nonzero, finite and subnormal or
// beyond f's largest finite value, or one is 0 and the other infinite (an
// underflow and an overflow). A zero or an infinity beside a value whose
// counterpart is normal is not explained so. False for shift = 0.
bool ScaleChangesRounding(double a, double b, int shift, FloatFormat f);

// ---- One RapidCheck case of a property ----

class PropertyCase {
 public:
  PropertyCase(std::string_view property, const Targets& targets);

  // The targets that run on this group (norm and dtypes match, a forward).
  std::vector<const ImplInfo*> KernelsFor(const KernelGroup& g) const;
  bool judge_verdicts() const { return targets_.judge_verdicts; }

  // The oracle broke an exact identity: writes the case and fails.
  [[noreturn]] void OracleFails(const Case& c, const std::string& what) const;

  // Runs the kernel through the judge (elements kept). A failing verdict
  // fails the property (judge_verdicts), or is a recorded finding (observed
  // kernels: nullopt, skip the kernel for this case). A verdict that fails on
  // the known open finding alone (IsUnresolvedXhatTimesInfiniteGamma) is a
  // recorded finding too, and the property's own checks still run.
  std::optional<Judged> Run(const ImplInfo& k, const Case& c, const Reference& ref) const;

  // The kernel broke the property on c: writes c as a case file; fails the
  // RapidCheck case for claims_bound and control kernels (does not return);
  // records a finding and returns for observed kernels.
  void KernelFails(const ImplInfo& k, const Case& c, const std::string& what) const;

  // The path a failure of `kernel` is written to.
  std::string CasePath(const std::string& kernel) const;

 private:
  std::string property_;
  const Targets& targets_;
};

// ---- Running a property outside RC_GTEST_PROP ----

struct QuietRun {
  bool failed = false;
  int cases = 0;        // successful cases before the failure (or in all)
  std::string message;  // RapidCheck's failure description
};
// Runs the property on `targets` with the configured seed (plus
// seed_offset), max_success cases, no shrinking, and no RC_PARAMS reproduce
// map; prints nothing.
QuietRun RunQuietly(const PropertyDef& p, const Targets& targets, int max_success,
                    std::uint64_t seed_offset = 0);

}  // namespace lnv::props

#endif  // LNV_PROPERTIES_PROPERTY_H_
