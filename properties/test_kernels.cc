#include "properties/test_kernels.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace lnv::props {
namespace {

const ImplInfo& Correct() {
  static const ImplInfo* k = [] {
    for (const ImplInfo& i : AllImpls()) {
      if (i.name == "f32/two_pass/cpu-scalar") return &i;
    }
    return static_cast<const ImplInfo*>(nullptr);
  }();
  return *k;
}

int GammaReversedForward(const ForwardArgs* a) {
  if (a->gamma == nullptr) return Correct().forward(a);
  const auto* g = static_cast<const float*>(a->gamma);
  std::vector<float> reversed(g, g + a->d);
  std::reverse(reversed.begin(), reversed.end());
  ForwardArgs b = *a;
  b.gamma = reversed.data();
  return Correct().forward(&b);
}

int GammaReversedBackward(const BackwardArgs* a) {
  if (a->gamma == nullptr) return Correct().backward(a);
  const auto* g = static_cast<const float*>(a->gamma);
  std::vector<float> reversed(g, g + a->d);
  std::reverse(reversed.begin(), reversed.end());
  BackwardArgs b = *a;
  b.gamma = reversed.data();
  return Correct().backward(&b);
}

// y = gamma (xhat + beta) = gamma xhat + gamma beta.
int BetaBeforeGammaForward(const ForwardArgs* a) {
  if (a->gamma == nullptr || a->beta == nullptr) return Correct().forward(a);
  const auto* g = static_cast<const float*>(a->gamma);
  const auto* b = static_cast<const float*>(a->beta);
  std::vector<float> gb(static_cast<std::size_t>(a->d));
  for (std::int64_t i = 0; i < a->d; ++i) gb[i] = g[i] * b[i];
  ForwardArgs c = *a;
  c.beta = gb.data();
  return Correct().forward(&c);
}

std::vector<float> Sanitized(const void* x, std::int64_t n) {
  const auto* v = static_cast<const float*>(x);
  std::vector<float> out(v, v + n);
  for (float& f : out) {
    if (!std::isfinite(f)) f = 0.0f;
  }
  return out;
}

int NanRowsZeroedForward(const ForwardArgs* a) {
  const std::vector<float> x = Sanitized(a->x, a->rows * a->d);
  ForwardArgs b = *a;
  b.x = x.data();
  return Correct().forward(&b);
}

int NanRowsZeroedBackward(const BackwardArgs* a) {
  const std::vector<float> x = Sanitized(a->x, a->rows * a->d);
  BackwardArgs b = *a;
  b.x = x.data();
  return Correct().backward(&b);
}

// Every other call, the rows in reverse order: dx is the same, dgamma and
// dbeta are summed in the other order (different rounding, same bound).
int NondeterministicDgammaBackward(const BackwardArgs* a) {
  static int calls = 0;
  if (++calls % 2 == 1 || a->rows < 2 || a->mean == nullptr || a->rstd == nullptr) {
    return Correct().backward(a);
  }
  const std::int64_t rows = a->rows, d = a->d;
  std::vector<float> x(rows * d), dy(rows * d), dx(rows * d), mean(rows), rstd(rows);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t from = (rows - 1 - r) * d;
    std::copy_n(static_cast<const float*>(a->x) + from, d, x.begin() + r * d);
    std::copy_n(static_cast<const float*>(a->dy) + from, d, dy.begin() + r * d);
    mean[r] = a->mean[rows - 1 - r];
    rstd[r] = a->rstd[rows - 1 - r];
  }
  BackwardArgs b = *a;
  b.x = x.data();
  b.dy = dy.data();
  b.mean = mean.data();
  b.rstd = rstd.data();
  b.dx = dx.data();
  const int rc = Correct().backward(&b);
  for (std::int64_t r = 0; r < rows; ++r) {
    std::copy_n(dx.begin() + r * d, d, static_cast<float*>(a->dx) + (rows - 1 - r) * d);
  }
  return rc;
}

DoctoredKernel Doctored(const char* defect, ForwardFn f, BackwardFn b, const char* property) {
  DoctoredKernel k;
  k.info = Correct();
  k.info.name = std::string("f32/") + defect + "/test-fake";
  k.info.status = ImplStatus::kNegativeControl;
  k.info.forward = f;
  k.info.backward = b;
  k.info.source = "properties/test_kernels.cc";
  k.property = property;
  return k;
}

}  // namespace

const std::vector<DoctoredKernel>& DoctoredKernels() {
  static const std::vector<DoctoredKernel> kernels = {
      Doctored("gamma_reversed", &GammaReversedForward, &GammaReversedBackward,
               "PermutingFeaturesPermutesTheOutputs"),
      Doctored("beta_before_gamma", &BetaBeforeGammaForward, Correct().backward,
               "TheOutputIsGammaTimesXhatPlusBeta"),
      Doctored("nan_rows_zeroed", &NanRowsZeroedForward, &NanRowsZeroedBackward,
               "SpecialValuesStayInTheirRowAndFiniteRowsStayFinite"),
      Doctored("nondeterministic_dgamma", Correct().forward, &NondeterministicDgammaBackward,
               "EachRowDependsOnThatRowAlone"),
  };
  return kernels;
}

}  // namespace lnv::props
