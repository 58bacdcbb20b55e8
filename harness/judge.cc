#include "harness/judge.h"

#include <cassert>
#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>
#include <utility>

#include "harness/families.h"
#include "harness/formats.h"
#include "harness/isolate.h"
#include "impls/dtype.h"

namespace lnv {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// A dtype buffer holding `v` exactly (the case guarantees representability).
std::vector<unsigned char> ToBuffer(const std::vector<double>& v, DType t) {
  std::vector<unsigned char> b(v.size() * SizeOf(t));
  for (std::size_t i = 0; i < v.size(); ++i)
    StoreExact(b.data(), t, static_cast<std::int64_t>(i), v[i]);
  return b;
}

// An output buffer whose unwritten elements read back as NaN.
std::vector<unsigned char> UnwrittenBuffer(std::int64_t n, DType t) {
  return ToBuffer(std::vector<double>(static_cast<std::size_t>(n), kNan), t);
}

const void* DataOrNull(const std::vector<unsigned char>& b) {
  return b.empty() ? nullptr : b.data();
}

int Severity(Verdict v) { return static_cast<int>(v); }

// Accumulates elements into an OutputResult.
class OutputAccumulator {
 public:
  // keep: every element kept in out->elements, `count` of them expected.
  OutputAccumulator(OutputResult* out, bool keep, std::int64_t count) : out_(out), keep_(keep) {
    if (keep_) out_->elements.reserve(static_cast<std::size_t>(count));
  }
  void Add(const ElementResult& e) {
    OutputResult& o = *out_;
    ++o.count;
    // An element outside the claimed range counts there, not here.
    if (std::isinf(e.bound) && e.verdict != Verdict::kOutOfRange) ++o.unclaimed;
    if (e.verdict == Verdict::kOracleUndecided) ++o.undecided;
    if (e.verdict == Verdict::kOutOfRange) ++o.out_of_range;
    if (e.beyond_typical) ++o.beyond_typical;
    if (std::isfinite(e.error)) {
      o.max_ulp = std::max(o.max_ulp, e.ulps);
      o.max_bound_use = std::max(o.max_bound_use, e.bound_use);
    }
    // The worst element: highest severity, then largest bound use, then ulps.
    const ElementResult& w = o.worst_element;
    const bool worse =
        !o.worst || Severity(e.verdict) > Severity(w.verdict) ||
        (Severity(e.verdict) == Severity(w.verdict) &&
         (e.bound_use > w.bound_use || (e.bound_use == w.bound_use && e.ulps > w.ulps)));
    if (worse) {
      o.worst = e.index;
      o.worst_element = e;
      o.verdict = std::max(o.verdict, e.verdict);
    }
    if (keep_) o.elements.push_back(e);
  }

 private:
  OutputResult* out_;
  bool keep_;
};

// Calls the forward or backward, directly or through opt.runner. Returns
// false (with j's verdict and message set) when it did not return 0.
template <typename Args>
bool CallKernel(const ImplInfo& impl, const Args& args, const JudgeOptions& opt, Judgement* j) {
  constexpr bool kForward = std::is_same_v<Args, ForwardArgs>;
  const char* which = kForward ? "forward" : "backward";
  if (opt.runner == nullptr) {
    int rc = 0;
    if constexpr (kForward) {
      rc = impl.forward(&args);
    } else {
      rc = impl.backward(&args);
    }
    if (rc == 0) return true;
    j->verdict = Verdict::kKernelError;
    j->message = std::string(which) + " returned " + std::to_string(rc);
    return false;
  }
  CallResult r;
  if constexpr (kForward) {
    r = opt.runner->Forward(impl, args);
  } else {
    r = opt.runner->Backward(impl, args);
  }
  switch (r.status) {
    case CallStatus::kOk:
      return true;
    case CallStatus::kReturnedError:
      j->verdict = Verdict::kKernelError;
      break;
    case CallStatus::kTimedOut:
      j->verdict = Verdict::kTimedOut;
      break;
    case CallStatus::kBufferOverrun:
      j->verdict = Verdict::kBufferOverrun;
      break;
    case CallStatus::kCrashed:
    case CallStatus::kHarnessError:
      j->verdict = Verdict::kCrashed;
      break;
  }
  j->message = std::string(which) + " " + r.message;
  return false;
}

// The statistical tier on an element the deterministic tier has judged: only
// a pass with a finite error can be beyond the typical bound.
ElementResult WithTypical(ElementResult e, double typical_bound, TypicalTier tier) {
  if (tier == TypicalTier::kOff) return e;
  e.typical_bound = typical_bound;
  if (e.verdict != Verdict::kPass || !std::isfinite(e.error) || !(e.error > typical_bound)) {
    return e;
  }
  e.beyond_typical = true;
  if (tier == TypicalTier::kFail) e.verdict = Verdict::kBeyondTypical;
  return e;
}

void StartOutput(Judgement* j, Output o, FloatFormat f) {
  OutputResult& r = (*j)[o];
  r = OutputResult{};
  r.output = o;
  r.present = true;
  r.format = f;
}

void Finish(Judgement* j) {
  for (const OutputResult& o : j->outputs) {
    if (o.present) j->verdict = std::max(j->verdict, o.verdict);
  }
}

// An element the special-value table decides (oracle.h, ExactValue::
// by_table): IEEE rules leave no rounding error, so the bound is 0 and the
// kernel must return the value itself (zeros of either sign agree, as they do
// everywhere) or NaN where that is accepted. Anything else, a nonzero finite
// value where the table gives +-0 included, is a mismatch.
ElementResult JudgeByTable(ElementResult e, FloatFormat f) {
  const double k = e.kernel, o = e.exact.rounded;
  e.bound = 0.0;
  if (std::isnan(k) ? std::isnan(o) || e.exact.nan_accepted : k == o) return e;
  const bool nan_side = std::isnan(k) || std::isnan(o);
  e.error = nan_side ? kInf : std::fabs(k - o);
  e.ulps = std::isfinite(e.error) ? e.error / FormatUlp(o, f) : kInf;
  e.bound_use = kInf;
  e.verdict = nan_side ? Verdict::kNanMismatch : Verdict::kBoundExceeded;
  return e;
}

}  // namespace

ElementResult JudgeElement(std::int64_t index, double k, const ExactValue& ev, double bound,
                           FloatFormat f, bool in_range, bool undefined) {
  ElementResult e;
  e.index = index;
  e.kernel = k;
  e.exact = ev;
  e.bound = std::isnan(bound) ? kInf : bound;
  if (ev.status == ValueStatus::kUndecided) {
    e.verdict = Verdict::kOracleUndecided;
    return e;
  }
  if (ev.by_table) return JudgeByTable(e, f);
  const double o = ev.rounded;
  if (undefined && std::isnan(o)) {  // 0/0 from finite inputs: no claim, any value
    e.bound = kInf;
    return e;
  }
  if (std::isnan(o) || std::isnan(k)) {
    // The NaN contract. Where the oracle's NaN is not decided by the table
    // (inf * 0 or inf - inf where the 0 or the cancellation is exact, e.g.
    // gamma = inf with xhat = 0, a backward row with infinite dy gamma; q <= 0),
    // any non-finite kernel value agrees: its rounded xhat or sum need not
    // be exact. Out of range, a kernel NaN where the oracle is finite is
    // allowed (its arithmetic may overflow there); a finite value for a NaN never is.
    if (std::isnan(o) && !std::isfinite(k)) return e;  // agreement
    if (std::isnan(k) && ev.nan_accepted) return e;    // another order's IEEE result
    if (!in_range && std::isnan(k)) {
      e.verdict = Verdict::kOutOfRange;
      return e;
    }
    e.error = e.ulps = kInf;
    e.verdict = Verdict::kNanMismatch;
    return e;
  }
  if (!in_range) {
    e.verdict = Verdict::kOutOfRange;
    return e;
  }
  const double exact = ev.hi + ev.lo;
  if (std::isinf(o)) {  // the exact value is beyond the format's range
    if (k == o) return e;
    // The other infinity is infinitely far off. A finite kernel value is
    // measured against the exact value (finite, just beyond the largest
    // float), like any other: within the bound of an exact value past the
    // overflow threshold, the kernel's own error may have kept it below
    // (found by fuzz_ln: an fp32 RMSNorm y at -0x1.fffffep+127 for an exact
    // -0x1.ffffff38e6265p+127, 0.6 ulp off). The mirror case, a kernel
    // infinity for a finite exact value, is the reachability test below.
    // The other infinity is reachable the same way, only when the bound
    // reaches the threshold on its side: exact - bound <= -t for -inf (found
    // by fuzz_ln: an f16 RMSNorm dx whose exact 0x1.6f35p+23 rounds to +inf
    // under a bound of 2.2e8, a cancelling sum's, and the kernel wrote -inf,
    // fuzz/regressions/f16-rms-dx-other-infinity-within-bound.case).
    if (std::isinf(k)) {
      const double t = OverflowThreshold(f);
      const bool reachable =
          std::isfinite(e.bound) && (k > 0 ? exact + e.bound >= t : exact - e.bound <= -t);
      if (reachable) return e;
      e.error = e.ulps = kInf;
      e.verdict = Verdict::kBoundExceeded;
      return e;
    }
  }
  if (std::isinf(k)) {
    // Rounding a value within the bound of the overflow threshold may give
    // inf. Finite in, finite out holds whatever the bound: an element without
    // an accuracy claim (bound +inf) must still be finite where its exact value
    // is; only a row outside the claimed range (handled above) may overflow.
    const double t = OverflowThreshold(f);
    const bool reachable =
        std::isfinite(e.bound) && (k > 0 ? exact + e.bound >= t : exact - e.bound <= -t);
    if (!reachable) {
      e.error = e.ulps = kInf;
      e.verdict = Verdict::kNotFinite;
    }
    return e;
  }
  if (std::isinf(ev.hi)) {
    // A finite kernel value for an exact value past binary64's range (a
    // binary64 output): the oracle gives lo = exact -+ 2^1024 (oracle.h), so
    // error = |(k -+ 2^1024) - lo|, halved to stay in range (k / 2 is exact
    // wherever the difference can be within a finite bound). Found by
    // fuzz_ln: an f64 RMSNorm y of DBL_MAX for an exact value 2^970 above it,
    // 0.5 ulp off and within its bound (fuzz/regressions/
    // judge-f64-finite-within-bound-of-exact-beyond-binary64.case).
    const double half_top = std::copysign(0x1p1023, ev.hi);
    e.error = 2 * std::fabs((0.5 * k - half_top) - 0.5 * ev.lo);
  } else {
    e.error = std::fabs((k - ev.hi) - ev.lo);
  }
  e.ulps = e.error / FormatUlp(exact, f);  // exact = +-inf: the top binade's ulp
  e.bound_use = std::isinf(e.bound) ? 0.0 : e.error / e.bound;
  if (e.error > e.bound) e.verdict = Verdict::kBoundExceeded;
  return e;
}

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kOutOfRange:
      return "out_of_range";
    case Verdict::kOracleUndecided:
      return "oracle_undecided";
    case Verdict::kBeyondTypical:
      return "beyond_typical";
    case Verdict::kBoundExceeded:
      return "bound_exceeded";
    case Verdict::kNotFinite:
      return "not_finite";
    case Verdict::kNanMismatch:
      return "nan_mismatch";
    case Verdict::kKernelError:
      return "kernel_error";
    case Verdict::kCrashed:
      return "crashed";
    case Verdict::kTimedOut:
      return "timed_out";
    case Verdict::kBufferOverrun:
      return "buffer_overrun";
  }
  return "?";
}

bool IsFailure(Verdict v) {
  return v == Verdict::kBeyondTypical || v == Verdict::kBoundExceeded || v == Verdict::kNotFinite ||
         v == Verdict::kNanMismatch || v == Verdict::kKernelError || v == Verdict::kCrashed ||
         v == Verdict::kTimedOut || v == Verdict::kBufferOverrun;
}

bool IsRowOutput(Output o) {
  return o == Output::kY || o == Output::kMean || o == Output::kRstd || o == Output::kDx;
}

std::int64_t RowOfIndex(Output o, std::int64_t index, std::int64_t d) {
  return (o == Output::kY || o == Output::kDx) ? index / d : index;
}

Output DecidingOutput(const Judgement& j) {
  Output best = Output::kY;
  bool found = false;
  for (const OutputResult& o : j.outputs) {
    if (!o.present) continue;
    if (!found || o.verdict > j[best].verdict ||
        (o.verdict == j[best].verdict && o.max_bound_use > j[best].max_bound_use)) {
      best = o.output;
      found = true;
    }
  }
  return best;
}

std::string_view OutputName(Output o) {
  switch (o) {
    case Output::kY:
      return "y";
    case Output::kMean:
      return "mean";
    case Output::kRstd:
      return "rstd";
    case Output::kDx:
      return "dx";
    case Output::kDgamma:
      return "dgamma";
    case Output::kDbeta:
      return "dbeta";
  }
  return "?";
}

TypicalTier TypicalTierFor(const ImplInfo& impl, std::string_view family, TypicalTier requested) {
  if (!HoldsTheTypicalModel(family)) return TypicalTier::kOff;
  if (impl.status == ImplStatus::kObserved && requested != TypicalTier::kOff) {
    return TypicalTier::kReport;
  }
  return requested;
}

bool ParseTypicalTier(std::string_view word, TypicalTier* tier) {
  if (word == "fail")
    *tier = TypicalTier::kFail;
  else if (word == "report")
    *tier = TypicalTier::kReport;
  else if (word == "off")
    *tier = TypicalTier::kOff;
  else
    return false;
  return true;
}

Reference ComputeReference(const Case& c, const OracleOptions& o) {
  OracleProblem p;
  p.norm = c.norm == Norm::kLayerNorm ? OracleNorm::kLayerNorm : OracleNorm::kRmsNorm;
  p.rows = c.rows;
  p.d = c.d;
  p.x = c.x;
  p.gamma = c.gamma;
  if (c.norm == Norm::kLayerNorm) p.beta = c.beta;
  p.dy = c.dy;
  p.eps = c.eps;
  p.out_format = FormatOf(c.dtype);
  p.param_format = FormatOf(c.param_dtype);
  p.stat_format = kBinary32;

  Reference ref;
  ref.forward = OracleForward(p, o);
  if (!c.dy.empty()) ref.backward = OracleBackward(p, o);
  const std::int64_t d = c.d;
  for (std::int64_t r = 0; r < c.rows; ++r) {
    const double* row = c.x.data() + r * d;
    ref.rows.push_back(MakeRowInput(ref.forward.stats[r], c.eps, row, d));
    long double s = 0;  // 64-bit significand: the claimed-range test is to ~1e-19
    for (std::int64_t i = 0; i < d; ++i) s += static_cast<long double>(row[i]) * row[i];
    ref.row_sumsq.push_back(static_cast<double>(s));
    if (!c.dy.empty()) {
      long double g1 = 0, g2 = 0;
      for (std::int64_t i = 0; i < d; ++i) {
        const long double g =
            static_cast<long double>(c.dy[r * d + i]) * (c.gamma.empty() ? 1.0 : c.gamma[i]);
        g1 += std::fabs(g);
        g2 += std::fabs(g * ref.forward.xhat[r * d + i]);
      }
      ref.backward_rows.push_back({static_cast<double>(g1 / d), static_cast<double>(g2 / d)});
    }
  }
  return ref;
}

bool IsCompatible(const ImplInfo& impl, const Case& c) {
  return impl.norm == c.norm && impl.x_dtype == c.dtype && impl.param_dtype == c.param_dtype &&
         impl.forward != nullptr;
}

std::string CheckCompatible(const ImplInfo& impl, const Case& c) {
  if (IsCompatible(impl, c)) return "";
  if (impl.norm != c.norm) {
    return "kernel " + impl.name + " is " + std::string(NormName(impl.norm)) + ", case is " +
           std::string(NormName(c.norm));
  }
  if (impl.x_dtype != c.dtype || impl.param_dtype != c.param_dtype) {
    return "kernel " + impl.name + " takes " + std::string(DTypeName(impl.x_dtype)) + "/" +
           std::string(DTypeName(impl.param_dtype)) + ", case is " +
           std::string(DTypeName(c.dtype)) + "/" + std::string(DTypeName(c.param_dtype));
  }
  return "kernel " + impl.name + " has no forward";
}

Judgement Judge(const ImplInfo& impl, const Case& c, const JudgeOptions& opt) {
  return JudgeWithReference(impl, c, ComputeReference(c, opt.oracle), opt);
}

namespace {

// The dtype values of an output buffer, as doubles (exactly).
std::vector<double> FromBuffer(const std::vector<unsigned char>& b, std::int64_t n, DType t) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[i] = LoadAsDouble(b.data(), t, i);
  return v;
}

// Runs the forward on c into out->y, mean (LayerNorm) and rstd. False, with
// j's verdict and message set, when the call fails.
bool RunForward(const ImplInfo& impl, const Case& c, const JudgeOptions& opt, KernelOutputs* out,
                Judgement* j) {
  const bool layer = c.norm == Norm::kLayerNorm;
  const std::int64_t rows = c.rows, n = rows * c.d;
  const auto x = ToBuffer(c.x, c.dtype);
  const auto gamma = ToBuffer(c.gamma, c.param_dtype);
  const auto beta = layer ? ToBuffer(c.beta, c.param_dtype) : std::vector<unsigned char>{};
  auto y = UnwrittenBuffer(n, c.dtype);
  std::vector<float> mean(static_cast<std::size_t>(rows), static_cast<float>(kNan));
  std::vector<float> rstd(static_cast<std::size_t>(rows), static_cast<float>(kNan));
  ForwardArgs fa{};
  fa.rows = rows;
  fa.d = c.d;
  fa.x = x.data();
  fa.gamma = DataOrNull(gamma);
  fa.beta = DataOrNull(beta);
  fa.eps = static_cast<float>(c.eps);
  fa.y = y.data();
  fa.mean = layer ? mean.data() : nullptr;
  fa.rstd = rstd.data();
  if (!CallKernel(impl, fa, opt, j)) return false;
  out->y = FromBuffer(y, n, c.dtype);
  if (layer) out->mean.assign(mean.begin(), mean.end());
  out->rstd.assign(rstd.begin(), rstd.end());
  return true;
}

// Runs the backward on c from the forward's own mean and rstd (in *out) into
// out->dx, dgamma and dbeta (LayerNorm). False, with j's verdict and message
// set, when the call fails.
bool RunBackward(const ImplInfo& impl, const Case& c, const JudgeOptions& opt, KernelOutputs* out,
                 Judgement* j) {
  const bool layer = c.norm == Norm::kLayerNorm;
  const std::int64_t d = c.d, n = c.rows * d;
  const auto x = ToBuffer(c.x, c.dtype);
  const auto gamma = ToBuffer(c.gamma, c.param_dtype);
  const auto dy = ToBuffer(c.dy, c.dtype);
  const std::vector<float> mean(out->mean.begin(), out->mean.end());  // exact: binary32 values
  const std::vector<float> rstd(out->rstd.begin(), out->rstd.end());
  auto dx = UnwrittenBuffer(n, c.dtype);
  auto dgamma = UnwrittenBuffer(d, c.param_dtype);
  auto dbeta = layer ? UnwrittenBuffer(d, c.param_dtype) : std::vector<unsigned char>{};
  BackwardArgs ba{};
  ba.rows = c.rows;
  ba.d = d;
  ba.x = x.data();
  ba.gamma = DataOrNull(gamma);
  ba.dy = dy.data();
  ba.mean = layer ? mean.data() : nullptr;
  ba.rstd = rstd.data();
  ba.eps = static_cast<float>(c.eps);
  ba.dx = dx.data();
  ba.dgamma = dgamma.data();
  ba.dbeta = layer ? dbeta.data() : nullptr;
  if (!CallKernel(impl, ba, opt, j)) return false;
  out->dx = FromBuffer(dx, n, c.dtype);
  out->dgamma = FromBuffer(dgamma, d, c.param_dtype);
  if (layer) out->dbeta = FromBuffer(dbeta, d, c.param_dtype);
  return true;
}

// What every output's judging shares: the bound models, each row's bounds,
// and which rows are in the claimed range or undefined.
struct RowContext {
  BoundModel model, tmodel;  // the claim, and the statistical tier's model
  TypicalTier tier = TypicalTier::kOff;
  bool typical = false;
  std::vector<RowBound> rb, rbt;  // per row; rbt only with the tier on
  // Rows outside the claimed range (RowInClaimedRange, bounds.h): finite,
  // with sum x^2 > max_row_sumsq, or ill-conditioned for the algorithm.
  std::vector<bool> in_range;
  // Rows whose exact result is undefined: finite, sigma^2 + eps = 0 (a
  // constant row with eps = 0; RMSNorm: a zero row). The oracle's NaN there
  // is 0/0, which no finite-in, finite-out kernel can be asked to reproduce.
  std::vector<bool> undefined;
  bool any_undefined = false;
  // y = gamma xhat + beta forms gamma xhat in the accumulation format: a
  // kernel that states a claimed range (finite max_row_sumsq) claims y only
  // where a finite gamma has |gamma_i xhat_i| at most half that format's
  // largest value (room for xhat's rounding); beyond it the product may
  // overflow where the exact y, with beta cancelling, is finite. +inf: no
  // such limit (observed kernels).
  double y_product_limit = kInf;
};

RowContext MakeRowContext(const ImplInfo& impl, const Case& c, const Reference& ref,
                          const JudgeOptions& opt, Judgement* j) {
  RowContext x;
  if (std::isfinite(impl.max_row_sumsq))
    x.y_product_limit = MaxFinite(FormatOf(impl.acc_dtype)) / 2;
  x.model = opt.model_for(impl);
  x.tier = opt.typical;
  x.typical = x.tier != TypicalTier::kOff;
  x.tmodel = TypicalModel(x.model, c.rows, c.d);
  for (std::int64_t r = 0; r < c.rows; ++r) {
    x.rb.push_back(ForwardRowBound(x.model, ref.rows[r]));
    if (x.typical) x.rbt.push_back(ForwardRowBound(x.tmodel, ref.rows[r]));
    const RowStats& st = ref.rows[r].stats;
    const bool in =
        !st.finite || (ref.row_sumsq[r] <= impl.max_row_sumsq && RowInClaimedRange(x.rb[r]));
    x.in_range.push_back(in);
    if (!in) ++j->rows_out_of_range;
    x.undefined.push_back(st.finite && st.var == 0 && c.eps == 0);
    x.any_undefined = x.any_undefined || x.undefined.back();
  }
  return x;
}

void JudgeForwardOutputs(const Case& c, const Reference& ref, const RowContext& x,
                         const KernelOutputs& out, const JudgeOptions& opt, Judgement* j) {
  const bool layer = c.norm == Norm::kLayerNorm;
  const std::int64_t d = c.d, rows = c.rows;
  const FloatFormat out_f = FormatOf(c.dtype);
  if (!out.y.empty()) {
    StartOutput(j, Output::kY, out_f);
    OutputAccumulator acc(&(*j)[Output::kY], opt.keep_elements, rows * d);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t i = 0; i < d; ++i) {
        const std::int64_t idx = r * d + i;
        const ExactValue& ev = ref.forward.y[idx];
        const ElementInput ein{ref.forward.xhat[idx], c.gamma.empty() ? 1.0 : c.gamma[i],
                               layer && !c.beta.empty() ? c.beta[i] : 0.0, ev.hi + ev.lo};
        const double b = ForwardElementBound(x.model, ref.rows[r], x.rb[r], ein);
        const double bt =
            x.typical ? ForwardElementBound(x.tmodel, ref.rows[r], x.rbt[r], ein) : kInf;
        // (A finite gamma only: an infinite one is the IEEE contract's.)
        const bool in = x.in_range[r] && !(std::isfinite(ein.gamma) &&
                                           std::fabs(ein.gamma * ein.xhat) > x.y_product_limit);
        acc.Add(WithTypical(JudgeElement(idx, out.y[idx], ev, b, out_f, in, x.undefined[r]), bt,
                            x.tier));
      }
    }
  }
  // mean and rstd: one binary32 value per row.
  const auto stat = [&](Output o, const std::vector<double>& k,
                        const std::vector<ExactValue>& exact, double RowBound::*bound) {
    StartOutput(j, o, kBinary32);
    OutputAccumulator acc(&(*j)[o], opt.keep_elements, rows);
    for (std::int64_t r = 0; r < rows; ++r) {
      acc.Add(WithTypical(
          JudgeElement(r, k[r], exact[r], x.rb[r].*bound, kBinary32, x.in_range[r], x.undefined[r]),
          x.typical ? x.rbt[r].*bound : kInf, x.tier));
    }
  };
  if (layer && !out.mean.empty()) stat(Output::kMean, out.mean, ref.forward.mean, &RowBound::mean);
  if (!out.rstd.empty()) stat(Output::kRstd, out.rstd, ref.forward.rstd, &RowBound::rstd);
}

// The backward's claimed range (ImplInfo::max_backward_weight): each row's
// weight W = sum |dy gamma| (1 + |xhat|), and each column's weight
// sum |dy| (1 + |xhat|), from the inputs and the exact xhat. (NaN for a row
// holding NaN: it stays in range, under the NaN contract.) dbeta = sum dy
// involves no xhat: a row of x holding NaN or +-inf adds |dy| to its
// column's dbeta weight (found by fuzz_ln: the NaN weight had kept a column
// whose float sum of dy overflows in range). dx also needs
// rstd W within the limit: dx = rstd ((g - a) - xhat b) multiplies the
// bracket, bounded by a multiple of W, by the kernel's rstd, which its claim
// puts within (1 + rstd_rel) of the exact one (impls/cpu/valid_range.h).
struct BackwardRange {
  std::vector<bool> row_in_range;
  std::vector<bool> dx_in_range;
  std::vector<double> col_weight;
  std::vector<double> dbeta_weight;
};

BackwardRange BackwardRangeOf(const ImplInfo& impl, const Case& c, const Reference& ref,
                              const RowContext& x, const std::vector<BackwardRowBound>& bb) {
  const std::int64_t d = c.d;
  BackwardRange br{x.in_range, x.in_range, std::vector<double>(static_cast<std::size_t>(d), 0.0),
                   std::vector<double>(static_cast<std::size_t>(d), 0.0)};
  for (std::int64_t r = 0; r < c.rows; ++r) {
    double w = 0.0;
    for (std::int64_t i = 0; i < d; ++i) {
      const std::int64_t idx = r * d + i;
      const double spread = 1.0 + std::fabs(ref.forward.xhat[idx]);
      const double ady = std::fabs(c.dy[idx]);
      w += ady * std::fabs(c.gamma.empty() ? 1.0 : c.gamma[i]) * spread;
      br.col_weight[i] += ady * spread;
      br.dbeta_weight[i] += ady * (std::isnan(spread) ? 1.0 : spread);
    }
    if (w > impl.max_backward_weight) br.row_in_range[r] = false;
    // The kernel's rstd, within its claim of the exact one (bb[r].rstd_rel).
    const double rstd = ref.forward.stats[r].rstd * (1 + bb[r].rstd_rel);
    if (!br.row_in_range[r] || w * rstd > impl.max_backward_weight) br.dx_in_range[r] = false;
  }
  return br;
}

void JudgeDx(const Case& c, const Reference& ref, const RowContext& x, const BackwardRange& br,
             const std::vector<BackwardRowBound>& bb, const std::vector<BackwardRowBound>& bbt,
             const KernelOutputs& out, const JudgeOptions& opt, Judgement* j) {
  const std::int64_t d = c.d;
  const FloatFormat out_f = FormatOf(c.dtype);
  StartOutput(j, Output::kDx, out_f);
  OutputAccumulator acc(&(*j)[Output::kDx], opt.keep_elements, c.rows * d);
  for (std::int64_t r = 0; r < c.rows; ++r) {
    for (std::int64_t i = 0; i < d; ++i) {
      const std::int64_t idx = r * d + i;
      const ExactValue& ev = ref.backward->dx[idx];
      const double g = c.dy[idx] * (c.gamma.empty() ? 1.0 : c.gamma[i]);
      const DxElementInput ein{ref.forward.xhat[idx], g, ev.hi + ev.lo};
      const double b = DxElementBound(x.model, ref.rows[r], ref.backward_rows[r], bb[r], ein);
      const double bt =
          x.typical ? DxElementBound(x.tmodel, ref.rows[r], ref.backward_rows[r], bbt[r], ein)
                    : kInf;
      acc.Add(WithTypical(
          JudgeElement(idx, out.dx[idx], ev, b, out_f, br.dx_in_range[r], x.undefined[r]), bt,
          x.tier));
    }
  }
}

// The columns' inputs of the dgamma and dbeta bounds, under the claim's model
// and (typical != nullptr) the statistical tier's.
std::vector<ColumnInput> Columns(const Case& c, const Reference& ref,
                                 const std::vector<BackwardRowBound>& bb,
                                 std::vector<BackwardRowBound> const* bbt,
                                 std::vector<double>* typical_xhat_err) {
  const std::int64_t d = c.d;
  std::vector<ColumnInput> cols(static_cast<std::size_t>(d));
  if (bbt != nullptr) typical_xhat_err->assign(static_cast<std::size_t>(d), 0.0);
  for (std::int64_t i = 0; i < d; ++i) {
    ColumnInput& col = cols[i];
    col.rows = c.rows;
    for (std::int64_t r = 0; r < c.rows; ++r) {
      const std::int64_t idx = r * d + i;
      const double ady = std::fabs(c.dy[idx]);
      col.sum_abs_dy += ady;
      // A row holding NaN or +-inf adds dy (+-0) exactly to the dgamma
      // columns of its finite elements (RMSNorm: r = 0 there) and NaN to
      // the others, whose exact value is then NaN: the other rows bound
      // the column. (dbeta = sum dy takes every row.)
      if (!ref.forward.stats[r].finite) continue;
      const double xh = ref.forward.xhat[idx];
      col.sum_abs_dy_xhat += ady * std::fabs(xh);
      col.sum_abs_dy_xhat_err += ady * XhatError(bb[r], xh);
      if (bbt != nullptr) (*typical_xhat_err)[i] += ady * XhatError((*bbt)[r], xh);
    }
    col.dgamma = ref.backward->dgamma[i].hi + ref.backward->dgamma[i].lo;
    if (c.norm == Norm::kLayerNorm)
      col.dbeta = ref.backward->dbeta[i].hi + ref.backward->dbeta[i].lo;
  }
  return cols;
}

void JudgeParamGradients(const ImplInfo& impl, const Case& c, const Reference& ref,
                         const RowContext& x, const BackwardRange& br,
                         const std::vector<BackwardRowBound>& bb,
                         const std::vector<BackwardRowBound>& bbt, const KernelOutputs& out,
                         const JudgeOptions& opt, Judgement* j) {
  const FloatFormat param_f = FormatOf(c.param_dtype);
  std::vector<double> typical_xhat_err;
  const std::vector<ColumnInput> cols =
      Columns(c, ref, bb, x.typical ? &bbt : nullptr, &typical_xhat_err);
  // The same column under the statistical tier's model.
  const auto typical_col = [&](std::int64_t i) {
    ColumnInput col = cols[i];
    col.sum_abs_dy_xhat_err = typical_xhat_err[i];
    return col;
  };
  // A column sums every row: it is in range only when every row is.
  const bool all_in_range = j->rows_out_of_range == 0;
  if (!out.dgamma.empty()) {
    StartOutput(j, Output::kDgamma, param_f);
    OutputAccumulator acc(&(*j)[Output::kDgamma], opt.keep_elements, c.d);
    for (std::int64_t i = 0; i < c.d; ++i) {
      const bool in = all_in_range && !(br.col_weight[i] > impl.max_backward_weight);
      acc.Add(WithTypical(JudgeElement(i, out.dgamma[i], ref.backward->dgamma[i],
                                       DgammaBound(x.model, cols[i]), param_f, in, x.any_undefined),
                          x.typical ? DgammaBound(x.tmodel, typical_col(i)) : kInf, x.tier));
    }
  }
  if (c.norm == Norm::kLayerNorm && !out.dbeta.empty()) {
    StartOutput(j, Output::kDbeta, param_f);
    OutputAccumulator acc(&(*j)[Output::kDbeta], opt.keep_elements, c.d);
    for (std::int64_t i = 0; i < c.d; ++i) {
      // dbeta = sum dy involves neither x nor the statistics: a row outside
      // the claimed range does not take its column out (only the weight does).
      const bool in = !(br.dbeta_weight[i] > impl.max_backward_weight);
      acc.Add(WithTypical(JudgeElement(i, out.dbeta[i], ref.backward->dbeta[i],
                                       DbetaBound(x.model, cols[i]), param_f, in, false),
                          x.typical ? DbetaBound(x.tmodel, typical_col(i)) : kInf, x.tier));
    }
  }
}

void JudgeBackwardOutputs(const ImplInfo& impl, const Case& c, const Reference& ref,
                          const RowContext& x, const KernelOutputs& out, const JudgeOptions& opt,
                          Judgement* j) {
  std::vector<BackwardRowBound> bb, bbt;
  for (std::int64_t r = 0; r < c.rows; ++r) {
    bb.push_back(BackwardRowBoundFor(x.model, ref.rows[r], x.rb[r], ref.backward_rows[r]));
    if (x.typical) {
      bbt.push_back(BackwardRowBoundFor(x.tmodel, ref.rows[r], x.rbt[r], ref.backward_rows[r]));
    }
  }
  const BackwardRange br = BackwardRangeOf(impl, c, ref, x, bb);
  if (!out.dx.empty()) JudgeDx(c, ref, x, br, bb, bbt, out, opt, j);
  if (!out.dgamma.empty() || !out.dbeta.empty()) {
    JudgeParamGradients(impl, c, ref, x, br, bb, bbt, out, opt, j);
  }
}

std::string SizeError(const char* name, std::size_t got, std::int64_t want) {
  if (got == 0 || static_cast<std::int64_t>(got) == want) return "";
  return std::string(name) + " has " + std::to_string(got) + " values, expected " +
         std::to_string(want) + " (or none)";
}

}  // namespace

std::string CheckOutputsShape(const Case& c, const KernelOutputs& out) {
  const bool layer = c.norm == Norm::kLayerNorm;
  const bool backward = !c.dy.empty();
  for (const std::string& e : {SizeError("y", out.y.size(), c.rows * c.d),
                               SizeError("mean", out.mean.size(), layer ? c.rows : 0),
                               SizeError("rstd", out.rstd.size(), c.rows),
                               SizeError("dx", out.dx.size(), backward ? c.rows * c.d : 0),
                               SizeError("dgamma", out.dgamma.size(), backward ? c.d : 0),
                               SizeError("dbeta", out.dbeta.size(), backward && layer ? c.d : 0)}) {
    if (!e.empty()) return e;
  }
  return "";
}

Judgement JudgeOutputs(const ImplInfo& claim, const Case& c, const Reference& ref,
                       const KernelOutputs& out, const JudgeOptions& opt) {
  assert(CheckOutputsShape(c, out).empty());
  Judgement j;
  for (Output o : kAllOutputs) j[o].output = o;
  const RowContext x = MakeRowContext(claim, c, ref, opt, &j);
  JudgeForwardOutputs(c, ref, x, out, opt, &j);
  if (!c.dy.empty() && ref.backward) JudgeBackwardOutputs(claim, c, ref, x, out, opt, &j);
  Finish(&j);
  return j;
}

Judgement JudgeWithReference(const ImplInfo& impl, const Case& c, const Reference& ref,
                             const JudgeOptions& opt) {
  assert(CheckCompatible(impl, c).empty());
  Judgement j;
  for (Output o : kAllOutputs) j[o].output = o;
  KernelOutputs out;
  if (!RunForward(impl, c, opt, &out, &j)) return j;
  // The backward runs from this kernel's own mean/rstd.
  Judgement call;
  const bool backward_ok = c.dy.empty() || impl.backward == nullptr || !ref.backward ||
                           RunBackward(impl, c, opt, &out, &call);
  j = JudgeOutputs(impl, c, ref, out, opt);
  if (!backward_ok) {
    j.verdict = std::max(j.verdict, call.verdict);
    j.message = call.message;
  }
  return j;
}

namespace {
std::string Percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", 100 * fraction);
  return buf;
}
}  // namespace

// "" when every output of a claims_bound kernel holds a claim on all but
// kMaxUnclaimedFraction of its elements on the random-data families; else
// which outputs do not, and by how much.
std::string NotJudgedReason(const std::array<std::int64_t, 6>& count,
                            const std::array<std::int64_t, 6>& unclaimed) {
  std::string why;
  for (Output o : kAllOutputs) {
    const int i = static_cast<int>(o);
    if (count[i] == 0) continue;
    const double fraction = static_cast<double>(unclaimed[i]) / static_cast<double>(count[i]);
    if (fraction <= kMaxUnclaimedFraction) continue;
    if (!why.empty()) why += ", ";
    why += std::string(OutputName(o)) + " " + Percent(fraction) + "%";
  }
  if (why.empty()) return why;
  return why + " of elements without a claim on the random-data families (at most " +
         Percent(kMaxUnclaimedFraction) + "% may be)";
}

std::string Summarize(const Judgement& j) {
  std::string s;
  char buf[160];
  for (const OutputResult& o : j.outputs) {
    if (!o.present) continue;
    if (!s.empty()) s += "; ";
    std::snprintf(buf, sizeof buf, "%s %.4g ulp, use %.4g",
                  std::string(OutputName(o.output)).c_str(), o.max_ulp, o.max_bound_use);
    s += buf;
    if (o.verdict != Verdict::kPass) {
      s += ' ';
      s += VerdictName(o.verdict);
    }
  }
  if (!j.message.empty()) {
    if (!s.empty()) s += "; ";
    s += j.message;
  }
  s += " -> ";
  s += VerdictName(j.verdict);
  return s;
}

}  // namespace lnv
