#include "fuzz/finding_class.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "fuzz/feedback.h"
#include "harness/formats.h"

namespace lnv::fuzz {
namespace {

// Severity order of x classes: the worst row names the class.
enum XClass { kFinite = 0, kSubnormal = 1, kHuge = 2, kInf = 3, kNan = 4 };
constexpr const char* kXNames[] = {"finite", "subnormal", "huge", "inf", "nan"};

XClass RowXClass(const Case& c, const Reference& ref, std::int64_t r, double limit) {
  const FloatFormat xf = FormatOf(c.dtype);
  bool nan = false, inf = false, sub = false;
  for (std::int64_t i = 0; i < c.d; ++i) {
    const ValueClass k = ClassOf(c.x[static_cast<std::size_t>(r * c.d + i)], xf);
    nan |= k == ValueClass::kNaN;
    inf |= k == ValueClass::kInf;
    sub |= k == ValueClass::kSubnormal;
  }
  if (nan) return kNan;
  if (inf) return kInf;
  if (ref.row_sumsq[static_cast<std::size_t>(r)] > limit) return kHuge;
  return sub ? kSubnormal : kFinite;
}

bool AllFinite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

}  // namespace

std::string FindingClass(const Case& c, const Reference& ref, Output output,
                         std::optional<std::int64_t> row, FloatFormat acc) {
  const double limit = MaxFinite(acc) / 8;
  std::vector<std::int64_t> rows;
  if (row) {
    rows.push_back(*row);
  } else {
    for (std::int64_t r = 0; r < c.rows; ++r) rows.push_back(r);
  }
  int x = kFinite;
  int kappa = 0;  // 0 moderate, 1 large, 2 constant
  bool eps_dominant = false;
  for (std::int64_t r : rows) {
    x = std::max<int>(x, RowXClass(c, ref, r, limit));
    const RowStats& s = ref.forward.stats[static_cast<std::size_t>(r)];
    const int k = KappaBucket(s);
    kappa = std::max(kappa, k == 61 ? 2 : k >= 24 ? 1 : 0);
    eps_dominant |= s.finite && s.var < c.eps;
  }
  std::string out =
      std::string(NormName(c.norm)) + "/" + std::string(DTypeName(c.dtype)) + "/x:" + kXNames[x];
  out += AllFinite(c.gamma) && AllFinite(c.beta) ? "/params:finite" : "/params:nonfinite";
  const bool backward =
      output == Output::kDx || output == Output::kDgamma || output == Output::kDbeta;
  if (backward && !c.dy.empty()) {
    bool dy_finite = true, g_huge = false;
    for (std::int64_t r : rows) {
      double sum = 0;
      for (std::int64_t i = 0; i < c.d; ++i) {
        const double dy = c.dy[static_cast<std::size_t>(r * c.d + i)];
        dy_finite &= std::isfinite(dy);
        sum += std::fabs(dy * (c.gamma.empty() ? 1.0 : c.gamma[static_cast<std::size_t>(i)]));
      }
      g_huge |= sum > limit;
    }
    if (!row) {  // column sums over the rows (dgamma, dbeta)
      for (std::int64_t i = 0; i < c.d; ++i) {
        double sum = 0;
        for (std::int64_t r = 0; r < c.rows; ++r) {
          sum += std::fabs(c.dy[static_cast<std::size_t>(r * c.d + i)] *
                           (c.gamma.empty() ? 1.0 : c.gamma[static_cast<std::size_t>(i)]));
        }
        g_huge |= sum > limit;
      }
    }
    out += dy_finite ? "/dy:finite" : "/dy:nonfinite";
    out += g_huge ? "/g:huge" : "/g:ok";
  }
  out += kappa == 2 ? "/kappa:constant" : kappa == 1 ? "/kappa:large" : "/kappa:moderate";
  out += eps_dominant ? "/eps:dominant" : "/eps:small";
  return out;
}

}  // namespace lnv::fuzz
