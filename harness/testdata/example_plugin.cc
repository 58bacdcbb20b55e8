// A plugin as a user would write one (C ABI, impls/plugin/lnv_plugin.h),
// used by check_test to run ln_check's path for plugins end to end: two
// fp32 LayerNorm kernels with float accumulation, judged under the generic
// bound (kUnknown: the loosest stable model, serial, k = d - 1) over the full
// finite range, which a plugin claims. So a row with max|x| >= 2 is scaled by
// 2^-e (e = ilogb(max|x|)) before its statistics: exact, and then no square
// or sum of squares can overflow; eps is scaled by 2^-2e alike.
//   f32/two_pass: serial two-pass forward, and the backward from the saved
//     mean/rstd.
//   f32/welford:  Welford/West updating, forward only.
#include <cmath>
#include <cstdint>

#include "impls/plugin/lnv_plugin.h"

namespace {

template <bool kWelford>
int Forward(const lnv_forward_args* a) {
  if (a == nullptr || a->d < 1 || a->rows < 0 || a->x == nullptr || a->y == nullptr) return 1;
  const auto* x = static_cast<const float*>(a->x);
  const auto* gamma = static_cast<const float*>(a->gamma);
  const auto* beta = static_cast<const float*>(a->beta);
  auto* y = static_cast<float*>(a->y);
  const float n = static_cast<float>(a->d);
  for (int64_t r = 0; r < a->rows; ++r) {
    const float* xr = x + r * a->d;
    float max_abs = 0;
    for (int64_t i = 0; i < a->d; ++i) max_abs = std::fmax(max_abs, std::fabs(xr[i]));
    const int e = std::isfinite(max_abs) && max_abs >= 2 ? std::ilogb(max_abs) : 0;
    auto xs = [&](int64_t i) { return std::ldexp(xr[i], -e); };  // exact
    float mean = 0, var = 0;
    if (kWelford) {
      float m2 = 0;
      for (int64_t i = 0; i < a->d; ++i) {
        const float delta = xs(i) - mean;
        mean = mean + delta / static_cast<float>(i + 1);
        m2 = m2 + delta * (xs(i) - mean);
      }
      var = m2 / n;
    } else {
      float s = 0;
      for (int64_t i = 0; i < a->d; ++i) s = s + xs(i);
      mean = s / n;
      float m2 = 0;
      for (int64_t i = 0; i < a->d; ++i) m2 = m2 + (xs(i) - mean) * (xs(i) - mean);
      var = m2 / n;
    }
    const float rstd = 1.0f / std::sqrt(var + std::ldexp(a->eps, -2 * e));
    for (int64_t i = 0; i < a->d; ++i) {
      float v = (xs(i) - mean) * rstd;
      if (gamma != nullptr) v = v * gamma[i];
      if (beta != nullptr) v = v + beta[i];
      y[r * a->d + i] = v;
    }
    if (a->mean != nullptr) a->mean[r] = std::ldexp(mean, e);
    if (a->rstd != nullptr) a->rstd[r] = std::ldexp(rstd, -e);
  }
  return 0;
}

int Backward(const lnv_backward_args* a) {
  if (a == nullptr || a->mean == nullptr || a->rstd == nullptr || a->dx == nullptr) return 1;
  const auto* x = static_cast<const float*>(a->x);
  const auto* gamma = static_cast<const float*>(a->gamma);
  const auto* dy = static_cast<const float*>(a->dy);
  auto* dx = static_cast<float*>(a->dx);
  auto* dgamma = static_cast<float*>(a->dgamma);
  auto* dbeta = static_cast<float*>(a->dbeta);
  const float n = static_cast<float>(a->d);
  for (int64_t i = 0; i < a->d; ++i) {
    if (dgamma != nullptr) dgamma[i] = 0;
    if (dbeta != nullptr) dbeta[i] = 0;
  }
  for (int64_t r = 0; r < a->rows; ++r) {
    const float* xr = x + r * a->d;
    const float* dyr = dy + r * a->d;
    float sa = 0, sb = 0;
    for (int64_t i = 0; i < a->d; ++i) {
      const float xh = (xr[i] - a->mean[r]) * a->rstd[r];
      const float g = gamma != nullptr ? dyr[i] * gamma[i] : dyr[i];
      sa = sa + g;
      sb = sb + g * xh;
      if (dgamma != nullptr) dgamma[i] = dgamma[i] + dyr[i] * xh;
      if (dbeta != nullptr) dbeta[i] = dbeta[i] + dyr[i];
    }
    const float ma = sa / n, mb = sb / n;
    for (int64_t i = 0; i < a->d; ++i) {
      const float xh = (xr[i] - a->mean[r]) * a->rstd[r];
      const float g = gamma != nullptr ? dyr[i] * gamma[i] : dyr[i];
      dx[r * a->d + i] = a->rstd[r] * ((g - ma) - xh * mb);
    }
  }
  return 0;
}

const lnv_kernel kKernels[] = {
    {sizeof(lnv_kernel), "f32/two_pass", LNV_LAYER_NORM, LNV_F32, LNV_F32, LNV_F32, &Forward<false>,
     &Backward},
    {sizeof(lnv_kernel), "f32/welford", LNV_LAYER_NORM, LNV_F32, LNV_F32, LNV_F32, &Forward<true>,
     nullptr},
};

const lnv_plugin kPlugin = {sizeof(lnv_plugin), LNV_PLUGIN_ABI_MAJOR, 0, 2, kKernels};

}  // namespace

extern "C" __attribute__((visibility("default"))) const lnv_plugin* lnv_plugin_get(
    uint32_t host_abi_major) {
  return host_abi_major == LNV_PLUGIN_ABI_MAJOR ? &kPlugin : nullptr;
}
