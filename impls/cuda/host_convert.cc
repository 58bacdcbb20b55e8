// The host side of storage.h's conversions, through Eigen::bfloat16 and
// Eigen::half (round-to-nearest-even, as impls/dtype.h uses them).
#include <Eigen/Core>
#include <cstdint>

#include "impls/cuda/storage.h"

namespace lnv::cuda {

float HostBf16ToFloat(std::uint16_t bits) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(bits));
}

std::uint16_t HostFloatToBf16(float v) {
  return Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(v));
}

float HostF16ToFloat(std::uint16_t bits) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
}

std::uint16_t HostFloatToF16(float v) {
  return Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(v));
}

}  // namespace lnv::cuda
