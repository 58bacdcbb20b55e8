// A row's finished statistics and rstd, shared by the CUDA kernels and their
// emulation: rstd = 1 / sqrt(var + eps), two IEEE operations after the
// addition (--prec-div/--prec-sqrt on the device, SSE on the host).
#ifndef LNV_IMPLS_CUDA_ROW_STATS_H_
#define LNV_IMPLS_CUDA_ROW_STATS_H_

#include <cmath>

#include "impls/cuda/portable.h"
#include "impls/cuda/storage.h"

namespace lnv::cuda {

struct RowStatsF {
  float mean = 0.0f;  // 0 for RMSNorm
  float rstd = 0.0f;
};

// A row holding +-inf or NaN has a non-finite variance; its contract is a
// NaN row (the same rule as impls/cpu/scalar_common.h's RowRstd), so rstd is
// NaN rather than 1/sqrt(inf) = 0.
LNV_HD inline float RowRstd(float var, float eps) {
  if (!IsFinite(var)) return BitsToFloat(F32Storage::kCanonicalNanBits);
#if defined(__CUDA_ARCH__)
  return 1.0f / sqrtf(var + eps);
#else
  return 1.0f / std::sqrt(var + eps);
#endif
}

}  // namespace lnv::cuda

#endif  // LNV_IMPLS_CUDA_ROW_STATS_H_
