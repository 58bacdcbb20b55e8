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

// Row r of a forward call, by the correct kernel alone on that row, with
// the row (x, gamma, beta) reversed when `reversed`: its sums then run in
// the other order, which rounds differently within the same bound.
int ForwardOneRow(const ForwardArgs* a, std::int64_t r, bool reversed) {
  const std::int64_t d = a->d;
  const auto copy = [&](const void* p, std::int64_t offset) {
    const auto* v = static_cast<const float*>(p) + offset;
    std::vector<float> out(v, v + d);
    if (reversed) std::reverse(out.begin(), out.end());
    return out;
  };
  const std::vector<float> x = copy(a->x, r * d);
  const std::vector<float> gamma = a->gamma != nullptr ? copy(a->gamma, 0) : std::vector<float>();
  const std::vector<float> beta = a->beta != nullptr ? copy(a->beta, 0) : std::vector<float>();
  std::vector<float> y(static_cast<std::size_t>(d));
  ForwardArgs b = *a;
  b.rows = 1;
  b.x = x.data();
  b.gamma = a->gamma != nullptr ? gamma.data() : nullptr;
  b.beta = a->beta != nullptr ? beta.data() : nullptr;
  b.y = y.data();
  b.mean = a->mean != nullptr ? a->mean + r : nullptr;
  b.rstd = a->rstd != nullptr ? a->rstd + r : nullptr;
  const int rc = Correct().forward(&b);
  if (reversed) std::reverse(y.begin(), y.end());
  std::copy(y.begin(), y.end(), static_cast<float*>(a->y) + r * d);
  return rc;
}

// The magnitude where MagnitudeThresholdForward switches its order.
constexpr float kHiddenThreshold = 0x1p20f;

// Rows whose largest |x| reaches 2^20 take "another path" (here: the sums in
// the other order): exact power-of-two scaling across 2^20 changes the bits.
int MagnitudeThresholdForward(const ForwardArgs* a) {
  for (std::int64_t r = 0; r < a->rows; ++r) {
    const auto* x = static_cast<const float*>(a->x) + r * a->d;
    float max_abs = 0;
    for (std::int64_t i = 0; i < a->d; ++i) max_abs = std::max(max_abs, std::fabs(x[i]));
    if (const int rc = ForwardOneRow(a, r, max_abs >= kHiddenThreshold); rc != 0) return rc;
  }
  return 0;
}

// Batches of two or more rows sum each row in the other order (an algorithm
// chosen by the batch size): a row alone and in a batch differ in bits.
int BatchSizeDependentForward(const ForwardArgs* a) {
  for (std::int64_t r = 0; r < a->rows; ++r) {
    if (const int rc = ForwardOneRow(a, r, a->rows >= 2); rc != 0) return rc;
  }
  return 0;
}

DoctoredKernel Doctored(const char* defect, ForwardFn f, BackwardFn b, const char* property,
                        const char* check = "") {
  DoctoredKernel k;
  k.info = Correct();
  k.info.name = std::string("f32/") + defect + "/test-fake";
  k.info.status = ImplStatus::kNegativeControl;
  k.info.forward = f;
  k.info.backward = b;
  k.info.source = "properties/test_kernels.cc";
  k.property = property;
  k.check = check;
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
      Doctored("magnitude_threshold", &MagnitudeThresholdForward, Correct().backward,
               "ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged", ", bit for bit: "),
      Doctored("batch_size_dependent_order", &BatchSizeDependentForward, Correct().backward,
               "EachRowDependsOnThatRowAlone", "changed the bits of row"),
  };
  return kernels;
}

}  // namespace lnv::props
