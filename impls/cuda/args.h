// Argument checks and return codes shared by the CUDA kernels' launchers and
// their host emulation, so both refuse exactly the same calls.
#ifndef LNV_IMPLS_CUDA_ARGS_H_
#define LNV_IMPLS_CUDA_ARGS_H_

#include <cstdint>
#include <limits>

#include "impls/api.h"
#include "impls/cuda/reduction.h"

namespace lnv::cuda {

// Return codes (the ABI fixes only 0 = success).
inline constexpr int kOk = 0;
inline constexpr int kInvalidArgs =
    1;  // null required pointer, d out of range, beta for RMSNorm, ...
inline constexpr int kOutOfMemory = 2;  // scratch (host or device) allocation failed
inline constexpr int kCudaError = 3;    // a CUDA runtime call or launch failed

inline bool ShapeIsValid(std::int64_t rows, std::int64_t d) {
  if (d < 1 || d > kMaxD || rows < 0) return false;
  return rows <= std::numeric_limits<std::int64_t>::max() / d;
}

inline int CheckForward(const ForwardArgs* a, Norm norm) {
  if (a == nullptr || !ShapeIsValid(a->rows, a->d)) return kInvalidArgs;
  if (a->rows > 0 && (a->x == nullptr || a->y == nullptr)) return kInvalidArgs;
  if (norm == Norm::kRmsNorm && a->beta != nullptr) return kInvalidArgs;  // no beta (ABI)
  return kOk;
}

// The backward needs the forward's statistics: rstd, and mean for LayerNorm.
inline int CheckBackward(const BackwardArgs* a, Norm norm) {
  if (a == nullptr || !ShapeIsValid(a->rows, a->d)) return kInvalidArgs;
  if (norm == Norm::kRmsNorm && a->dbeta != nullptr) return kInvalidArgs;
  if (a->rows == 0) return kOk;
  if (a->x == nullptr || a->dy == nullptr || a->dx == nullptr || a->rstd == nullptr) {
    return kInvalidArgs;
  }
  if (norm == Norm::kLayerNorm && a->mean == nullptr) return kInvalidArgs;
  return kOk;
}

}  // namespace lnv::cuda

#endif  // LNV_IMPLS_CUDA_ARGS_H_
