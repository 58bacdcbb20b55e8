// Every RapidCheck generator of the property suite, in one header.
//
// Values are built from integer parts (sign, exponent, mantissa) and rounded
// once into their format (lnv::RoundToFormat), so every drawn value is
// exactly representable, NaN/inf/subnormals are reachable on purpose, and a
// failing value shrinks along its parts (mantissa toward 0, exponent toward
// the low end of its range) instead of through decimal noise. RapidCheck's
// own float generators never give NaN, inf or subnormals and shrink badly.
//
// Sizes: RapidCheck grows its size parameter from 0 to max_size over a run,
// and gen::inRange scales its range with it, so a value generator drawn at
// a small size would give only the bottom of its range (for an exponent
// range reaching below emin: only subnormals). Value generators therefore
// draw at full size (gen::resize); only shapes (d, rows) grow with the size,
// which skews d small early in a run and large late.
//
// Whole cases also come from harness/families (seeded: large mean, huge and
// tiny magnitudes, heavy tails, gamma near 0, beta cancelling gamma xhat,
// ...), so the properties see what ln_check, the fuzzer and the reports see.
#ifndef LNV_PROPERTIES_GENERATORS_H_
#define LNV_PROPERTIES_GENERATORS_H_

#include <rapidcheck.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "harness/case_file.h"
#include "harness/formats.h"  // FloatFormat, ExactValue, RoundToFormat (the oracle's types)
#include "impls/api.h"
#include "impls/registry.h"

namespace lnv {

// RapidCheck prints counterexamples with showValue (found by ADL).
void showValue(const Case& c, std::ostream& os);

namespace props {

// ---- What the kernels share: one input serves every kernel of a group ----

struct KernelGroup {
  Norm norm = Norm::kLayerNorm;
  DType dtype = DType::kF32;        // x, y, dy, dx
  DType param_dtype = DType::kF32;  // gamma, beta, dgamma, dbeta
  bool operator==(const KernelGroup&) const = default;
};
void showValue(const KernelGroup& g, std::ostream& os);

KernelGroup GroupOf(const ImplInfo& impl);
// The distinct groups of `kernels`, in first-seen order.
std::vector<KernelGroup> GroupsOf(const std::vector<const ImplInfo*>& kernels);
// One of `groups` (which must not be empty).
rc::Gen<KernelGroup> OneGroupOf(const std::vector<KernelGroup>& groups);

// ---- Scalars from integer parts ----

// +-(1 + m 2^(1-p)) 2^e, e in [e_lo, e_hi] clamped to the format's range,
// rounded into f (an e below emin gives a subnormal; the format's smallest
// subnormal is reachable).
rc::Gen<double> FloatValue(FloatFormat f, int e_lo, int e_hi);

// k 2^e with |k| <= k_max (k_max < 2^53): values whose small sums are exact.
rc::Gen<double> ScaledInteger(std::int64_t k_max, int e);

// A float eps: log-uniform over [2^-40, 2^-6) (about 9e-13 ... 1.6e-2), with
// the common 1e-5, 1e-6 and 1e-12 often, and exactly 0 when allowed.
rc::Gen<double> Epsilon(bool allow_zero);

// ---- Shapes (grow with the size parameter; skewed small) ----

// d in [lo, hi]: mostly small, with the lengths where vector tails and
// chunk boundaries live (2^k - 1, 2^k, 2^k + 1, 768, ...) often.
rc::Gen<std::int64_t> RowLength(std::int64_t lo, std::int64_t hi);
// rows in [1, hi], mostly 1..4.
rc::Gen<std::int64_t> RowCount(std::int64_t hi);

// ---- Rows ----

enum class RowKind {
  kStandard,      // values of magnitude 2^-3 .. 2^4, random signs
  kLargeMean,     // a common center plus small integer multiples of a fine step: kappa up to 2^p
  kHeavyTail,     // standard values and one or two outliers 2^8 .. 2^20 times larger
  kHuge,          // magnitudes 2^(emax/2) .. 2^(emax-2): sums of squares overflow
  kTiny,          // subnormal and barely normal magnitudes
  kNearConstant,  // c + {-1, 0, 1} ulp(c), with ulp(c) ~ sqrt(eps)/64: sigma^2 << eps
  kConstant,      // one value k 2^e, |k| < 2^7, repeated (sums exact)
};
const char* RowKindName(RowKind k);
// Every finite kind.
std::vector<RowKind> AllRowKinds();

rc::Gen<std::vector<double>> RowValues(FloatFormat f, std::int64_t d, RowKind kind, double eps);

// A finite standard row with one or two elements replaced by NaN, +inf or
// -inf (both infinities together too).
rc::Gen<std::vector<double>> SpecialRow(FloatFormat f, std::int64_t d);

// ---- Whole inputs ----

enum class Affine {
  kAbsent,  // gamma and beta NULL (the ABI's all ones / all zeros)
  kOnes,    // explicit gamma = 1, beta = 0 arrays
  kDrawn,   // drawn gamma (zeros and subnormals included) and beta
};

struct InputSpec {
  std::int64_t min_d = 1;
  std::int64_t max_d = 256;
  std::int64_t max_rows = 4;
  std::vector<RowKind> kinds = AllRowKinds();
  bool allow_eps_zero = false;
  bool backward = true;  // draw dy
  std::vector<Affine> affine = {Affine::kAbsent, Affine::kOnes, Affine::kDrawn};
  // Also draw whole cases from these harness families (empty: none).
  std::vector<std::string> families;
};

// The harness families whose rows are all finite (every one but nan_inf_rows).
std::vector<std::string> FiniteFamilies();

rc::Gen<Case> Input(const KernelGroup& g, const InputSpec& spec);

// gamma and beta for a case (beta stays empty for RMSNorm).
void SetAffine(Case* c, Affine mode, const std::vector<double>& gamma,
               const std::vector<double>& beta);
// Drawn gamma and beta: mostly O(1), sometimes +-0 and subnormals, and in
// one case of 16 one element of +inf or -inf (y then follows IEEE arithmetic).
rc::Gen<std::vector<double>> GammaValues(FloatFormat f, std::int64_t d);
rc::Gen<std::vector<double>> BetaValues(FloatFormat f, std::int64_t d);
rc::Gen<std::vector<double>> DyValues(FloatFormat f, std::int64_t n);

// ---- Property-specific draws ----

// A case and the same case with row r shifted by c_r, where every x + c_r
// is exactly representable: x = k 2^q with |k| <= K = 2^b - 1 and
// c_r = m_r 2^q with |k + m_r| < 2^p, so kappa reaches about 2^(p-b).
struct ShiftPair {
  Case base;
  Case shifted;
  std::vector<double> shift;  // c_r per row
};
rc::Gen<ShiftPair> ShiftedInput(const KernelGroup& g, std::int64_t max_d, std::int64_t max_rows);

// A permutation of [0, d): reversal, rotation, a few transpositions, or (d
// <= 64) a full shuffle that shrinks toward the identity.
rc::Gen<std::vector<std::int64_t>> Permutation(std::int64_t d);

// ---- Coverage ----

// RC_CLASSIFY the case by dtype, kappa bucket (from the oracle's exact row
// statistics), d bucket and eps regime, and count the same marginals for
// the summary printed after each property (coverage.h).
void Classify(const Case& c, const std::vector<RowStats>& stats);
std::string KappaBucket(const std::vector<RowStats>& stats);
std::string RowLengthBucket(std::int64_t d);
std::string EpsRegime(double eps);

}  // namespace props
}  // namespace lnv

#endif  // LNV_PROPERTIES_GENERATORS_H_
