// The arithmetic every broken kernel shares with the two-pass reference
// (impls/cpu/two_pass.h): serial two-pass row statistics in float, xhat =
// (x - mean) * rstd, y = gamma * xhat + beta, and the backward dx = rstd *
// ((g - a) - xhat * b) from the forward's stored mean/rstd. A broken kernel
// changes exactly one step through its Policy and keeps everything else
// correct, so that whatever catches it catches that one bug.
//
// Private to impls/broken: include it only from the kernels' .cc files.
#ifndef LNV_IMPLS_BROKEN_BROKEN_COMMON_H_
#define LNV_IMPLS_BROKEN_BROKEN_COMMON_H_

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "impls/api.h"
#include "impls/dtype.h"

namespace lnv::broken {

inline constexpr int kOk = 0;
inline constexpr int kInvalidArgs = 1;

// A block of consecutive elements, [begin, end).
struct Span {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

// The correct steps; a broken kernel's policy derives from this and hides one.
struct Correct {
  // The elements of an n-element reduction that the statistics see, block
  // by block; the mean and the variance divide by the total count of what
  // they see, so a dropped or repeated block leaves iid rows' statistics
  // nearly unchanged (the bugs this imitates keep their counts consistent).
  static std::vector<Span> Seen(std::int64_t n) { return {{0, n}}; }
  // The row whose statistics row r of a rows-row batch is normalized with.
  static std::int64_t StatisticsRow(std::int64_t r, std::int64_t /*rows*/) { return r; }
  // The biased variance: the sum of squared deviations over n.
  static float Variance(float m2, std::int64_t n) { return m2 / static_cast<float>(n); }
  static float Rstd(float var, float eps) { return 1.0f / std::sqrt(var + eps); }
  static constexpr bool kDxHasXhatTerm = true;
  static constexpr bool kStatisticsOverBatch = false;
};

// Two-pass mean and variance of n consecutive elements from `begin` (of
// those the policy sees).
template <DType kX, typename Policy>
std::pair<float, float> TwoPassStats(const void* x, std::int64_t begin, std::int64_t n) {
  const std::vector<Span> seen = Policy::Seen(n);
  std::int64_t count = 0;
  float s = 0.0f;
  for (const Span& b : seen) {
    for (std::int64_t i = b.begin; i < b.end; ++i) s = s + LoadAsFloat(x, kX, begin + i);
    count += b.end - b.begin;
  }
  const float mean = s / static_cast<float>(count);
  float m2 = 0.0f;
  for (const Span& b : seen) {
    for (std::int64_t i = b.begin; i < b.end; ++i) {
      const float dev = LoadAsFloat(x, kX, begin + i) - mean;
      m2 = m2 + dev * dev;
    }
  }
  return {mean, Policy::Variance(m2, count)};
}

template <DType kX, typename Policy>
int Forward(const ForwardArgs* a) {
  if (a == nullptr || a->rows < 0 || a->d < 1 || a->x == nullptr || a->y == nullptr) {
    return kInvalidArgs;
  }
  const std::int64_t d = a->d;
  std::pair<float, float> batch{0.0f, 0.0f};
  if (Policy::kStatisticsOverBatch && a->rows > 0) {
    batch = TwoPassStats<kX, Policy>(a->x, 0, a->rows * d);
  }
  for (std::int64_t r = 0; r < a->rows; ++r) {
    const std::int64_t off = r * d;
    const std::int64_t stats_off = Policy::StatisticsRow(r, a->rows) * d;
    const auto [mean, var] =
        Policy::kStatisticsOverBatch ? batch : TwoPassStats<kX, Policy>(a->x, stats_off, d);
    const float rstd = Policy::Rstd(var, a->eps);
    for (std::int64_t i = 0; i < d; ++i) {
      const float xhat = (LoadAsFloat(a->x, kX, off + i) - mean) * rstd;
      float v = a->gamma != nullptr ? LoadAsFloat(a->gamma, kX, i) * xhat : xhat;
      if (a->beta != nullptr) v = v + LoadAsFloat(a->beta, kX, i);
      StoreFromFloat(a->y, kX, off + i, v);
    }
    if (a->mean != nullptr) a->mean[r] = mean;
    if (a->rstd != nullptr) a->rstd[r] = rstd;
  }
  return kOk;
}

template <DType kX, typename Policy>
int Backward(const BackwardArgs* a) {
  if (a == nullptr || a->rows < 0 || a->d < 1 || a->x == nullptr || a->dy == nullptr ||
      a->dx == nullptr || a->mean == nullptr || a->rstd == nullptr) {
    return kInvalidArgs;
  }
  const std::int64_t d = a->d;
  const float n = static_cast<float>(d);
  std::vector<float> xhat(d), g(d);
  std::vector<float> dgamma(a->dgamma != nullptr ? d : 0, 0.0f);
  std::vector<float> dbeta(a->dbeta != nullptr ? d : 0, 0.0f);
  for (std::int64_t r = 0; r < a->rows; ++r) {
    const std::int64_t off = r * d;
    const float mean = a->mean[r];
    const float rstd = a->rstd[r];
    float sum_g = 0.0f;
    float sum_g_xhat = 0.0f;
    for (std::int64_t i = 0; i < d; ++i) {
      xhat[i] = (LoadAsFloat(a->x, kX, off + i) - mean) * rstd;
      const float dy = LoadAsFloat(a->dy, kX, off + i);
      g[i] = a->gamma != nullptr ? dy * LoadAsFloat(a->gamma, kX, i) : dy;
      if (!dgamma.empty()) dgamma[i] = dgamma[i] + dy * xhat[i];
      if (!dbeta.empty()) dbeta[i] = dbeta[i] + dy;
      sum_g = sum_g + g[i];
      sum_g_xhat = sum_g_xhat + g[i] * xhat[i];
    }
    const float mean_g = sum_g / n;
    const float mean_g_xhat = sum_g_xhat / n;
    for (std::int64_t i = 0; i < d; ++i) {
      const float centered = g[i] - mean_g;
      const float v = Policy::kDxHasXhatTerm ? centered - xhat[i] * mean_g_xhat : centered;
      StoreFromFloat(a->dx, kX, off + i, rstd * v);
    }
  }
  for (std::int64_t j = 0; j < static_cast<std::int64_t>(dgamma.size()); ++j) {
    StoreFromFloat(a->dgamma, kX, j, dgamma[j]);
  }
  for (std::int64_t j = 0; j < static_cast<std::int64_t>(dbeta.size()); ++j) {
    StoreFromFloat(a->dbeta, kX, j, dbeta[j]);
  }
  return kOk;
}

}  // namespace lnv::broken

#endif  // LNV_IMPLS_BROKEN_BROKEN_COMMON_H_
