#include "impls/cpu/fast/eigen_layer_norm.h"

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "impls/cpu/fast/driver.h"

namespace lnv::fast {
namespace {

template <DType kX>
using StorageOf =
    std::conditional_t<kX == DType::kF32, float,
                       std::conditional_t<kX == DType::kBF16, Eigen::bfloat16, Eigen::half>>;

template <typename T>
using RowMajor = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowF = Eigen::Array<float, 1, Eigen::Dynamic>;

bool ShapeIsValid(std::int64_t rows, std::int64_t d) {
  return d >= 1 && rows >= 0 && rows <= std::numeric_limits<std::int64_t>::max() / d;
}

struct Stats {
  float mean;
  float rstd;
};

Stats RowStats(const RowF& xr, float eps) {
  const float mean = xr.mean();
  const float var = (xr - mean).square().mean();
  return {mean, 1.f / std::sqrt(var + eps)};
}

template <typename T>
RowF ParamsAsFloat(const void* p, std::int64_t d) {
  return Eigen::Map<const Eigen::Array<T, 1, Eigen::Dynamic>>(static_cast<const T*>(p), d)
      .template cast<float>();
}

}  // namespace

template <DType kX>
int EigenLayerNorm::Forward(const ForwardArgs* a) {
  using T = StorageOf<kX>;
  if (a == nullptr || !ShapeIsValid(a->rows, a->d) || a->x == nullptr || a->y == nullptr) {
    return kInvalidArgs;
  }
  const std::int64_t d = a->d;
  const Eigen::Map<const RowMajor<T>> x(static_cast<const T*>(a->x), a->rows, d);
  Eigen::Map<RowMajor<T>> y(static_cast<T*>(a->y), a->rows, d);
  const RowF gamma = a->gamma != nullptr ? ParamsAsFloat<T>(a->gamma, d) : RowF();
  const RowF beta = a->beta != nullptr ? ParamsAsFloat<T>(a->beta, d) : RowF();
  for (std::int64_t r = 0; r < a->rows; ++r) {
    const RowF xr = x.row(r).template cast<float>();
    const Stats st = RowStats(xr, a->eps);
    RowF out = (xr - st.mean) * st.rstd;
    if (a->gamma != nullptr) out = out * gamma;
    if (a->beta != nullptr) out = out + beta;
    y.row(r) = out.template cast<T>();
    if (a->mean != nullptr) a->mean[r] = st.mean;
    if (a->rstd != nullptr) a->rstd[r] = st.rstd;
  }
  return kOk;
}

template <DType kX>
int EigenLayerNorm::Backward(const BackwardArgs* a) {
  using T = StorageOf<kX>;
  if (a == nullptr || !ShapeIsValid(a->rows, a->d) || a->x == nullptr || a->dy == nullptr ||
      a->dx == nullptr) {
    return kInvalidArgs;
  }
  const std::int64_t d = a->d;
  const Eigen::Map<const RowMajor<T>> x(static_cast<const T*>(a->x), a->rows, d);
  const Eigen::Map<const RowMajor<T>> dy(static_cast<const T*>(a->dy), a->rows, d);
  Eigen::Map<RowMajor<T>> dx(static_cast<T*>(a->dx), a->rows, d);
  const RowF gamma = a->gamma != nullptr ? ParamsAsFloat<T>(a->gamma, d) : RowF();
  RowF dgamma = RowF::Zero(d);
  RowF dbeta = RowF::Zero(d);
  const bool saved = a->mean != nullptr && a->rstd != nullptr;
  for (std::int64_t r = 0; r < a->rows; ++r) {
    const RowF xr = x.row(r).template cast<float>();
    const Stats st = saved ? Stats{a->mean[r], a->rstd[r]} : RowStats(xr, a->eps);
    const RowF xhat = (xr - st.mean) * st.rstd;
    const RowF dyr = dy.row(r).template cast<float>();
    const RowF g = a->gamma != nullptr ? RowF(dyr * gamma) : dyr;
    const float mean_g = g.mean();
    const float mean_gx = (g * xhat).mean();
    dx.row(r) = (st.rstd * ((g - mean_g) - xhat * mean_gx)).template cast<T>();
    if (a->dgamma != nullptr) dgamma += dyr * xhat;
    if (a->dbeta != nullptr) dbeta += dyr;
  }
  using Param = Eigen::Map<Eigen::Array<T, 1, Eigen::Dynamic>>;
  if (a->dgamma != nullptr) Param(static_cast<T*>(a->dgamma), d) = dgamma.template cast<T>();
  if (a->dbeta != nullptr) Param(static_cast<T*>(a->dbeta), d) = dbeta.template cast<T>();
  return kOk;
}

template int EigenLayerNorm::Forward<DType::kF32>(const ForwardArgs*);
template int EigenLayerNorm::Forward<DType::kBF16>(const ForwardArgs*);
template int EigenLayerNorm::Forward<DType::kF16>(const ForwardArgs*);
template int EigenLayerNorm::Backward<DType::kF32>(const BackwardArgs*);
template int EigenLayerNorm::Backward<DType::kBF16>(const BackwardArgs*);
template int EigenLayerNorm::Backward<DType::kF16>(const BackwardArgs*);

}  // namespace lnv::fast
