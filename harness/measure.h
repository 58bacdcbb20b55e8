// What one judged case contributes to a kernel's report: per output the
// verdict, max ULP and bound use, its worst element, a ULP histogram, and the
// per-row points that the charts draw (error and bounds in units of the row's
// largest output's ulp). Computed from harness/judge's Judgement with every
// element kept, and the case's Reference (the oracle's answer).
#ifndef LNV_HARNESS_MEASURE_H_
#define LNV_HARNESS_MEASURE_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/case_file.h"
#include "harness/judge.h"
#include "impls/registry.h"

namespace lnv {

// ULPs of elements, in bins of 1/kBinsPerOctave octave: bin b holds ulps in
// [2^(b/k), 2^((b+1)/k)). Exact results (0 ulp) and non-finite mismatches
// are counted apart. Quantiles are the upper edge of the bin that holds them,
// so they over-estimate by at most a factor 2^(1/k).
class UlpHistogram {
 public:
  static constexpr int kBinsPerOctave = 8;
  void Add(double ulps);
  void AddAll(const std::vector<double>& ulps);  // Add of each, in one pass over the bins
  void Merge(const UlpHistogram& other);
  std::int64_t total() const;  // every counted element, zeros and non-finite included
  // The smallest bin upper edge at or above a fraction q of the finite
  // elements (0 when they are all exact); +inf when q falls on the non-finite ones.
  double Quantile(double q) const;

  std::int64_t zeros = 0;
  std::int64_t nonfinite = 0;
  std::map<int, std::int64_t> bins;
};

// One row of a case, for the kappa and magnitude charts. Errors and bounds
// are max over the row's elements divided by ulp(max |exact|) of the row.
enum class PointKind : std::uint8_t {
  kJudged,      // err and bounds measured
  kOutOfRange,  // outside the kernel's claimed range: NaN contract only, no error
  kNonFinite,   // the kernel gave NaN/inf where the exact value is finite (or v.v.)
};
struct RowPoint {
  double kappa = 0.0;     // sqrt(1 + mu^2 / s2) of the row (exact statistics)
  double log2_mag = 0.0;  // log2 max |x_i|
  double err = 0.0;       // max |kernel - exact| / ulp_row
  double bound = 0.0;     // max bound / ulp_row (deterministic); +inf: no claim
  double pbound = 0.0;    // the same with the probabilistic sqrt(k) gamma (Higham & Mary)
  PointKind kind = PointKind::kJudged;
  bool failed = false;    // some element of the row broke its bound or the NaN contract
  std::int32_t item = 0;  // plan item (case) index
  std::int32_t row = 0;
};

struct OutputMeasure {
  bool present = false;
  Verdict verdict = Verdict::kPass;
  double max_ulp = 0.0;
  double max_bound_use = 0.0;
  std::int64_t count = 0, unclaimed = 0, out_of_range = 0, undecided = 0;
  std::int64_t beyond_typical = 0;     // beyond the statistical tier's bound
  std::optional<ElementResult> worst;  // a failing element, else the largest bound use
  std::int64_t worst_row = -1;         // its row (y, dx, mean, rstd), -1 for column outputs
  UlpHistogram hist;
  std::vector<RowPoint> points;  // y and dx of cases with a chart role
};

// One kernel on one case.
struct CaseMeasure {
  Verdict verdict = Verdict::kPass;
  std::string message;  // the judge's (kernel_error: which call returned what)
  std::int64_t d = 0, rows = 0;
  std::int64_t rows_out_of_range = 0;
  std::array<OutputMeasure, 6> outputs;  // indexed by Output
};

// Severity, then bound use, then ulps (the judge's order).
bool WorseElement(const ElementResult& a, const ElementResult& b);

// kappa = sqrt(1 + mu^2/s2) of a finite row: from the oracle's exact
// statistics for LayerNorm; RMSNorm has no mean, so its rows' mean and
// variance are taken in long double (only an x coordinate). +inf when s2 = 0.
double RowKappa(const Case& c, const Reference& ref, std::int64_t row);

// Summarizes a judgement (JudgeOptions::keep_elements must have been set).
// with_points: also the per-row points of y and dx, with the probabilistic
// bounds of `impl`'s model.
CaseMeasure Measure(const ImplInfo& impl, const Case& c, const Reference& ref, const Judgement& j,
                    bool with_points, std::int32_t item);

}  // namespace lnv

#endif  // LNV_HARNESS_MEASURE_H_
