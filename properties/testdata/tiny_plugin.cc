// A small kernel plugin for the suite's own LNV_PLUGINS test: LayerNorm, f32,
// forward and backward, written against the plugin ABI alone
// (impls/plugin/lnv_plugin.h), as a user's library would be.
//
// Algorithm: two-pass, serial sums: mean = sum/d, var = sum (x - mean)^2 / d,
//   rstd = 1/sqrt(var + eps); y = gamma xhat + beta. A row whose largest
//   magnitude is 2^41 or more is first scaled by a power of two (exact) so
//   that its sum of squares cannot overflow; the statistics are scaled back
//   (rstd = 2^k / sqrt(var_k + eps 4^k); 1/sqrt(eps) when var_k = 0), as
//   plugins claim the full finite range.
// Accumulation: float. Backward: dx = rstd ((g - mean g) - xhat mean(g xhat))
//   from the stored mean/rstd; dgamma, dbeta summed over rows in float.
// Bound: the generic bound of its accumulation dtype (the loader's
//   plugin:<stem>/<name> entries): the two-pass serial model it follows.
// Valid range: every finite input.
#include <cmath>
#include <cstdint>
#include <vector>

#include "impls/plugin/lnv_plugin.h"

namespace {

constexpr int kScaleAbove = 41;  // ilogb(max|x|) above which the row is scaled

int Forward(const lnv_forward_args* a) {
  if (a == nullptr || a->d < 1 || a->rows < 0 || a->x == nullptr || a->y == nullptr) return 1;
  const auto* x = static_cast<const float*>(a->x);
  const auto* gamma = static_cast<const float*>(a->gamma);
  const auto* beta = static_cast<const float*>(a->beta);
  auto* y = static_cast<float*>(a->y);
  const std::int64_t d = a->d;
  std::vector<float> xs(static_cast<std::size_t>(d));
  for (std::int64_t r = 0; r < a->rows; ++r) {
    const float* row = x + r * d;
    float big = 0.0f;
    for (std::int64_t i = 0; i < d; ++i) big = std::fmax(big, std::fabs(row[i]));
    const int k = std::isfinite(big) && big > 0 && std::ilogb(big) > kScaleAbove
                      ? kScaleAbove - std::ilogb(big)
                      : 0;
    for (std::int64_t i = 0; i < d; ++i) xs[i] = std::ldexp(row[i], k);
    float s = 0.0f;
    for (std::int64_t i = 0; i < d; ++i) s = s + xs[i];
    const float mean = s / static_cast<float>(d);
    float m2 = 0.0f;
    for (std::int64_t i = 0; i < d; ++i) {
      const float dev = xs[i] - mean;
      m2 = m2 + dev * dev;
    }
    const float var = m2 / static_cast<float>(d);
    // In scaled units rstd_k = 2^-k rstd = 1/sqrt(var_k + eps 4^k). A scaled
    // row has var_k = 0 or var_k >= 2^30 (its spacing is 2^18 or more), so
    // eps 4^k, which may underflow, matters only when var_k = 0: then
    // rstd = 1/sqrt(eps), computed unscaled.
    const float rstd = var == 0 && k != 0 ? std::ldexp(1.0f / std::sqrt(a->eps), -k)
                                          : 1.0f / std::sqrt(var + std::ldexp(a->eps, 2 * k));
    for (std::int64_t i = 0; i < d; ++i) {
      const float xhat = (xs[i] - mean) * rstd;
      float v = gamma != nullptr ? gamma[i] * xhat : xhat;
      if (beta != nullptr) v = v + beta[i];
      y[r * d + i] = v;
    }
    if (a->mean != nullptr) a->mean[r] = std::ldexp(mean, -k);
    if (a->rstd != nullptr) a->rstd[r] = std::ldexp(rstd, k);
  }
  return 0;
}

int Backward(const lnv_backward_args* a) {
  if (a == nullptr || a->d < 1 || a->rows < 0 || a->x == nullptr || a->dy == nullptr ||
      a->dx == nullptr || a->mean == nullptr || a->rstd == nullptr) {
    return 1;
  }
  const auto* x = static_cast<const float*>(a->x);
  const auto* dy = static_cast<const float*>(a->dy);
  const auto* gamma = static_cast<const float*>(a->gamma);
  auto* dx = static_cast<float*>(a->dx);
  auto* dgamma = static_cast<float*>(a->dgamma);
  auto* dbeta = static_cast<float*>(a->dbeta);
  const std::int64_t d = a->d;
  std::vector<float> xhat(d), g(d), sum_dgamma(d, 0.0f), sum_dbeta(d, 0.0f);
  for (std::int64_t r = 0; r < a->rows; ++r) {
    float sg = 0.0f, sgx = 0.0f;
    for (std::int64_t i = 0; i < d; ++i) {
      xhat[i] = (x[r * d + i] - a->mean[r]) * a->rstd[r];
      g[i] = gamma != nullptr ? dy[r * d + i] * gamma[i] : dy[r * d + i];
      sum_dgamma[i] = sum_dgamma[i] + dy[r * d + i] * xhat[i];
      sum_dbeta[i] = sum_dbeta[i] + dy[r * d + i];
      sg = sg + g[i];
      sgx = sgx + g[i] * xhat[i];
    }
    const float a_mean = sg / static_cast<float>(d);
    const float b_mean = sgx / static_cast<float>(d);
    for (std::int64_t i = 0; i < d; ++i) {
      dx[r * d + i] = a->rstd[r] * ((g[i] - a_mean) - xhat[i] * b_mean);
    }
  }
  for (std::int64_t i = 0; i < d; ++i) {
    if (dgamma != nullptr) dgamma[i] = sum_dgamma[i];
    if (dbeta != nullptr) dbeta[i] = sum_dbeta[i];
  }
  return 0;
}

const lnv_kernel kKernels[] = {
    {sizeof(lnv_kernel), "f32/two_pass_scaled", LNV_LAYER_NORM, LNV_F32, LNV_F32, LNV_F32, &Forward,
     &Backward, LNV_ALGO_UNKNOWN, LNV_REDUCTION_SERIAL, 0, 0.0, 0.0},
};

const lnv_plugin kPlugin = {sizeof(lnv_plugin), LNV_PLUGIN_ABI_MAJOR, 0, 1, kKernels};

}  // namespace

extern "C" __attribute__((visibility("default"))) const lnv_plugin* lnv_plugin_get(
    uint32_t host_abi_major) {
  return host_abi_major == LNV_PLUGIN_ABI_MAJOR ? &kPlugin : nullptr;
}
