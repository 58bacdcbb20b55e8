// ln_check's report of a run (PrintCheckReport, harness/check.h): the table,
// the summary line, and why each kernel that is not as expected is not.
#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "harness/check.h"
#include "harness/text_columns.h"

namespace lnv {
namespace {

// The largest fraction of an output's elements judged without a claim on the
// random-data families, and which output (*worst) has it.
double MaxUnclaimedFraction(const KernelSummary& k, Output* worst) {
  double max = 0.0;
  for (Output o : kAllOutputs) {
    const int i = static_cast<int>(o);
    if (k.random_count[i] == 0) continue;
    const double f = static_cast<double>(k.random_unclaimed[i]) / k.random_count[i];
    if (f > max) {
      max = f;
      *worst = o;
    }
  }
  return max;
}

void PrintTable(const std::vector<KernelSummary>& ks, std::ostream& out) {
  std::size_t wn = 6;
  for (const KernelSummary& k : ks) wn = std::max(wn, k.name.size());
  out << Pad("kernel", wn) << "  dtype  " << Pad("status", 16) << PadLeft("cases", 5)
      << PadLeft("max ULP", 11) << "  " << Pad("(of)", 7) << PadLeft("bound use", 10) << "  "
      << Pad("(of)", 7) << PadLeft("no claim", 8) << "  " << Pad("(of)", 7) << "verdict\n";
  for (const KernelSummary& k : ks) {
    Output worst = Output::kY;
    std::string verdict(VerdictName(k.verdict));
    if (k.status == ImplStatus::kNegativeControl)
      verdict += k.ok ? " (caught)" : " (NOT CAUGHT)";
    else if (k.status == ImplStatus::kObserved)
      verdict += " (baseline " + k.baseline + ")";
    else if (!k.not_judged.empty())
      verdict = "not_judged (FAILED)";
    else if (!k.ok)
      verdict += " (FAILED)";
    out << Pad(k.name, wn) << "  " << Pad(std::string(DTypeName(k.dtype)), 5) << "  "
        << Pad(std::string(StatusName(k.status)), 16) << PadLeft(std::to_string(k.cases), 5)
        << PadLeft(Fmt("%.4g", k.max_ulp), 11) << "  "
        << Pad(std::string(OutputName(k.max_ulp_output)), 7)
        << PadLeft(Fmt("%.4g", k.max_bound_use), 10) << "  "
        << Pad(std::string(OutputName(k.max_use_output)), 7)
        << PadLeft(Fmt("%.2g%%", 100 * MaxUnclaimedFraction(k, &worst)), 8) << "  "
        << Pad(std::string(OutputName(worst)), 7) << verdict << "\n";
  }
}

}  // namespace

void PrintCheckReport(const CheckOptions& opt, const CheckResult& result, std::ostream& out) {
  out << "\n";
  PrintTable(result.kernels, out);
  const std::size_t total = result.kernels.size();
  const std::size_t failed = static_cast<std::size_t>(std::count_if(
      result.kernels.begin(), result.kernels.end(), [](const KernelSummary& s) { return !s.ok; }));
  out << "\n"
      << (failed == 0 ? "ok" : "FAILED") << ": " << total - failed << "/" << total
      << " kernels as expected (claims_bound within bound, negative controls "
      << "caught, observed matching their baselines); seed " << opt.seed << "; "
      << Fmt("%.1f", result.seconds) << " s\n";
  std::int64_t unclaimed = 0, out_of_range = 0, undecided = 0;
  for (const KernelSummary& s : result.kernels) {
    unclaimed += s.unclaimed;
    out_of_range += s.out_of_range;
    undecided += s.undecided;
  }
  if (unclaimed > 0 || out_of_range > 0 || undecided > 0) {
    out << "  (elements without a claim: " << unclaimed << " with bound +inf (e.g. k u >= 1), "
        << out_of_range << " outside the claimed range (sum x^2, backward weight, or variance "
        << "error >= sigma^2 + eps); " << undecided << " left undecided by the oracle; the "
        << "\"no claim\" column is the largest share of an output on the random-data families)\n";
  }
  for (const KernelSummary& s : result.kernels) {
    if (s.beyond_typical == 0 || s.status == ImplStatus::kNegativeControl) continue;
    out << "  " << s.name << ": " << s.beyond_typical << " element(s) beyond the typical bound "
        << "(statistical tier"
        << (opt.typical == TypicalTier::kFail && s.status == ImplStatus::kClaimsBound
                ? ")"
                : ", reported only)")
        << "\n";
  }
  for (const KernelSummary& s : result.kernels) {
    if (s.ok) continue;
    out << "  " << s.name << ": "
        << (s.status == ImplStatus::kNegativeControl ? "negative control NOT caught"
            : s.status == ImplStatus::kObserved      ? "baseline " + s.baseline
            : !s.not_judged.empty()                  ? "not judged: " + s.not_judged
                                                     : s.first_failure)
        << "\n";
  }
}

}  // namespace lnv
