#include "impls/broken/rms_skips_infinities.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace lnv::broken {
namespace {

constexpr int kOk = 0;
constexpr int kInvalidArgs = 1;

float Gamma(const void* gamma, std::int64_t i) {
  return gamma != nullptr ? static_cast<const float*>(gamma)[i] : 1.0f;
}

// The bug: +-inf is left out of the sum of squares (NaN is not: a NaN row
// stays NaN), and the sum is still divided by d.
float RowRstd(const float* x, std::int64_t d, float eps) {
  float sum_sq = 0.0f;
  for (std::int64_t i = 0; i < d; ++i) {
    if (!std::isinf(x[i])) sum_sq = sum_sq + x[i] * x[i];
  }
  return 1.0f / std::sqrt(sum_sq / static_cast<float>(d) + eps);
}

}  // namespace

int RmsSkipsInfinitiesForward(const ForwardArgs* a) {
  if (a == nullptr || a->rows < 0 || a->d < 1 || a->x == nullptr || a->y == nullptr ||
      a->beta != nullptr) {
    return kInvalidArgs;
  }
  const std::int64_t d = a->d;
  for (std::int64_t r = 0; r < a->rows; ++r) {
    const float* x = static_cast<const float*>(a->x) + r * d;
    float* y = static_cast<float*>(a->y) + r * d;
    const float rstd = RowRstd(x, d, a->eps);
    for (std::int64_t i = 0; i < d; ++i) y[i] = x[i] * rstd * Gamma(a->gamma, i);
    if (a->rstd != nullptr) a->rstd[r] = rstd;
  }
  return kOk;
}

int RmsSkipsInfinitiesBackward(const BackwardArgs* a) {
  if (a == nullptr || a->rows < 0 || a->d < 1 || a->x == nullptr || a->dy == nullptr ||
      a->dx == nullptr || a->dbeta != nullptr) {
    return kInvalidArgs;
  }
  const std::int64_t d = a->d;
  std::vector<float> xhat(static_cast<std::size_t>(d));
  std::vector<float> dgamma(static_cast<std::size_t>(d), 0.0f);
  for (std::int64_t r = 0; r < a->rows; ++r) {
    const float* x = static_cast<const float*>(a->x) + r * d;
    const float* dy = static_cast<const float*>(a->dy) + r * d;
    float* dx = static_cast<float*>(a->dx) + r * d;
    const float rstd = RowRstd(x, d, a->eps);
    float sum_g_xhat = 0.0f;
    for (std::int64_t i = 0; i < d; ++i) {
      xhat[i] = x[i] * rstd;
      sum_g_xhat = sum_g_xhat + dy[i] * Gamma(a->gamma, i) * xhat[i];
      dgamma[i] = dgamma[i] + dy[i] * xhat[i];
    }
    const float b = sum_g_xhat / static_cast<float>(d);
    for (std::int64_t i = 0; i < d; ++i) dx[i] = rstd * (dy[i] * Gamma(a->gamma, i) - xhat[i] * b);
  }
  if (a->dgamma != nullptr) {
    for (std::int64_t i = 0; i < d; ++i) static_cast<float*>(a->dgamma)[i] = dgamma[i];
  }
  return kOk;
}

}  // namespace lnv::broken
