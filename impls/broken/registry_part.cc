// Negative controls beyond the one-pass variance (a scalar reference,
// impls/cpu/one_pass.h): two-pass kernels with one realistic bug each, held
// to the two-pass serial bound (the sum-of-squares bound for the RMSNorm one).
// Every entry must be caught; its header says which bug it imitates and which
// property catches it.
#include <string>

#include "impls/broken/batch_statistics.h"
#include "impls/broken/double_first_chunk.h"
#include "impls/broken/drop_last_element.h"
#include "impls/broken/drop_past_power_of_two.h"
#include "impls/broken/dx_without_xhat_term.h"
#include "impls/broken/eps_in_half.h"
#include "impls/broken/eps_outside_sqrt.h"
#include "impls/broken/first_half_statistics.h"
#include "impls/broken/odd_last_row.h"
#include "impls/broken/rms_skips_infinities.h"
#include "impls/broken/unbiased_variance.h"
#include "impls/cpu/valid_range.h"
#include "impls/registry_parts.h"

namespace lnv {
namespace {

ImplInfo Broken(const char* name, DType dtype, ForwardFn forward, BackwardFn backward,
                const char* source) {
  ImplInfo info;
  info.name = std::string(DTypeName(dtype)) + "/" + name + "/cpu-broken";
  info.norm = Norm::kLayerNorm;
  info.x_dtype = dtype;
  info.param_dtype = dtype;
  info.acc_dtype = DType::kF32;
  info.algorithm = Algorithm::kTwoPass;
  info.reduction = Reduction::kSerial;
  info.bound_algorithm = Algorithm::kTwoPass;
  info.status = ImplStatus::kNegativeControl;
  info.max_row_sumsq = cpu::ScalarMaxRowSumsq(dtype);
  info.max_backward_weight = cpu::ScalarMaxBackwardWeight(dtype);
  info.forward = forward;
  info.backward = backward;
  info.source = source;
  return info;
}

// An RMSNorm control: every RMSNorm algorithm is bounded by the sum-of-squares
// model, whatever bound_algorithm names (harness/bounds.cc).
ImplInfo BrokenRms(const char* name, ForwardFn forward, BackwardFn backward, const char* source) {
  ImplInfo info = Broken(name, DType::kF32, forward, backward, source);
  info.norm = Norm::kRmsNorm;
  info.algorithm = Algorithm::kSumOfSquares;
  return info;
}

}  // namespace

void AppendBrokenImpls(std::vector<ImplInfo>* impls) {
  impls->push_back(Broken("unbiased_variance", DType::kF32, &broken::UnbiasedVarianceForward,
                          &broken::UnbiasedVarianceBackward, "impls/broken/unbiased_variance.h"));
  impls->push_back(Broken("eps_outside_sqrt", DType::kF32, &broken::EpsOutsideSqrtForward,
                          &broken::EpsOutsideSqrtBackward, "impls/broken/eps_outside_sqrt.h"));
  impls->push_back(Broken("dx_without_xhat_term", DType::kF32, &broken::DxWithoutXhatTermForward,
                          &broken::DxWithoutXhatTermBackward,
                          "impls/broken/dx_without_xhat_term.h"));
  impls->push_back(Broken("batch_statistics", DType::kF32, &broken::BatchStatisticsForward,
                          &broken::BatchStatisticsBackward, "impls/broken/batch_statistics.h"));
  impls->push_back(Broken("eps_in_half", DType::kF16, &broken::EpsInHalfForward,
                          &broken::EpsInHalfBackward, "impls/broken/eps_in_half.h"));
  // Elements dropped or repeated, rows mixed up: the input families with
  // structure along the row and across rows (ramp, one_outlier, rows_differ,
  // ...) must catch them where iid rows cannot.
  impls->push_back(Broken("drop_last_element", DType::kF32, &broken::DropLastElementForward,
                          &broken::DropLastElementBackward, "impls/broken/drop_last_element.h"));
  impls->push_back(Broken("drop_past_power_of_two", DType::kF32, &broken::DropPastPowerOfTwoForward,
                          &broken::DropPastPowerOfTwoBackward,
                          "impls/broken/drop_past_power_of_two.h"));
  impls->push_back(Broken("double_first_chunk", DType::kF32, &broken::DoubleFirstChunkForward,
                          &broken::DoubleFirstChunkBackward, "impls/broken/double_first_chunk.h"));
  impls->push_back(Broken("odd_last_row", DType::kF32, &broken::OddLastRowForward,
                          &broken::OddLastRowBackward, "impls/broken/odd_last_row.h"));
  // Within the worst-case bound at d ~ 2^17, beyond what any correct kernel
  // gives on random data: the statistical tier (beyond_typical) catches it.
  impls->push_back(Broken("first_half_statistics", DType::kF32, &broken::FirstHalfStatisticsForward,
                          &broken::FirstHalfStatisticsBackward,
                          "impls/broken/first_half_statistics.h"));
  // A row holding +-inf normalized as if it were finite: the special-value
  // table (oracle/oracle.h) must catch finite, nonzero garbage on it.
  impls->push_back(BrokenRms("rms_skips_infinities", &broken::RmsSkipsInfinitiesForward,
                             &broken::RmsSkipsInfinitiesBackward,
                             "impls/broken/rms_skips_infinities.h"));
}

}  // namespace lnv
