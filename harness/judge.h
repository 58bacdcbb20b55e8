// The judge: runs a kernel on a Case, asks the oracle, and says per output
// how far the kernel is from the exact values (ULPs of the output's format,
// with the subnormal floor), how much of its bound it uses, where the worst
// element is, and a Verdict. Shared by ln_check, the properties, the fuzzer
// and the reports.
//
// Rules (docs/DESIGN.md §4):
//   * Errors are measured against the exact value (hi + lo), not the rounded one.
//   * Elements the special-value table decides (oracle.h; ExactValue::by_table:
//     rows of x holding NaN or +-inf) have bound 0: the kernel returns the
//     oracle's value (zeros of either sign agree) or, where the table accepts
//     it, NaN; any other value is kBoundExceeded (NaN on one side:
//     kNanMismatch). E.g. an RMSNorm row with +-inf: y = +-0 or NaN at its
//     finite elements, never a nonzero value.
//   * NaN vs NaN is agreement, and so is a kernel NaN where the oracle accepts
//     it (ExactValue::nan_accepted). A finite kernel value where the oracle is
//     NaN, or a kernel NaN where the oracle is not: kNanMismatch. (A kernel
//     +-inf where the oracle's NaN is not from the table agrees: that NaN is
//     inf * 0 or inf - inf with an exact 0 or cancellation, e.g. gamma = inf
//     with xhat = 0, which a kernel's rounding may leave nonzero.)
//   * A kernel +-inf where the oracle is finite: kNotFinite, unless the
//     exact value is within the (finite) bound of the format's overflow
//     threshold. Finite in, finite out holds whatever the bound: an element
//     without an accuracy claim (bound +inf) must still be finite. The mirror
//     case, a finite kernel value where the exact value rounds to +-inf, is
//     measured against the exact value like any other; the other infinity
//     is kBoundExceeded, claim or not.
//   * A finite row outside the kernel's claimed range is out of range: its
//     exact sum of squares exceeds max_row_sumsq, or its variance error bound
//     reaches sigma^2 + eps (RowInClaimedRange, harness/bounds.h). There only
//     the NaN contract (an oracle NaN must be a kernel NaN) is judged; its
//     elements read kOutOfRange, and a dgamma column holding such a row too.
//     dbeta = sum dy involves neither x nor the statistics: it stays judged.
//   * Elements without a claim (bound +inf, or out of range) are counted per
//     output; a claims_bound kernel with more than kMaxUnclaimedFraction of
//     them on the random-data families is "not judged" (NotJudgedReason).
//   * The backward is run with the kernel's own forward mean/rstd.
#ifndef LNV_HARNESS_JUDGE_H_
#define LNV_HARNESS_JUDGE_H_

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/bounds.h"
#include "harness/case_file.h"
#include "impls/registry.h"
#include "oracle/oracle.h"

namespace lnv {

// In increasing severity: a case's verdict is its worst element's.
enum class Verdict {
  kPass,
  kOutOfRange,       // inputs outside the kernel's claimed range: NaN contract only
  kOracleUndecided,  // the oracle hit its precision cap: not judged
  // The statistical tier (harness/bounds.h, TypicalModel): within the
  // worst-case bound, but beyond what the algorithm ever gives on random data.
  // Only where JudgeOptions::typical is kFail (the random-data families).
  kBeyondTypical,
  kBoundExceeded,  // |kernel - exact| > bound (the deterministic tier)
  kNotFinite,      // finite inputs, finite exact value, kernel +-inf
  kNanMismatch,    // NaN on one side only
  kKernelError,    // the kernel returned non-zero
  // Only when the kernel runs in a child process (JudgeOptions::runner,
  // harness/isolate.h):
  kCrashed,        // killed by a signal, or exited, before returning
  kTimedOut,       // still running after the timeout
  kBufferOverrun,  // touched memory outside its buffers, or wrote into an input
  // (Last: fuzz/feedback.cc counts the verdicts up to it.)
};
std::string_view VerdictName(Verdict v);
// kBeyondTypical, kBoundExceeded, kNotFinite, kNanMismatch, kKernelError and
// the three child-process verdicts: a broken claim.
bool IsFailure(Verdict v);

enum class Output { kY, kMean, kRstd, kDx, kDgamma, kDbeta };
inline constexpr std::array<Output, 6> kAllOutputs = {Output::kY,  Output::kMean,   Output::kRstd,
                                                      Output::kDx, Output::kDgamma, Output::kDbeta};
std::string_view OutputName(Output o);

// Whether an output has one value per row or per element of a row (y, mean,
// rstd, dx), so that one row of the case reproduces it; dgamma and dbeta sum
// every row.
bool IsRowOutput(Output o);
// The row of element `index` of a row output (y, dx: index / d; mean, rstd:
// index itself).
std::int64_t RowOfIndex(Output o, std::int64_t index, std::int64_t d);

struct ElementResult {
  std::int64_t index = 0;  // into the output (y, dx: row * d + col; mean, rstd: row; dgamma: col)
  double kernel = 0.0;
  ExactValue exact;
  double error = 0.0;      // |kernel - (hi + lo)|; +inf for a non-finite mismatch
  double ulps = 0.0;       // error / ulp(exact) in the output's format
  double bound = 0.0;      // absolute bound; +inf: no claim
  double bound_use = 0.0;  // error / bound (0 when the bound is +inf)
  // The statistical tier's bound (+inf where it is off), and whether a
  // finite error within `bound` exceeds it.
  double typical_bound = std::numeric_limits<double>::infinity();
  bool beyond_typical = false;
  Verdict verdict = Verdict::kPass;
};

struct OutputResult {
  Output output = Output::kY;
  bool present = false;  // judged at all (e.g. no dx without dy)
  FloatFormat format = kBinary32;
  std::int64_t count = 0;  // elements
  double max_ulp = 0.0;    // over finite, decided, in-range elements
  double max_bound_use = 0.0;
  std::optional<std::int64_t> worst;  // the element that decides the verdict, or max bound use
  ElementResult worst_element;        // that element, when `worst` is set
  Verdict verdict = Verdict::kPass;
  std::int64_t unclaimed = 0;  // elements in the claimed range whose bound is +inf
  std::int64_t undecided = 0;
  std::int64_t out_of_range = 0;
  std::int64_t beyond_typical = 0;      // elements beyond the statistical tier's bound
  std::vector<ElementResult> elements;  // every element, with JudgeOptions::keep_elements
};

struct Judgement {
  Verdict verdict = Verdict::kPass;
  std::string message;                  // for kKernelError and after: which call did what
  std::array<OutputResult, 6> outputs;  // indexed by Output
  std::int64_t rows_out_of_range = 0;
  const OutputResult& operator[](Output o) const { return outputs[static_cast<int>(o)]; }
  OutputResult& operator[](Output o) { return outputs[static_cast<int>(o)]; }
};

// The output that decides a judgement's verdict: the worst verdict, ties
// broken by the larger bound use (what a finding is reported and grouped by).
Output DecidingOutput(const Judgement& j);

// One element: the kernel's value k against the exact value and its
// absolute bound (+inf: no claim) in format f; `in_range` false for a row
// outside the kernel's claimed range; `undefined` true where the exact result
// is 0/0 from finite inputs (sigma^2 + eps = 0), whose NaN any value meets.
// Judge uses it for every element.
ElementResult JudgeElement(std::int64_t index, double k, const ExactValue& ev, double bound,
                           FloatFormat f, bool in_range, bool undefined = false);

class KernelRunner;  // harness/isolate.h

// The statistical tier: off (adversarial inputs, where its model does not
// hold), a failure (kBeyondTypical), or counted and reported only.
enum class TypicalTier { kOff, kFail, kReport };

// The tier a case of `family` applies to `impl`: off outside the families
// that hold its model (HoldsTheTypicalModel, harness/families.h); counted only for observed
// kernels, whose findings their baselines record; else `requested` (kFail by default in the tools,
// kReport with --typical=report).
TypicalTier TypicalTierFor(const ImplInfo& impl, std::string_view family, TypicalTier requested);

// "fail" / "report" / "off" -> the tier; false for anything else.
bool ParseTypicalTier(std::string_view word, TypicalTier* tier);

struct JudgeOptions {
  bool keep_elements = false;  // fill OutputResult::elements (replay)
  TypicalTier typical = TypicalTier::kOff;
  // Calls the kernel (e.g. in a child process); nullptr: directly, in this process.
  KernelRunner* runner = nullptr;
  BoundModel (*model_for)(const ImplInfo&) = &ModelFor;  // the bound a kernel is held to
  OracleOptions oracle;
};

// The oracle's answer for a case, reusable for every kernel with the same
// norm, x dtype and param dtype (the kernel-independent part of judging).
struct Reference {
  OracleForwardResult forward;
  std::optional<OracleBackwardResult> backward;  // when the case has dy
  std::vector<RowInput> rows;                    // exact per-row inputs of the bounds
  std::vector<BackwardRowInput> backward_rows;   // when the case has dy
  std::vector<double> row_sumsq;                 // exact-to-double sum x^2 per row
};
Reference ComputeReference(const Case& c, const OracleOptions& o = {});

// Whether the kernel can run on the case: its norm and dtypes match, and it
// has a forward. CheckCompatible says why not; this is the cheap test for
// callers that only filter (fuzz_ln asks it of every kernel on every input).
bool IsCompatible(const ImplInfo& impl, const Case& c);
// "" when IsCompatible(impl, c), else why not.
std::string CheckCompatible(const ImplInfo& impl, const Case& c);

// Requires CheckCompatible(impl, c) == "".
Judgement Judge(const ImplInfo& impl, const Case& c, const JudgeOptions& opt = {});
Judgement JudgeWithReference(const ImplInfo& impl, const Case& c, const Reference& ref,
                             const JudgeOptions& opt = {});

// What a kernel wrote for a case, each value exactly a value of its output's
// dtype (binary32 for mean and rstd); an empty vector: the output was not
// produced, and is not judged. What JudgeWithReference gets by running a
// kernel, and what the Python module gets from arrays a kernel already wrote.
struct KernelOutputs {
  std::vector<double> y, mean, rstd;      // rows * d, rows (LayerNorm only), rows
  std::vector<double> dx, dgamma, dbeta;  // rows * d, d, d (LayerNorm only); need the case's dy
};

// "" when every output of `out` is empty or has the size the case gives it,
// else which one does not.
std::string CheckOutputsShape(const Case& c, const KernelOutputs& out);

// Judges outputs a kernel with the claim of `claim` (its norm, dtypes,
// algorithm, reduction, accumulation and valid range) wrote for c; its
// forward and backward are not called. Requires CheckOutputsShape(c, out)
// == "". The backward's outputs are judged where the case has dy.
Judgement JudgeOutputs(const ImplInfo& claim, const Case& c, const Reference& ref,
                       const KernelOutputs& out, const JudgeOptions& opt = {});

// "" when each output holds a claim on all but kMaxUnclaimedFraction
// (harness/bounds.h) of its elements on the random-data families, given per
// output (indexed by Output) the elements judged there and those judged
// without a claim (OutputResult::unclaimed + out_of_range); else which
// outputs do not, and by how much: why a claims_bound kernel is "not judged".
std::string NotJudgedReason(const std::array<std::int64_t, 6>& count,
                            const std::array<std::int64_t, 6>& unclaimed);

// One line: "y: max 0.5 ulp, bound use 0.01; dx: ... -> pass".
std::string Summarize(const Judgement& j);

}  // namespace lnv

#endif  // LNV_HARNESS_JUDGE_H_
