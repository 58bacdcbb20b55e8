#include "properties/finite_difference.h"

#include <cmath>
#include <cstdio>

#include "harness/judge.h"

namespace lnv::props {
namespace {

constexpr int kHalvings = 5;
constexpr int kStepBelowSigma = 10;  // h0 = 2^(floor(log2 sigma) - 10)
// Five halvings shrink an O(h^2) error 1024-fold; demand 16-fold.
constexpr double kRequiredShrink = 1.0 / 16;

Case Binary64ForwardOnly(Case c) {
  c.dtype = DType::kF64;
  c.param_dtype = DType::kF64;
  c.dy.clear();
  return c;
}

// L = sum_j dy_j y_j on the oracle's binary64 outputs.
Approx Loss(const Case& forward_only, const std::vector<double>& dy) {
  const Reference ref = ComputeReference(forward_only);
  Approx l = Exact(0);
  for (std::size_t j = 0; j < dy.size(); ++j) {
    l = l + Exact(dy[j]) * FromOracle(ref.forward.y[j], kBinary64);
  }
  return l;
}

std::string Describe(const char* what, std::int64_t i, const Approx& exact, const Approx& fd0,
                     const Approx& fd_last, double e0, double e_last) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%s[%lld]: backward %.17g, central differences %.17g (h0) ... %.17g (h0/%d); "
                "the error went from %.3g to %.3g, not down like h^2",
                what, static_cast<long long>(i), exact.v, fd0.v, fd_last.v, 1 << kHalvings, e0,
                e_last);
  return buf;
}

}  // namespace

FiniteDifferenceResult CheckAgainstFiniteDifferences(const Case& c,
                                                     const std::vector<Approx>* dx_instead) {
  FiniteDifferenceResult out;
  if (c.rows != 1 || c.d < 2 || c.dy.empty()) {
    out.message = "needs one row, d >= 2 and dy";
    return out;
  }
  Case base = Binary64ForwardOnly(c);
  if (base.gamma.empty()) base.gamma.assign(static_cast<std::size_t>(c.d), 1.0);
  Case with_dy = base;
  with_dy.dy = c.dy;
  const Reference exact = ComputeReference(with_dy);
  const RowStats& s = exact.forward.stats[0];
  if (!s.finite || !(s.var > 0) || !std::isfinite(s.rstd)) {
    out.message = "not a differentiable point (sigma^2 = 0 or non-finite)";
    return out;
  }
  const int e0 = std::ilogb(std::sqrt(s.var)) - kStepBelowSigma;

  // dx by central differences in x.
  for (std::int64_t i = 0; i < c.d; ++i) {
    const Approx grad =
        dx_instead != nullptr ? (*dx_instead)[i] : FromOracle(exact.backward->dx[i], kBinary64);
    Approx first{}, last{};
    Approx first_fd{}, last_fd{};
    for (int k = 0; k <= kHalvings; ++k) {
      const double h = std::ldexp(1.0, e0 - k);
      Case plus = base, minus = base;
      plus.x[i] += h;
      minus.x[i] -= h;
      if (plus.x[i] - h != c.x[i] || minus.x[i] + h != c.x[i]) {
        out.message = "x +- h is not exact in binary64";
        return out;
      }
      const Approx fd = (Loss(plus, c.dy) - Loss(minus, c.dy)) / Exact(2 * h);
      const Approx err = Abs(fd - grad);
      if (k == 0) {
        first = err;
        first_fd = fd;
      }
      last = err;
      last_fd = fd;
    }
    // The last error must be at most 1/16 of the first, up to both errors' rounding floors.
    const double allowed = kRequiredShrink * (first.v + first.err) + last.err;
    if (last.v > allowed * kErrorSlack) {
      out.checked = true;
      out.message = Describe("dx", i, grad, first_fd, last_fd, first.v, last.v);
      return out;
    }
  }

  // dgamma: L is linear in gamma, so one step is exact up to rounding.
  for (std::int64_t j = 0; j < c.d; ++j) {
    const double h = 0x1p-10;
    Case plus = base, minus = base;
    plus.gamma[j] += h;
    minus.gamma[j] -= h;
    const Approx fd = (Loss(plus, c.dy) - Loss(minus, c.dy)) / Exact(2 * h);
    const Approx grad = FromOracle(exact.backward->dgamma[j], kBinary64);
    if (!Within(fd, grad, 0)) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "dgamma[%lld]: backward %.17g, central difference %.17g",
                    static_cast<long long>(j), grad.v, fd.v);
      out.checked = true;
      out.message = buf;
      return out;
    }
  }
  out.checked = true;
  return out;
}

}  // namespace lnv::props
