// A plugin (impls/plugin/lnv_plugin.h, ABI 1) for ln_report's own tests: one
// fp32 LayerNorm kernel that meets the generic bound (two-pass in double,
// rounded once to float) and two that must not (its mean divides by d - 1;
// its statistics drop the elements of rows longer than 65535 past the
// 65535th), forward only. Built as a shared library by reports/CMakeLists.txt.
#include <cmath>
#include <cstdint>

#include "impls/plugin/lnv_plugin.h"

namespace {

// The elements the statistics see: all of them, or (the drops-tail kernel)
// at most 65535, as a 16-bit element counter would.
std::int64_t Seen(std::int64_t d, bool drops_tail) { return drops_tail && d > 65535 ? 65535 : d; }

int Forward(const lnv_forward_args* a, bool off_by_one, bool drops_tail = false) {
  const auto* x = static_cast<const float*>(a->x);
  const auto* gamma = static_cast<const float*>(a->gamma);
  const auto* beta = static_cast<const float*>(a->beta);
  auto* y = static_cast<float*>(a->y);
  for (std::int64_t r = 0; r < a->rows; ++r) {
    const float* row = x + r * a->d;
    const std::int64_t n = Seen(a->d, drops_tail);
    double sum = 0;
    for (std::int64_t i = 0; i < n; ++i) sum += row[i];
    const double mean = sum / static_cast<double>(off_by_one && n > 1 ? n - 1 : n);
    double ss = 0;
    for (std::int64_t i = 0; i < n; ++i) ss += (row[i] - mean) * (row[i] - mean);
    const double rstd = 1.0 / std::sqrt(ss / static_cast<double>(n) + a->eps);
    for (std::int64_t i = 0; i < a->d; ++i) {
      const double g = gamma != nullptr ? gamma[i] : 1.0;
      const double b = beta != nullptr ? beta[i] : 0.0;
      y[r * a->d + i] = static_cast<float>(g * ((row[i] - mean) * rstd) + b);
    }
    if (a->mean != nullptr) a->mean[r] = static_cast<float>(mean);
    if (a->rstd != nullptr) a->rstd[r] = static_cast<float>(rstd);
  }
  return 0;
}

int Good(const lnv_forward_args* a) { return Forward(a, false); }
int Broken(const lnv_forward_args* a) { return Forward(a, true); }
int DropsTail(const lnv_forward_args* a) { return Forward(a, false, true); }

const lnv_kernel kKernels[] = {
    {sizeof(lnv_kernel), "f32/two_pass_double/cpu", LNV_LAYER_NORM, LNV_F32, LNV_F32, LNV_F32,
     &Good, nullptr, LNV_ALGO_UNKNOWN, LNV_REDUCTION_SERIAL, 0, 0.0, 0.0},
    {sizeof(lnv_kernel), "f32/mean_off_by_one/cpu", LNV_LAYER_NORM, LNV_F32, LNV_F32, LNV_F32,
     &Broken, nullptr, LNV_ALGO_UNKNOWN, LNV_REDUCTION_SERIAL, 0, 0.0, 0.0},
    {sizeof(lnv_kernel), "f32/drops_tail_past_65535/cpu", LNV_LAYER_NORM, LNV_F32, LNV_F32, LNV_F32,
     &DropsTail, nullptr, LNV_ALGO_UNKNOWN, LNV_REDUCTION_SERIAL, 0, 0.0, 0.0},
};
const lnv_plugin kPlugin = {sizeof(lnv_plugin), LNV_PLUGIN_ABI_MAJOR, 0, 3, kKernels};

}  // namespace

extern "C" __attribute__((visibility("default"))) const lnv_plugin* lnv_plugin_get(
    std::uint32_t host_abi_major) {
  return host_abi_major == LNV_PLUGIN_ABI_MAJOR ? &kPlugin : nullptr;
}
